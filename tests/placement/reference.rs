//! The placement core against the published behaviour of the original
//! implementations: libketama's continuum, Envoy's Maglev tables and the
//! jump consistent hash reference values.

use std::collections::BTreeMap;

use ringd::placement::jump::jump_hash;
use ringd::placement::ketama;
use ringd::placement::{Algorithm, Node, NodeId, Placement, RingConfig, Weight};
use serde_json::Value;

fn reference(name: &str) -> Value {
    let path = format!(
        "{}/tests/placement/vectors/reference/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn node(id: &str, weight: u64) -> Node {
    Node::new(NodeId::new(id).unwrap()).with_weight(Weight::new(weight).unwrap())
}

/// Nodes from a reference file's list, naming the id and weight fields.
fn nodes_from(list: &Value, id: &str, weight: &str) -> Vec<Node> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|n| node(n[id].as_str().unwrap(), n[weight].as_u64().unwrap()))
        .collect()
}

#[test]
fn ketama_matches_libketama_on_every_reference_case() {
    let doc = reference("libketama.json");
    let cases = doc["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 6);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let servers = nodes_from(&case["servers"], "addr", "memory");
        let p = Placement::build(&RingConfig::new(Algorithm::Ketama), &servers).unwrap();

        // Point counts, including the float quirks (156 for 61 servers).
        let mut per_node: BTreeMap<&str, u64> = BTreeMap::new();
        for (_, id) in p.points().unwrap() {
            *per_node.entry(id.as_str()).or_default() += 1;
        }
        for (s, expected) in servers
            .iter()
            .zip(case["points_per_server"].as_array().unwrap())
        {
            assert_eq!(
                per_node.get(s.id.as_str()).copied().unwrap_or(0),
                expected.as_u64().unwrap(),
                "{name}: points of {}",
                s.id
            );
        }
        assert_eq!(
            p.points().unwrap().count() as u64,
            case["numpoints"].as_u64().unwrap(),
            "{name}"
        );

        // The head of the sorted continuum, ties in libketama's order.
        let head: Vec<(u64, String)> = p
            .points()
            .unwrap()
            .take(case["first_points"].as_array().unwrap().len())
            .map(|(pt, id)| (pt, id.to_string()))
            .collect();
        let expected_head: Vec<(u64, String)> = case["first_points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|fp| {
                (
                    fp["point"].as_u64().unwrap(),
                    fp["addr"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        assert_eq!(head, expected_head, "{name}: first points");

        // Collisions: the tied points appear in server-list order.
        let points: Vec<(u64, String)> = p
            .points()
            .unwrap()
            .map(|(pt, id)| (pt, id.to_string()))
            .collect();
        for c in case["collisions"].as_array().unwrap() {
            let at = c["point"].as_u64().unwrap();
            let owners: Vec<&str> = points
                .iter()
                .filter(|(pt, _)| *pt == at)
                .map(|(_, id)| id.as_str())
                .collect();
            let expected: Vec<&str> = c["addrs_in_sorted_order"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap())
                .collect();
            assert_eq!(owners, expected, "{name}: tie at {at}");
        }

        // Every lookup, including wrap-around and tie probes.
        let lookups = case["lookups"].as_array().unwrap();
        assert!(lookups.len() >= 209, "{name}");
        for l in lookups {
            let key = l["key"].as_str().unwrap();
            assert_eq!(
                u64::from(ketama::key_hash(key.as_bytes())),
                l["hash"].as_u64().unwrap(),
                "{name}: hash of {key:?}"
            );
            assert_eq!(
                p.owner(key.as_bytes()).unwrap().as_str(),
                l["addr"].as_str().unwrap(),
                "{name}: owner of {key:?}"
            );
        }
    }
}

#[test]
fn ketama_tie_probes_land_on_the_first_listed_server() {
    let doc = reference("libketama.json");
    let case = doc["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "colliding-2000")
        .unwrap();
    let servers: Vec<Node> = (0..2000)
        .map(|i| node(&format!("node-{i:04}"), 1))
        .collect();
    let p = Placement::build(&RingConfig::new(Algorithm::Ketama), &servers).unwrap();
    let collisions = case["collisions"].as_array().unwrap();
    assert_eq!(collisions.len(), 10);
    for c in collisions {
        let key = c["probe_key"].as_str().unwrap();
        assert_eq!(
            p.owner(key.as_bytes()).unwrap().as_str(),
            c["probe_addr"].as_str().unwrap()
        );
        assert_eq!(
            c["probe_addr"].as_str().unwrap(),
            c["addrs_in_sorted_order"][0].as_str().unwrap()
        );
    }
}

#[test]
fn maglev_reproduces_envoys_published_tables() {
    let doc = reference("envoy-maglev.json");
    let cases = doc["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 6);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let hosts = nodes_from(&case["hosts"], "hashed", "weight");
        let mut config = RingConfig::new(Algorithm::Maglev);
        config.table_size = case["table_size"].as_u64().unwrap();
        let p = Placement::build(&config, &hosts).unwrap();
        // Envoy's indices refer to the hosts as listed; map through ids.
        let table: Vec<&str> = p
            .maglev_table()
            .unwrap()
            .iter()
            .map(|&i| p.nodes()[i as usize].id.as_str())
            .collect();
        let expected: Vec<&str> = case["expected_table"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| hosts[i.as_u64().unwrap() as usize].id.as_str())
            .collect();
        assert_eq!(table, expected, "{name}");
    }
}

#[test]
fn jump_matches_published_reference_values() {
    let doc = reference("jump.json");
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() >= 100);
    assert!(cases
        .iter()
        .any(|c| c["key"] == "256" && c["buckets"] == 1024 && c["expected"] == 520));
    for c in cases {
        // Keys are u64 and written as decimal strings (spec 12), so that
        // readers with binary64 numbers do not round those above 2^53.
        let key: u64 = c["key"].as_str().unwrap().parse().unwrap();
        let buckets = c["buckets"].as_u64().unwrap() as u32;
        assert_eq!(
            u64::from(jump_hash(key, buckets)),
            c["expected"].as_u64().unwrap(),
            "jump({key}, {buckets})"
        );
    }
}
