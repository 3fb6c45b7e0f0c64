//! Envoy's own expectations (`ring_hash_lb_test.cc`), rebuilt here.

use super::*;

/// Envoy's `chooseHost`: libketama's binary search, ported as written.
fn envoy_choose(ring: &[(u64, u32)], h: u64) -> u32 {
    let (mut lowp, mut highp) = (0i64, ring.len() as i64);
    let midp = loop {
        let midp = (lowp + highp) / 2;
        if midp == ring.len() as i64 {
            break 0;
        }
        let midval = ring[midp as usize].0;
        let midval1 = if midp == 0 {
            0
        } else {
            ring[midp as usize - 1].0
        };
        if h <= midval && h > midval1 {
            break midp;
        }
        if midval < h {
            lowp = midp + 1;
        } else {
            highp = midp - 1;
        }
        if lowp > highp {
            break 0;
        }
    };
    ring[midp as usize].1
}

fn first_at_or_after(ring: &[(u64, u32)], h: u64) -> u32 {
    let i = ring.partition_point(|e| e.0 < h);
    ring[if i == ring.len() { 0 } else { i }].1
}

#[test]
fn envoy_basic_ring_and_picks() {
    let keys: Vec<String> = (90..96).map(|p| format!("127.0.0.1:{p}")).collect();
    let endpoints: Vec<(&str, u32)> = keys.iter().map(|k| (k.as_str(), 1)).collect();
    let ring = ring_entries(&endpoints, 12, 8 << 20);
    let expected: [(u64, u32); 12] = [
        (833437586790550860, 4),
        (928266305478181108, 2),
        (1033482794131418490, 0),
        (3551244743356806947, 5),
        (3851675632748031481, 3),
        (5583722120771150861, 1),
        (6311230543546372928, 1),
        (7700377290971790572, 3),
        (13144177310400110813, 5),
        (13444792449719432967, 2),
        (15516499411664133160, 4),
        (16117243373044804889, 0),
    ];
    assert_eq!(ring, expected);
    for (h, host) in [
        (0, 4),
        (u64::MAX, 4),
        (3551244743356806947, 5),
        (3551244743356806948, 3),
        (16117243373044804880, 0),
    ] {
        assert_eq!(envoy_choose(&ring, h), host);
        assert_eq!(first_at_or_after(&ring, h), host);
    }
}

#[test]
fn envoy_host_weighted_tiny_ring() {
    let keys: Vec<String> = (90..93).map(|p| format!("127.0.0.1:{p}")).collect();
    let endpoints: Vec<(&str, u32)> = keys
        .iter()
        .zip([1, 2, 3])
        .map(|(k, w)| (k.as_str(), w))
        .collect();
    let ring = ring_entries(&endpoints, 6, 6);
    let expected: Vec<(u64, u32)> = vec![
        (928266305478181108, 2),
        (4443673547860492590, 2),
        (5583722120771150861, 1),
        (6311230543546372928, 1),
        (13444792449719432967, 2),
        (16117243373044804889, 0),
    ];
    assert_eq!(ring, expected);
}

#[test]
fn envoys_search_is_the_first_entry_at_or_after_the_hash() {
    let keys: Vec<String> = (0..40).map(|i| format!("10.0.0.{i}:80")).collect();
    let endpoints: Vec<(&str, u32)> = keys
        .iter()
        .map(|k| (k.as_str(), 1 + k.len() as u32 % 7))
        .collect();
    let ring = ring_entries(&endpoints, 1024, 4096);
    let mut h = 0x9e37_79b9_7f4a_7c15_u64;
    for _ in 0..100_000 {
        h = h
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        assert_eq!(envoy_choose(&ring, h), first_at_or_after(&ring, h));
    }
    for e in &ring {
        assert_eq!(envoy_choose(&ring, e.0), first_at_or_after(&ring, e.0));
    }
}

#[test]
fn endpoint_weights_share_out_two_to_the_31() {
    use crate::placement::{Address, NodeId, Weight};
    let node = |id: &str, w: u64| {
        Node::new(NodeId::new(id).unwrap())
            .with_weight(Weight::new(w).unwrap())
            .with_address(Address::new(format!("10.0.0.{}:80", id.len())).unwrap())
    };
    let nodes = [node("a", 1), node("bb", 1), node("ccc", 1)];
    assert_eq!(
        endpoint_weights(&nodes).unwrap(),
        [715827883, 715827883, 715827882]
    );
    let nodes = [node("a", 1), node("bb", 2)];
    assert_eq!(endpoint_weights(&nodes).unwrap(), [715827883, 1431655765]);
    assert_eq!(check_address("10.0.0.1:80").unwrap().port(), 80);
    assert!(check_address("010.0.0.1:80").is_err());
    assert!(check_address("[::0001]:80").is_err());
    assert!(check_address("[::1]:80").is_ok());
    assert!(check_address("cache.local:80").is_err());
    assert!(check_address("10.0.0.1:0").is_err());
}

/// Nodes keyed as Envoy's test hosts, all of weight 1.
fn hosts(ports: std::ops::Range<u16>) -> Vec<Node> {
    use crate::placement::{Address, HashKey, NodeId};
    ports
        .map(|p| {
            let a = format!("127.0.0.1:{p}");
            Node::new(NodeId::new(format!("h-{p}")).unwrap())
                .with_hash_key(HashKey::new(a.as_str()).unwrap())
                .with_address(Address::new(a).unwrap())
        })
        .collect()
}

fn built(nodes: &[Node], minimum: u64, maximum: u64) -> Vec<(u64, u32)> {
    build(nodes, minimum, maximum)
        .points()
        .iter()
        .map(|p| (p.pos, p.owner))
        .collect()
}

#[test]
fn with_shares_that_are_powers_of_two_ringd_builds_envoys_own_ring() {
    // Envoy's `UnevenHosts`: :80 and :81 with minimum_ring_size 3 give a
    // ring of 4, 2 entries each. ringd's EDS weights are 2^30 each, and the
    // ring is entry for entry Envoy's.
    let nodes = hosts(80..82);
    assert_eq!(endpoint_weights(&nodes).unwrap(), [1 << 30, 1 << 30]);
    assert_eq!(
        built(&nodes, 3, 8 << 20),
        [
            (5454692015285649509, 0),
            (7859399908942313493, 1),
            (13838424394637650569, 0),
            (16064866803292627174, 1),
        ]
    );
}

#[test]
fn with_other_shares_the_split_of_2_31_adds_an_entry_as_envoy_would_given_those_weights() {
    // Envoy's `Basic` hosts (six of weight 1, minimum 12) get a ring of 12
    // from Envoy with weights 1. 2^31 does not split in six: ringd sends
    // two endpoints 357913942 and four 357913941, and from those weights
    // Envoy and gRPC both build a ring of 13, as ringd does.
    let nodes = hosts(90..96);
    let weights = endpoint_weights(&nodes).unwrap();
    assert_eq!(
        weights,
        [357913942, 357913942, 357913941, 357913941, 357913941, 357913941]
    );
    assert_eq!(entry_counts(&weights, 12, 8 << 20), [3, 2, 2, 2, 2, 2]);
    let keys: Vec<String> = (90..96).map(|p| format!("127.0.0.1:{p}")).collect();
    let endpoints: Vec<(&str, u32)> = keys.iter().map(|k| k.as_str()).zip(weights).collect();
    let from_eds = ring_entries(&endpoints, 12, 8 << 20);
    assert_eq!(built(&nodes, 12, 8 << 20), from_eds);
    assert_eq!(from_eds.len(), 13);
}
