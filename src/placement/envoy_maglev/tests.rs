use super::build;
use crate::placement::envoy_ring_hash::endpoint_weights;
use crate::placement::hash::xxh64_seeded;
use crate::placement::{HashKey, Node, NodeId, Weight};

/// Envoy's `OriginalMaglevTable::constructImplementationInternals`, as
/// written in `maglev_lb.cc`, in binary64: `hosts` are (hash key, weight
/// as Envoy normalizes it), and the result is each slot's index in
/// `hosts`.
fn envoy_table(hosts: &[(&str, f64)], table_size: u64) -> Vec<usize> {
    struct Entry {
        host: usize,
        offset: u64,
        skip: u64,
        weight: f64,
        target: f64,
        next: u64,
    }
    let mut sorted: Vec<usize> = (0..hosts.len()).collect();
    sorted.sort_by(|&a, &b| hosts[a].0.cmp(hosts[b].0));
    let mut entries: Vec<Entry> = sorted
        .iter()
        .map(|&h| Entry {
            host: h,
            offset: xxh64_seeded(hosts[h].0.as_bytes(), 0) % table_size,
            skip: xxh64_seeded(hosts[h].0.as_bytes(), 1) % (table_size - 1) + 1,
            weight: hosts[h].1,
            target: 0.0,
            next: 0,
        })
        .collect();
    let max = entries.iter().map(|e| e.weight).fold(0.0, f64::max);
    let mut table = vec![usize::MAX; table_size as usize];
    let mut filled = 0;
    let mut iteration: u32 = 1;
    while filled < table.len() {
        for e in entries.iter_mut() {
            if filled == table.len() {
                break;
            }
            if f64::from(iteration) * e.weight < e.target {
                continue;
            }
            e.target += max;
            let mut c = ((e.offset + e.skip * e.next) % table_size) as usize;
            while table[c] != usize::MAX {
                e.next += 1;
                c = ((e.offset + e.skip * e.next) % table_size) as usize;
            }
            table[c] = e.host;
            e.next += 1;
            filled += 1;
        }
        iteration += 1;
    }
    table
}

/// Envoy normalizes weights by their sum.
fn normalized(weights: &[u64]) -> Vec<f64> {
    let sum: u64 = weights.iter().sum();
    weights.iter().map(|&w| w as f64 / sum as f64).collect()
}

fn hosts<'a>(keys: &[&'a str], weights: &[f64]) -> Vec<(&'a str, f64)> {
    keys.iter().copied().zip(weights.iter().copied()).collect()
}

#[test]
fn the_port_of_envoys_fill_gives_envoys_own_test_tables() {
    // maglev_lb_test.cc: Basic (hosts tcp://127.0.0.1:90 to :95).
    let keys = [
        "127.0.0.1:90",
        "127.0.0.1:91",
        "127.0.0.1:92",
        "127.0.0.1:93",
        "127.0.0.1:94",
        "127.0.0.1:95",
    ];
    let equal = normalized(&[1; 6]);
    assert_eq!(envoy_table(&hosts(&keys, &equal), 7), [2, 4, 0, 1, 5, 0, 3]);
    // BasicWithMetadataHashKey: hash keys "90" to "95".
    let named = ["90", "91", "92", "93", "94", "95"];
    assert_eq!(
        envoy_table(&hosts(&named, &equal), 7),
        [2, 5, 0, 3, 4, 1, 0]
    );
    // Weighted: :90 weight 1, :91 weight 2, table 17.
    let weighted = normalized(&[1, 2]);
    assert_eq!(
        envoy_table(&hosts(&keys[..2], &weighted), 17),
        [1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 0, 1]
    );
}

fn nodes(labels: &[&str], weights: &[u64]) -> Vec<Node> {
    labels
        .iter()
        .zip(weights)
        .enumerate()
        .map(|(i, (label, &w))| {
            Node::new(NodeId::new(format!("n{i:03}")).unwrap())
                .with_hash_key(HashKey::new(*label).unwrap())
                .with_weight(Weight::new(w).unwrap())
        })
        .collect()
}

/// ringd's table, as indices in `labels`.
fn ringd_table(labels: &[&str], weights: &[u64], table_size: u64) -> Vec<usize> {
    let n = nodes(labels, weights);
    build(&n, table_size)
        .unwrap()
        .into_iter()
        .map(|i| i as usize)
        .collect()
}

/// What Envoy builds from the EDS weights ringd sends for these nodes.
fn envoy_from_ringd(labels: &[&str], weights: &[u64], table_size: u64) -> Vec<usize> {
    let eds: Vec<u64> = endpoint_weights(&nodes(labels, weights))
        .unwrap()
        .into_iter()
        .map(u64::from)
        .collect();
    envoy_table(&hosts(labels, &normalized(&eds)), table_size)
}

#[test]
fn envoys_table_from_ringds_weights_is_ringds_where_plain_weights_tie() {
    // Weights 5 and 1 at M = 7: from the plain weights Envoy's rounded
    // turn test skips a turn `maglev`'s integer test takes (spec 5.3).
    let labels = ["10.0.0.1:80", "10.0.0.2:80"];
    let plain = envoy_table(&hosts(&labels, &normalized(&[5, 1])), 7);
    assert_eq!(plain, [0, 0, 0, 0, 1, 0, 0]);
    let ringd = ringd_table(&labels, &[5, 1], 7);
    assert_eq!(ringd, envoy_from_ringd(&labels, &[5, 1], 7));
    // Envoy's Basic and Weighted, through ringd's weights.
    let keys = ["127.0.0.1:90", "127.0.0.1:91"];
    assert_eq!(
        ringd_table(&keys, &[1, 2], 17),
        envoy_from_ringd(&keys, &[1, 2], 17)
    );
}

#[test]
fn ringds_table_is_envoys_from_the_weights_ringd_sends_for_random_rings() {
    // A small deterministic generator, so a failure names its case.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move |bound: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % bound
    };
    let primes = [7, 13, 17, 101, 257, 1009, 65_537];
    for case in 0..3_000 {
        let count = 1 + next(12) as usize;
        // A prime at least the node count (a table of another size would
        // not be a permutation of every node's slots).
        let fitting: Vec<u64> = primes.into_iter().filter(|&p| p >= count as u64).collect();
        let size = fitting[next(fitting.len() as u64) as usize];
        let owned: Vec<String> = (0..count).map(|i| format!("10.0.{case}.{i}:80")).collect();
        let labels: Vec<&str> = owned.iter().map(String::as_str).collect();
        let weights: Vec<u64> = (0..count).map(|_| 1 + next(10)).collect();
        assert_eq!(
            ringd_table(&labels, &weights, size),
            envoy_from_ringd(&labels, &weights, size),
            "case {case}: weights {weights:?}, table {size}"
        );
    }
}
