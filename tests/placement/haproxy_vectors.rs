//! The `haproxy` vectors beyond the shapes every algorithm has
//! (`tests/placement/vectors/haproxy-*.json`): each key hash with and
//! without avalanche, 1 to 40 servers at weights 1 to 10, server ids with
//! gaps left by removals, and a replacement that takes over an id through
//! its `hash_key`. The ids are inputs of each file (`server_ids`), as a
//! snapshot carries them.
//!
//! Regenerate with `RINGD_BLESS=1 cargo test --release --test placement
//! haproxy_vectors::` after an intended change, and say why in the commit.

use std::collections::BTreeMap;

use ringd::placement::{Algorithm, HashFunction, HashKey, Node, NodeId, Placement, RingConfig};
use ringd::ring::{NodeRecord, ServerIds};
use serde_json::Value;

use super::vectors::{node, vector_of};

/// `(file name, hash, avalanche, node set)`.
const FILES: [(&str, HashFunction, bool, &str); 10] = [
    (
        "haproxy-sdbm-avalanche-40",
        HashFunction::Sdbm,
        true,
        "forty",
    ),
    ("haproxy-sdbm", HashFunction::Sdbm, false, "twelve"),
    ("haproxy-djb2", HashFunction::Djb2, false, "twelve"),
    ("haproxy-djb2-avalanche", HashFunction::Djb2, true, "twelve"),
    ("haproxy-wt6", HashFunction::Wt6, false, "twelve"),
    ("haproxy-wt6-avalanche", HashFunction::Wt6, true, "twelve"),
    ("haproxy-crc32", HashFunction::Crc32, false, "twelve"),
    (
        "haproxy-crc32-avalanche",
        HashFunction::Crc32,
        true,
        "twelve",
    ),
    ("haproxy-removals", HashFunction::Sdbm, true, "removals"),
    (
        "haproxy-replacement",
        HashFunction::Sdbm,
        true,
        "replacement",
    ),
];

fn records(nodes: &[Node]) -> Vec<NodeRecord> {
    let mut out: Vec<NodeRecord> = nodes
        .iter()
        .map(|n| {
            let mut r = NodeRecord::new(n.id.clone());
            r.weight = n.weight;
            r.hash_key = n.hash_key.clone();
            r.state = n.state;
            r
        })
        .collect();
    out.sort_by(|a, b| a.id.cmp(&b.id));
    out
}

/// `count` servers `s-01`…, weights cycling through 1 to 10.
fn servers(count: usize) -> Vec<Node> {
    (1..=count)
        .map(|i| node(&format!("s-{i:02}"), (i as u64 - 1) % 10 + 1))
        .collect()
}

/// The nodes and their ids: fresh sets are numbered from 1 in id order;
/// the others go through the ring's id rules (`ServerIds::evolve`).
fn node_set(name: &str) -> (Vec<Node>, BTreeMap<NodeId, u32>) {
    match name {
        "forty" | "twelve" => {
            let nodes = servers(if name == "forty" { 40 } else { 12 });
            let ids = ServerIds::initial(&records(&nodes)).ids;
            (nodes, ids)
        }
        "removals" => {
            // Twelve servers; s-03, s-07 and s-12 are removed and s-13,
            // s-14 join: ids 3, 7 and 12 are gone, the new ones take 13, 14.
            let before = servers(12);
            let mut after: Vec<Node> = before
                .iter()
                .filter(|n| !["s-03", "s-07", "s-12"].contains(&n.id.as_str()))
                .cloned()
                .collect();
            after.extend([node("s-13", 4), node("s-14", 9)]);
            let ids = ServerIds::initial(&records(&before))
                .evolve(&records(&before), &records(&after))
                .unwrap()
                .ids;
            (after, ids)
        }
        _ => {
            // `s-05` is replaced by `spare-1` (hash_key `s-05`) in one
            // change: `spare-1` takes id 5, and so every point of `s-05`.
            let before = servers(8);
            let mut after: Vec<Node> = before
                .iter()
                .filter(|n| n.id.as_str() != "s-05")
                .cloned()
                .collect();
            after.push(node("spare-1", 5).with_hash_key(HashKey::new("s-05").unwrap()));
            let ids = ServerIds::initial(&records(&before))
                .evolve(&records(&before), &records(&after))
                .unwrap()
                .ids;
            (after, ids)
        }
    }
}

fn computed(name: &str, hash: HashFunction, avalanche: bool, set: &str) -> Value {
    let mut config = RingConfig::new(Algorithm::Haproxy);
    config.hash = hash;
    config.avalanche = avalanche;
    let (nodes, ids) = node_set(set);
    let p = Placement::build_with_server_ids(&config, &nodes, &ids).unwrap();
    let shape = &name["haproxy-".len()..];
    vector_of(Algorithm::Haproxy, shape, &config, &nodes, &p, 200, 50)
}

#[test]
fn haproxy_vectors_are_reproduced_exactly() {
    let dir = format!("{}/tests/placement/vectors", env!("CARGO_MANIFEST_DIR"));
    let update = std::env::var_os("RINGD_BLESS").is_some_and(|v| v == "1");
    for (name, hash, avalanche, set) in FILES {
        let path = format!("{dir}/{name}.json");
        let v = computed(name, hash, avalanche, set);
        if update {
            std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap() + "\n").unwrap();
        }
        let stored: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(
            |e| panic!("{path}: {e}; run RINGD_BLESS=1 cargo test --release --test placement haproxy_vectors::"),
        ))
        .unwrap();
        assert!(
            stored == v,
            "{path} differs from what the code computes: placement changed. \
             If intended, regenerate with RINGD_BLESS=1 cargo test --release --test placement haproxy_vectors::"
        );
    }
}

#[test]
fn haproxy_vectors_say_what_they_promise() {
    let load = |name: &str| -> Value {
        let path = format!(
            "{}/tests/placement/vectors/{name}.json",
            env!("CARGO_MANIFEST_DIR")
        );
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    let removals = load("haproxy-removals");
    let ids: Vec<u64> = removals["server_ids"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(ids, [1, 2, 4, 5, 6, 8, 9, 10, 11, 13, 14]);
    let replaced = load("haproxy-replacement");
    assert_eq!(replaced["server_ids"]["spare-1"], 5);
    // The replacement owns exactly what `s-05` owned before it.
    let before = load("haproxy-sdbm-avalanche-40");
    assert_eq!(before["config"]["avalanche"], true);
    assert_eq!(load("haproxy-sdbm")["config"]["avalanche"], false);
    assert_eq!(before["ownership"]["nodes"].as_array().unwrap().len(), 40);
}
