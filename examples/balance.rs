//! Balance and movement report: 10 nodes growing to 11, 100,000 keys.
//!
//! For each algorithm (and `ring` at several points per weight unit) it
//! prints the max/mean key load and the standard deviation of the load with
//! 10 nodes, the exact max/mean from the placement's ownership, and the
//! fraction of keys that move when an 11th node joins, against the ideal
//! 1/11. `hash % N` is the baseline.
//!
//! A second report gives the exact movement of one change (a node added,
//! removed or re-weighted from 1 to 2) at N = 10, 100 and 1,000 for
//! `ring`, `maglev`, `jump` and `table`, against the least any placement
//! must move: the sum of the shares the nodes gain.
//!
//! Run: `cargo run --release --example balance`

use ringd::placement::hash::hash64;
use ringd::placement::{Algorithm, HashFunction, Node, NodeId, Placement, RingConfig};

const KEYS: usize = 100_000;

fn nodes(n: usize) -> Vec<Node> {
    (0..n)
        .map(|i| Node::new(NodeId::new(format!("node-{i}")).unwrap()))
        .collect()
}

/// Max/mean and standard deviation (as % of the mean) of per-node counts.
fn load(owners: &[usize], n: usize) -> (f64, f64) {
    let mut counts = vec![0f64; n];
    for &o in owners {
        counts[o] += 1.0;
    }
    let mean = KEYS as f64 / n as f64;
    let max = counts.iter().copied().fold(0.0, f64::max);
    let var = counts.iter().map(|c| (c - mean).powi(2)).sum::<f64>() / n as f64;
    (max / mean, 100.0 * var.sqrt() / mean)
}

fn moved(a: &[usize], b: &[usize]) -> f64 {
    100.0 * a.iter().zip(b).filter(|(x, y)| x != y).count() as f64 / KEYS as f64
}

fn row(name: &str, before: &[usize], after: &[usize], exact: Option<f64>) {
    let (max, sd) = load(before, 10);
    let exact = exact.map_or("—".to_string(), |e| format!("{e:.2}x"));
    println!(
        "| {name} | {max:.2}x | {sd:.1}% | {exact} | {:.1}% | {:.2}x |",
        moved(before, after),
        moved(before, after) / (100.0 / 11.0)
    );
}

fn main() {
    let keys: Vec<String> = (0..KEYS).map(|i| format!("key-{i}")).collect();
    let (ten, eleven) = (nodes(10), nodes(11));
    // Owners are compared by node id, which is the index here: ids sort
    // as node-0, node-1, node-10, node-2 … so map back through the id.
    let owners = |p: &Placement| -> Vec<usize> {
        keys.iter()
            .map(|k| {
                let id = p.owner(k.as_bytes()).unwrap();
                id.as_str()[5..].parse().unwrap()
            })
            .collect()
    };
    println!("| placement | max/mean (keys) | std dev of load | max/mean (exact) | keys moved 10→11 | moved / ideal |");
    println!("|---|---|---|---|---|---|");
    let modulo = |n: u64| -> Vec<usize> {
        keys.iter()
            .map(|k| (hash64(HashFunction::Xxh3, k.as_bytes()) % n) as usize)
            .collect()
    };
    row("hash % N", &modulo(10), &modulo(11), None);
    let mut variants: Vec<(String, RingConfig)> = [1, 10, 100, 160, 500]
        .into_iter()
        .map(|v| {
            let mut c = RingConfig::new(Algorithm::Ring);
            c.vnodes_per_weight = v;
            (format!("ring, {v} points"), c)
        })
        .collect();
    for alg in [
        Algorithm::Ketama,
        Algorithm::Maglev,
        Algorithm::Rendezvous,
        Algorithm::Jump,
    ] {
        variants.push((alg.name().to_string(), RingConfig::new(alg)));
    }
    for (name, config) in variants {
        let before = Placement::build(&config, &ten).unwrap();
        let after = before.rebuild(&config, &eleven).unwrap();
        let exact = before.ownership().max_over_mean;
        row(&name, &owners(&before), &owners(&after), Some(exact));
    }
    println!();
    movement();
}

/// The least share of the keyspace any placement moves from `before` to
/// `after`: what the nodes gain by weight.
fn ideal(before: &[Node], after: &[Node]) -> f64 {
    let share = |nodes: &[Node], id: &NodeId| -> f64 {
        let total: u32 = nodes.iter().map(|n| n.weight.get()).sum();
        nodes
            .iter()
            .find(|n| &n.id == id)
            .map_or(0.0, |n| f64::from(n.weight.get()) / f64::from(total))
    };
    after
        .iter()
        .map(|n| (share(after, &n.id) - share(before, &n.id)).max(0.0))
        .sum()
}

/// Exact moved fraction over ideal for one add, remove and re-weight.
fn movement() {
    println!("| N | placement | add: moved / ideal | remove: moved / ideal | re-weight 1→2: moved / ideal |");
    println!("|---:|---|---:|---:|---:|");
    for n in [10, 100, 1_000] {
        let base = nodes(n);
        let mut added = base.clone();
        added.push(Node::new(NodeId::new("node-new").unwrap()));
        // The middle node, so that `jump` shows a hole rather than its
        // last-in-first-out best case.
        let removed: Vec<Node> = base
            .iter()
            .filter(|m| m.id.as_str() != format!("node-{}", n / 2))
            .cloned()
            .collect();
        let mut reweighted = base.clone();
        reweighted[n / 2].weight = ringd::placement::Weight::new(2).unwrap();
        for alg in [
            Algorithm::Ring,
            Algorithm::Maglev,
            Algorithm::Jump,
            Algorithm::Table,
        ] {
            let config = RingConfig::new(alg);
            let before = Placement::build(&config, &base).unwrap();
            let cell = |after: &[Node]| {
                let next = before.rebuild(&config, after).unwrap();
                let moved = before.diff(&next).moved_fraction;
                let ideal = ideal(&base, after);
                format!(
                    "{:.4}% / {:.4}% = {:.3}×",
                    100.0 * moved,
                    100.0 * ideal,
                    moved / ideal
                )
            };
            println!(
                "| {n} | {} | {} | {} | {} |",
                alg.name(),
                cell(&added),
                cell(&removed),
                cell(&reweighted)
            );
        }
    }
}
