//! `ring` lookups against the `hashring` crate's, measured in alternating
//! rounds, for the placement core's "at least 5× faster" target.
//!
//! Separate criterion functions (`cargo bench --bench placement`) move by
//! up to 2× between runs on a shared machine. Here each round times 20 ×
//! 1,024 lookups on a `ring` placement, then the same keys on a
//! `hashring::HashRing` with the same 160 virtual nodes per node, moments
//! apart; the result is the median of 300 per-round ratios.
//!
//! ```sh
//! cargo run --release --example ring_vs_hashring
//! ```

use std::hint::black_box;
use std::time::Instant;

use ringd::placement::{Algorithm, Node, NodeId, Placement, RingConfig};

const ROUNDS: usize = 300;
const PASSES: usize = 20;

/// 1,024 keys of 16 to 40 bytes, as in the placement benchmark.
fn keys() -> Vec<Vec<u8>> {
    (0..1024)
        .map(|i| {
            let mut k = format!("user:{i:08}:").into_bytes();
            k.resize(16 + i % 25, b'x');
            k
        })
        .collect()
}

/// A virtual node for the `hashring` crate: node number and point number.
#[derive(Hash, Clone, PartialEq, Debug)]
struct VNode(u32, u32);

/// Nanoseconds `f` takes for `PASSES` passes over `keys`.
fn round(keys: &[Vec<u8>], mut f: impl FnMut(&[u8])) -> f64 {
    let start = Instant::now();
    for _ in 0..PASSES {
        for k in keys {
            f(black_box(k));
        }
    }
    start.elapsed().as_nanos() as f64
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let keys = keys();
    let per_round = (PASSES * keys.len()) as f64;
    println!("| N | ring ns/lookup | hashring ns/lookup | hashring / ring |");
    println!("|---:|---:|---:|---:|");
    for n in [10, 100, 1_000, 10_000] {
        let nodes: Vec<Node> = (0..n)
            .map(|i| Node::new(NodeId::new(format!("node-{i:05}")).unwrap()))
            .collect();
        let placement = Placement::build(&RingConfig::new(Algorithm::Ring), &nodes).unwrap();
        let mut other = hashring::HashRing::new();
        other.batch_add(
            (0..n as u32)
                .flat_map(|node| (0..160).map(move |v| VNode(node, v)))
                .collect(),
        );
        let (mut ours, mut theirs, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            let a = round(&keys, |k| {
                black_box(placement.owner_index(k));
            });
            let b = round(&keys, |k| {
                black_box(other.get(&k).map(|v| v.0));
            });
            ours.push(a / per_round);
            theirs.push(b / per_round);
            ratios.push(b / a);
        }
        println!(
            "| {n} | {:.1} | {:.1} | {:.2}× |",
            median(ours),
            median(theirs),
            median(ratios)
        );
    }
}
