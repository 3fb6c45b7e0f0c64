//! The small vector files beyond the shapes of `vectors.rs`, each pinning
//! one input the shapes leave at its default.

use ringd::placement::{
    Address, Algorithm, HashFunction, HashKey, HashTag, Node, NodeState, Placement, RingConfig,
};

use crate::vectors::{address, node};

/// The small files beyond the shapes above, each pinning one input the
/// shapes leave at its default: `(file name, algorithm)`.
pub(crate) const EXTRAS: [(&str, Algorithm); 36] = [
    ("ring-md5-vnodes", Algorithm::Ring),
    ("rendezvous-sha256", Algorithm::Rendezvous),
    ("maglev-murmur3-table-size", Algorithm::Maglev),
    ("jump-md5-holes", Algorithm::Jump),
    ("table-murmur3-partitions", Algorithm::Table),
    ("ketama-zero-digests", Algorithm::Ketama),
    ("ring-no-active", Algorithm::Ring),
    ("ketama-no-active", Algorithm::Ketama),
    ("maglev-no-active", Algorithm::Maglev),
    ("jump-no-active", Algorithm::Jump),
    ("rendezvous-no-active", Algorithm::Rendezvous),
    ("table-no-active", Algorithm::Table),
    ("nginx-forty", Algorithm::Nginx),
    ("nginx-no-active", Algorithm::Nginx),
    ("haproxy-no-active", Algorithm::Haproxy),
    ("twemproxy-no-active", Algorithm::Twemproxy),
    ("twemproxy-hash-tag", Algorithm::Twemproxy),
    ("twemproxy-names", Algorithm::Twemproxy),
    ("twemproxy-md5", Algorithm::Twemproxy),
    ("twemproxy-crc32a", Algorithm::Twemproxy),
    ("twemproxy-one_at_a_time", Algorithm::Twemproxy),
    ("twemproxy-murmur", Algorithm::Twemproxy),
    ("twemproxy-jenkins", Algorithm::Twemproxy),
    ("twemproxy-hsieh", Algorithm::Twemproxy),
    ("twemproxy-fnv1_64", Algorithm::Twemproxy),
    ("twemproxy-fnv1a_32", Algorithm::Twemproxy),
    ("twemproxy-fnv1_32", Algorithm::Twemproxy),
    ("envoy_ring_hash-no-active", Algorithm::EnvoyRingHash),
    ("envoy_ring_hash-six-hosts", Algorithm::EnvoyRingHash),
    ("envoy_ring_hash-hash-keys", Algorithm::EnvoyRingHash),
    ("envoy_ring_hash-two-hosts", Algorithm::EnvoyRingHash),
    ("envoy_ring_hash-forty", Algorithm::EnvoyRingHash),
    ("envoy_maglev-no-active", Algorithm::EnvoyMaglev),
    ("envoy_maglev-six-hosts", Algorithm::EnvoyMaglev),
    ("envoy_maglev-five-and-one", Algorithm::EnvoyMaglev),
    ("envoy_maglev-forty", Algorithm::EnvoyMaglev),
];

/// The config, nodes and placement of one of [`EXTRAS`].
pub(crate) fn extra(name: &str, algorithm: Algorithm) -> (RingConfig, Vec<Node>, Placement) {
    let mut config = RingConfig::new(algorithm);
    let four = || {
        (1..=4)
            .map(|i| node(&format!("x-{i}"), i))
            .collect::<Vec<_>>()
    };
    let nodes = match name {
        "ring-md5-vnodes" => {
            config.hash = HashFunction::Md5;
            config.vnodes_per_weight = 7;
            four()
        }
        "rendezvous-sha256" => {
            config.hash = HashFunction::Sha256;
            four()
        }
        "maglev-murmur3-table-size" => {
            config.hash = HashFunction::Murmur3;
            config.table_size = 251;
            four()
        }
        "jump-md5-holes" => {
            // From the initial order [j-1 ×2, j-2, j-3 ×2, j-4]: j-2 drains
            // and j-3 drops to weight 1, leaving holes at buckets 2 and 4.
            config.hash = HashFunction::Md5;
            let before = vec![
                node("j-1", 2),
                node("j-2", 1),
                node("j-3", 2),
                node("j-4", 1),
            ];
            let after = vec![
                node("j-1", 2),
                node("j-2", 1).with_state(NodeState::Draining),
                node("j-3", 1),
                node("j-4", 1),
            ];
            let p = Placement::build(&config, &before)
                .unwrap()
                .rebuild(&config, &after)
                .unwrap();
            return (config, after, p);
        }
        "table-murmur3-partitions" => {
            config.hash = HashFunction::Murmur3;
            config.partitions = 512;
            four()
        }
        "nginx-forty" => {
            // 40 servers, weights 1 to 10: half on 11211 (each its own
            // host), half on four hosts with ports of their own, one IPv6,
            // one named.
            (0..40)
                .map(|i| {
                    let a = match i {
                        0 => "[2001:db8::7]:11211".to_owned(),
                        1 => "cache-1.internal:8080".to_owned(),
                        _ if i % 2 == 0 => format!("10.1.{}.{i}:11211", i % 4),
                        _ => format!("10.1.0.{}:{}", i % 4 + 1, 20_000 + i),
                    };
                    node(&format!("s-{i:02}"), i as u64 % 10 + 1)
                        .with_address(Address::new(a).unwrap())
                })
                .collect()
        }
        "twemproxy-hash-tag" => {
            // Keys hash the text between the first `y` and the first `1`
            // after it ("key-21" hashes "-2"), or whole without one.
            config.hash_tag = Some(HashTag::new("y1").unwrap());
            four()
        }
        "twemproxy-names" => {
            // Named by hash_key, by host alone on 11211, by host:port.
            let at = |a: &str| Address::new(a).unwrap();
            vec![
                node("t-1", 1).with_address(at("10.2.0.1:11211")),
                node("t-2", 2).with_address(at("10.2.0.2:11211")),
                node("t-3", 1).with_address(at("10.2.0.3:6379")),
                node("t-4", 3).with_address(at("10.2.0.3:6380")),
                node("t-5", 1)
                    .with_address(at("10.2.0.5:11211"))
                    .with_hash_key(HashKey::new("cache-5").unwrap()),
                node("t-6", 2)
                    .with_address(at("10.2.0.6:22122"))
                    .with_hash_key(HashKey::new("redis:6").unwrap()),
            ]
        }
        _ if algorithm == Algorithm::Twemproxy && !name.ends_with("-no-active") => {
            config.hash = name["twemproxy-".len()..].parse().unwrap();
            four()
        }
        // The inputs of Envoy's own tests (ring_hash_lb_test.cc): `Basic`,
        // hosts 127.0.0.1:90 to :95 at minimum_ring_size 12, hashed by
        // their addresses (here their hash_keys); `BasicWithMetadataHashKey`,
        // the same hosts hashed by hash_keys "90" to "95"; `UnevenHosts`,
        // :80 and :81 at minimum 3. Only the last is Envoy's table entry
        // for entry: six shares of 2^31 are not equal (spec 5.10.1).
        "envoy_ring_hash-six-hosts" | "envoy_ring_hash-hash-keys" => {
            config.minimum_ring_size = 12;
            (90..96)
                .map(|port| {
                    let address = format!("127.0.0.1:{port}");
                    let key = if name.ends_with("hash-keys") {
                        port.to_string()
                    } else {
                        address.clone()
                    };
                    node(&format!("e-{port}"), 1)
                        .with_address(Address::new(address).unwrap())
                        .with_hash_key(HashKey::new(key).unwrap())
                })
                .collect()
        }
        "envoy_ring_hash-two-hosts" => {
            config.minimum_ring_size = 3;
            (80..82)
                .map(|port| {
                    let address = format!("127.0.0.1:{port}");
                    node(&format!("e-{port}"), 1)
                        .with_hash_key(HashKey::new(address.as_str()).unwrap())
                        .with_address(Address::new(address).unwrap())
                })
                .collect()
        }
        // Envoy's maglev_lb_test.cc `Basic`: hosts 127.0.0.1:90 to :95
        // hashed by their addresses, table 7. Six shares of 2^31 are not
        // quite equal, yet they give Envoy's own table of the test,
        // [2, 4, 0, 1, 5, 0, 3].
        "envoy_maglev-six-hosts" => {
            config.table_size = 7;
            (90..96)
                .map(|port| {
                    let address = format!("127.0.0.1:{port}");
                    node(&format!("e-{port}"), 1)
                        .with_hash_key(HashKey::new(address.as_str()).unwrap())
                        .with_address(Address::new(address).unwrap())
                })
                .collect()
        }
        // Weights 5 and 1 at M = 7, where `maglev` is not Envoy's table
        // and `envoy_maglev` is (spec 5.3, 5.11).
        "envoy_maglev-five-and-one" => {
            config.table_size = 7;
            vec![
                node("a", 5).with_hash_key(HashKey::new("10.0.0.1:80").unwrap()),
                node("b", 1).with_hash_key(HashKey::new("10.0.0.2:80").unwrap()),
            ]
            .into_iter()
            .zip(["10.0.0.1:80", "10.0.0.2:80"])
            .map(|(n, a)| n.with_address(Address::new(a).unwrap()))
            .collect()
        }
        "envoy_maglev-forty" => {
            // On a small prime table.
            config.table_size = 251;
            forty()
        }
        "envoy_ring_hash-forty" => {
            // On a larger ring than the default.
            config.minimum_ring_size = 2000;
            config.maximum_ring_size = 20_000;
            forty()
        }
        "ketama-zero-digests" => {
            // 5.2: (1, 1001, 2) → 0 digests, so `tiny` has no point at all.
            vec![node("big", 1000), node("tiny", 1)]
        }
        _ => {
            // Every node draining: nothing is active, nothing is owned.
            if algorithm == Algorithm::Table {
                config.partitions = 256;
            }
            vec![
                node("d-1", 1).with_state(NodeState::Draining),
                node("d-2", 2).with_state(NodeState::Draining),
            ]
        }
    };
    // Under an algorithm that places by address, every active node has
    // one.
    let nodes: Vec<Node> = nodes
        .into_iter()
        .enumerate()
        .map(|(i, mut n)| {
            if algorithm.needs_address() && n.is_active() && n.address.is_none() {
                n.address = Some(address(i));
            }
            n
        })
        .collect();
    let p = Placement::build(&config, &nodes).unwrap();
    (config, nodes, p)
}

/// 40 xDS endpoints, weights 1 to 10: IPv4 and IPv6 addresses (which
/// place nothing), some with a hash_key.
fn forty() -> Vec<Node> {
    (0..40)
        .map(|i| {
            let a = match i {
                _ if i % 5 == 0 => format!("[2001:db8::{:x}]:8080", i + 1),
                7 => "10.3.0.7:9090".to_owned(),
                _ => format!("10.3.{}.{i}:8080", i % 3),
            };
            let n = node(&format!("s-{i:02}"), i as u64 % 10 + 1)
                .with_address(Address::new(a).unwrap());
            if i % 7 == 3 {
                n.with_hash_key(HashKey::new(format!("backend-{i}")).unwrap())
            } else {
                n
            }
        })
        .collect()
}
