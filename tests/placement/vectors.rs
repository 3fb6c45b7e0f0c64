//! Known-answer vectors: one file per algorithm and node-set shape in
//! `tests/placement/vectors/`. The test recomputes every file and fails on any
//! difference, so a change that moves keys cannot slip in unnoticed.
//!
//! After an intended change to placement, regenerate with
//! `RINGD_BLESS=1 cargo test --release --test placement vectors::` and explain
//! the change in the commit.

use ringd::placement::{
    Address, Algorithm, HashKey, Node, NodeId, NodeState, Placement, Ramp, RingConfig, Weight, Zone,
};
use serde_json::{json, Value};

use crate::vector_extras::{extra, EXTRAS};

const SHAPES: [&str; 5] = ["single", "weighted", "zoned", "colliding", "nodes-1000"];

/// The algorithms that take ramps, each with one more file: `ramped`.
const RAMPED: [Algorithm; 5] = [
    Algorithm::Ring,
    Algorithm::Rendezvous,
    Algorithm::Maglev,
    Algorithm::EnvoyRingHash,
    Algorithm::EnvoyMaglev,
];

pub(crate) fn node(id: &str, weight: u64) -> Node {
    Node::new(NodeId::new(id).unwrap()).with_weight(Weight::new(weight).unwrap())
}

/// An address for the `i`-th node of a shape, for the algorithms that
/// place by address: `10.0.x.y:11211`.
pub(crate) fn address(i: usize) -> Address {
    Address::new(format!("10.0.{}.{}:11211", i / 250, i % 250 + 1)).unwrap()
}

/// The node set and config tweaks for each shape; under an algorithm that
/// places by address, every node gets one.
fn shape(name: &str, algorithm: Algorithm) -> (RingConfig, Vec<Node>) {
    let (config, mut nodes) = shape_by_label(name, algorithm);
    if algorithm.needs_address() {
        for (i, n) in nodes.iter_mut().enumerate() {
            n.address.get_or_insert_with(|| address(i));
        }
    }
    (config, nodes)
}

fn shape_by_label(name: &str, algorithm: Algorithm) -> (RingConfig, Vec<Node>) {
    let mut config = RingConfig::new(algorithm);
    // The fewest partitions keep the table's rows readable in the file
    // (set for `table` only: others do not use them, nor write them).
    if algorithm == Algorithm::Table {
        config.partitions = 256;
    }
    let nodes = match name {
        "single" => vec![node("cache-a", 1)],
        "weighted" => {
            let mut v: Vec<Node> = [1, 2, 3, 4, 5, 10]
                .iter()
                .enumerate()
                .map(|(i, &w)| node(&format!("w-{}", i + 1), w))
                .collect();
            // A draining node is listed but owns nothing.
            v.push(node("w-drain", 7).with_state(NodeState::Draining));
            v
        }
        "zoned" => {
            config.zone_aware = true;
            (0..9)
                .map(|i| {
                    let zone = ["us-east-1a", "us-east-1b", "us-east-1c"][i % 3];
                    node(&format!("z-{i}"), 1).with_zone(Zone::new(zone).unwrap())
                })
                .collect()
        }
        "colliding" if algorithm == Algorithm::Nginx => {
            // Two addresses with one equal point (326743374): nginx keeps
            // the point of the server listed first, `original`.
            let at = |a: &str| Address::new(a).unwrap();
            vec![
                node("replacement", 1).with_address(at("10.0.1.71:11211")),
                node("original", 1).with_address(at("10.0.1.249:11211")),
                node("peer-1", 1),
                node("peer-2", 2),
            ]
        }
        "colliding" if algorithm == Algorithm::Twemproxy => {
            // Two server names with one equal point (2115640176): nutcracker
            // keeps equal points in name order, so `replacement`
            // (cache-01214) wins it though `original` comes first by id.
            let at = |a: &str| Address::new(a).unwrap();
            vec![
                node("replacement", 1).with_address(at("cache-01214:11211")),
                node("original", 1).with_address(at("cache-03171:11211")),
                node("peer-1", 1),
                node("peer-2", 2),
            ]
        }
        "colliding" if algorithm.is_xds() => {
            // No two active endpoints may share a label, so the case here
            // is a replacement: `replacement` hashes as the draining
            // `original` and so takes exactly its entries.
            vec![
                node("replacement", 1).with_hash_key(HashKey::new("original").unwrap()),
                node("original", 1).with_state(NodeState::Draining),
                node("peer-1", 1),
                node("peer-2", 2),
            ]
        }
        "colliding" => {
            // Two nodes hash the same label, so every point (or draw) of
            // one coincides with one of the other's: the tie rules decide.
            let shared = HashKey::new("10.0.0.9:11211").unwrap();
            vec![
                node("replacement", 1).with_hash_key(shared.clone()),
                node("original", 1).with_hash_key(shared),
                node("peer-1", 1),
                node("peer-2", 2),
            ]
        }
        "nodes-1000" => (0..1000).map(|i| node(&format!("n-{i:04}"), 1)).collect(),
        "ramped" => {
            // Mid-rollout: one node coming in at 3/10, one weight-2 node
            // going out at 1/4, one at the smallest ramp; the rest all in.
            let ramp = |parts| Ramp::new(parts).unwrap();
            vec![
                node("r-1", 1),
                node("r-2", 2).with_ramp(ramp(16_384)),
                node("r-3", 1),
                node("r-4", 3),
                node("r-new", 1).with_ramp(ramp(19_661)),
                node("r-tiny", 1).with_ramp(ramp(1)),
            ]
        }
        other => panic!("unknown shape {other}"),
    };
    (config, nodes)
}

fn node_json(n: &Node) -> Value {
    let mut v = json!({
        "id": n.id.as_str(),
        "hash_key": n.hash_key.as_ref().map(|k| k.as_str()),
        "weight": n.weight.get(),
        "zone": n.zone.as_ref().map(|z| z.as_str()),
        "state": n.state,
    });
    // Written only below full, as the API does, so the files of unramped
    // nodes stay as they were.
    if !n.ramp.is_full() {
        v["ramp"] = json!(n.ramp.get());
    }
    // Only the algorithms that place by address give nodes one.
    if let Some(a) = &n.address {
        v["address"] = json!(a.as_str());
    }
    v
}

fn vector(algorithm: Algorithm, shape_name: &str) -> Value {
    let (config, nodes) = shape(shape_name, algorithm);
    let p = Placement::build(&config, &nodes).unwrap();
    vector_of(algorithm, shape_name, &config, &nodes, &p, 200, 50)
}

/// The file for a placement: `key_count` generated keys (plus four fixed
/// ones) looked up, the first `list_count` with preference lists.
pub(crate) fn vector_of(
    algorithm: Algorithm,
    shape_name: &str,
    config: &RingConfig,
    nodes: &[Node],
    p: &Placement,
    key_count: usize,
    list_count: usize,
) -> Value {
    let keys: Vec<String> = (0..key_count)
        .map(|i| format!("key-{i}"))
        .chain(
            [
                "",
                "a",
                "user:1234",
                "session/7f3c9a2e-5b1d-4c8e-9f00-0123456789ab",
            ]
            .map(String::from),
        )
        .collect();
    let lookups: Vec<Value> = keys
        .iter()
        .map(|k| {
            json!({
                "key": k,
                "hash": p.key_hash(k.as_bytes()).to_string(),
                "owner": p.owner(k.as_bytes()).map(|o| o.as_str()),
            })
        })
        .collect();
    let preference_lists: Vec<Value> = keys
        .iter()
        .take(list_count)
        .map(|k| {
            let list: Vec<&str> = p
                .preference_list(k.as_bytes(), config.replication_factor as usize)
                .iter()
                .map(|n| n.as_str())
                .collect();
            json!({ "key": k, "replicas": list })
        })
        .collect();
    let mut v = json!({
        "algorithm": algorithm.name(),
        "shape": shape_name,
        // The config as ringd writes it: `table_size` for `maglev` only,
        // `partitions` for `table` only (or wherever set to other than the
        // default).
        "config": config,
        "nodes": nodes.iter().map(node_json).collect::<Vec<_>>(),
        "buckets": p.bucket_order().map(|o| o.iter().map(|s| s.as_ref().map(|id| id.as_str().to_string())).collect::<Vec<_>>()),
        "fingerprint": p.fingerprint().to_string(),
        "ownership": p.ownership(),
        "lookups": lookups,
        "preference_lists": preference_lists,
    });
    // `haproxy` only: the server ids of the active nodes, by node id.
    if let Some(ids) = p.server_ids() {
        let ids: serde_json::Map<String, Value> =
            ids.map(|(n, i)| (n.to_string(), json!(i))).collect();
        v["server_ids"] = Value::Object(ids);
    }
    // `table` only (the other algorithms' files stay as they were): every
    // partition's replicas, primary first, by id.
    if let Some(t) = p.partition_table() {
        let rows: Vec<Vec<&str>> = (0..t.partitions() as usize)
            .map(|i| {
                t.row(i)
                    .iter()
                    .map(|&x| p.nodes()[x as usize].id.as_str())
                    .collect()
            })
            .collect();
        v["table"] = json!(rows);
    }
    v
}

#[test]
fn vectors_are_reproduced_exactly() {
    let dir = format!("{}/tests/placement/vectors", env!("CARGO_MANIFEST_DIR"));
    let update = std::env::var_os("RINGD_BLESS").is_some_and(|v| v == "1");
    let mut checked = 0;
    let files = Algorithm::ALL
        .into_iter()
        .flat_map(|a| SHAPES.map(|s| (a, s)))
        .chain(RAMPED.map(|a| (a, "ramped")));
    {
        for (algorithm, shape_name) in files {
            let path = format!("{dir}/{}-{shape_name}.json", algorithm.name());
            let computed = vector(algorithm, shape_name);
            if update {
                let text = serde_json::to_string_pretty(&computed).unwrap();
                std::fs::write(&path, text + "\n").unwrap();
            }
            let stored: Value = serde_json::from_str(
                &std::fs::read_to_string(&path)
                    .unwrap_or_else(|e| panic!("{path}: {e}; run RINGD_BLESS=1 cargo test --release --test placement vectors::")),
            )
            .unwrap();
            assert!(
                stored == computed,
                "{path} differs from what the code computes: placement changed. \
                 If intended, regenerate with RINGD_BLESS=1 cargo test --release --test placement vectors::"
            );
            checked += 1;
        }
        for (name, algorithm) in EXTRAS {
            let path = format!("{dir}/{name}.json");
            let (config, nodes, p) = extra(name, algorithm);
            let shape_name = &name[algorithm.name().len() + 1..];
            let computed = vector_of(algorithm, shape_name, &config, &nodes, &p, 20, 10);
            if update {
                let text = serde_json::to_string_pretty(&computed).unwrap();
                std::fs::write(&path, text + "\n").unwrap();
            }
            let stored: Value = serde_json::from_str(
                &std::fs::read_to_string(&path)
                    .unwrap_or_else(|e| panic!("{path}: {e}; run RINGD_BLESS=1 cargo test --release --test placement vectors::")),
            )
            .unwrap();
            assert!(
                stored == computed,
                "{path} differs from what the code computes: placement changed. \
                 If intended, regenerate with RINGD_BLESS=1 cargo test --release --test placement vectors::"
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 96);
}

#[test]
fn vectors_cover_the_promised_behaviour() {
    // Spot checks that the stored files say what the shapes intend.
    let load = |name: &str| -> Value {
        let path = format!(
            "{}/tests/placement/vectors/{name}.json",
            env!("CARGO_MANIFEST_DIR")
        );
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    for algorithm in Algorithm::ALL {
        let single = load(&format!("{}-single", algorithm.name()));
        for l in single["lookups"].as_array().unwrap() {
            assert_eq!(l["owner"], "cache-a");
        }
        let weighted = load(&format!("{}-weighted", algorithm.name()));
        for l in weighted["lookups"].as_array().unwrap() {
            assert_ne!(l["owner"], "w-drain", "draining nodes own nothing");
        }
        let zoned = load(&format!("{}-zoned", algorithm.name()));
        for l in zoned["preference_lists"].as_array().unwrap() {
            let zones: std::collections::BTreeSet<char> = l["replicas"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    let i: usize = r.as_str().unwrap()[2..].parse().unwrap();
                    ['a', 'b', 'c'][i % 3]
                })
                .collect();
            assert_eq!(zones.len(), 3, "{}: {l}", algorithm.name());
        }
    }
    // Ramped rendezvous units are weight × ramp; the others' are exact too.
    let ramped = load("rendezvous-ramped");
    let units: Vec<&str> = ramped["ownership"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["units"].as_str().unwrap())
        .collect();
    assert_eq!(units, ["65536", "32768", "65536", "196608", "19661", "1"]);
    let ring = load("ring-ramped");
    assert_eq!(ring["nodes"][5]["ramp"], 1);
    assert_eq!(ring["nodes"][0].get("ramp"), None);

    // The extra files: holes written as null, a node without digests,
    // and rings with nothing active.
    let holes = load("jump-md5-holes");
    assert_eq!(
        holes["buckets"],
        json!(["j-1", "j-1", null, "j-3", null, "j-4"])
    );
    let zero = load("ketama-zero-digests");
    assert_eq!(zero["ownership"]["nodes"][1]["id"], "tiny");
    assert_eq!(zero["ownership"]["nodes"][1]["units"], "0");
    for l in zero["lookups"].as_array().unwrap() {
        assert_eq!(l["owner"], "big");
    }
    for algorithm in Algorithm::ALL {
        let none = load(&format!("{}-no-active", algorithm.name()));
        for l in none["lookups"].as_array().unwrap() {
            assert_eq!(l["owner"], Value::Null);
        }
        for l in none["preference_lists"].as_array().unwrap() {
            assert_eq!(l["replicas"], json!([]));
        }
    }
    assert_eq!(load("ring-md5-vnodes")["config"]["vnodes_per_weight"], 7);
    assert_eq!(
        load("maglev-murmur3-table-size")["config"]["table_size"],
        251
    );
    assert_eq!(
        load("table-murmur3-partitions")["config"]["partitions"],
        512
    );
}
