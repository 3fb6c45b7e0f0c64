//! Balance and movement of `table` partition tables: RF 3, 3 zones
//! (round-robin), equal weights and weights 1–4, at 100, 1,000 and 10,000
//! nodes with 2^16 partitions, and at 1,000 nodes with 2^18.
//!
//! Balance is the largest ratio of a node's replicas to its exact weighted
//! share (within its zone: with 3 zones and RF 3 every zone holds one
//! replica of every partition), and the same for primaries against their
//! share of the partitions. Movement is the replicas gained in one change
//! (a node added, removed, re-weighted from 2 to 3) against the least the
//! quotas force: the sum of every node's growth.
//!
//! Run: `cargo run --release --example table_balance`

use std::collections::BTreeSet;

use ringd::placement::table::PartitionTable;
use ringd::placement::{Node, NodeId, Weight, Zone};

const REPLICAS: usize = 3;

fn node(i: usize, weight: u64) -> Node {
    Node::new(NodeId::new(format!("node-{i:05}")).unwrap())
        .with_weight(Weight::new(weight).unwrap())
        .with_zone(Zone::new(format!("z{}", i % 3)).unwrap())
}

/// `n` nodes; weights 1–4 from a fixed multiplier, or all 1.
fn nodes(n: usize, weighted: bool) -> Vec<Node> {
    (0..n)
        .map(|i| {
            node(
                i,
                if weighted {
                    1 + (i as u64 * 7919) % 4
                } else {
                    1
                },
            )
        })
        .collect()
}

fn zones(nodes: &[Node]) -> Vec<u32> {
    nodes
        .iter()
        .map(|n| n.zone.as_ref().unwrap().as_str()[1..].parse().unwrap())
        .collect()
}

fn table(p: u32, nodes: &[Node], before: Option<(&PartitionTable, &[Node])>) -> PartitionTable {
    let z = zones(nodes);
    PartitionTable::compute(p, REPLICAS, nodes, Some((&z, 3)), before).unwrap()
}

/// Largest replicas/share and primaries/share over the nodes.
fn balance(t: &PartitionTable, nodes: &[Node]) -> (f64, f64) {
    let p = t.partitions() as f64;
    let z = zones(nodes);
    let mut zone_weight = [0f64; 3];
    for (n, &zi) in nodes.iter().zip(&z) {
        zone_weight[zi as usize] += n.weight.get() as f64;
    }
    let total: f64 = zone_weight.iter().sum();
    let (mut held, mut primary) = (vec![0f64; nodes.len()], vec![0f64; nodes.len()]);
    for row in t.cells().chunks(t.replicas()) {
        primary[row[0] as usize] += 1.0;
        for &x in row {
            held[x as usize] += 1.0;
        }
    }
    let mut worst = (0f64, 0f64);
    for (i, n) in nodes.iter().enumerate() {
        let w = n.weight.get() as f64;
        let share = p * w / zone_weight[z[i] as usize];
        let primary_share = p * w / total;
        worst.0 = worst.0.max(held[i] / share);
        worst.1 = worst.1.max(primary[i] / primary_share);
    }
    worst
}

/// Replicas gained, and the least the quotas force.
fn movement(a: &PartitionTable, an: &[Node], b: &PartitionTable, bn: &[Node]) -> (usize, usize) {
    let mut gained = 0;
    for p in 0..b.partitions() as usize {
        let was: BTreeSet<&NodeId> = a.row(p).iter().map(|&x| &an[x as usize].id).collect();
        gained += b
            .row(p)
            .iter()
            .filter(|&&x| !was.contains(&bn[x as usize].id))
            .count();
    }
    let count = |t: &PartitionTable, n: usize| {
        let mut c = vec![0usize; n];
        t.cells().iter().for_each(|&x| c[x as usize] += 1);
        c
    };
    let (ca, cb) = (count(a, an.len()), count(b, bn.len()));
    let forced = bn
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let had = an.iter().position(|m| m.id == n.id).map_or(0, |j| ca[j]);
            cb[i].saturating_sub(had)
        })
        .sum();
    (gained, forced)
}

fn main() {
    println!("| nodes | partitions | weights | replicas max/share | primaries max/share | add: gained / forced | remove | re-weight |");
    println!("|---:|---:|---|---:|---:|---:|---:|---:|");
    for (n, bits) in [(100, 16), (1_000, 16), (10_000, 16), (1_000, 18)] {
        let p = 1u32 << bits;
        for weighted in [false, true] {
            let ns = nodes(n, weighted);
            let t = table(p, &ns, None);
            let (replicas, primaries) = balance(&t, &ns);
            let mut added = ns.clone();
            added.push(node(n, 2));
            let ta = table(p, &added, Some((&t, &ns)));
            let mut removed = ns.clone();
            removed.remove(n / 2);
            let tr = table(p, &removed, Some((&t, &ns)));
            let mut reweighted = ns.clone();
            reweighted[n / 3].weight = Weight::new(3).unwrap();
            let tw = table(p, &reweighted, Some((&t, &ns)));
            let show =
                |(g, f): (usize, usize)| format!("{g} / {f} ({:.3}x)", g as f64 / f.max(1) as f64);
            println!(
                "| {n} | 2^{bits} | {} | {replicas:.5} | {primaries:.5} | {} | {} | {} |",
                if weighted { "1–4" } else { "equal" },
                show(movement(&t, &ns, &ta, &added)),
                show(movement(&t, &ns, &tr, &removed)),
                show(movement(&t, &ns, &tw, &reweighted)),
            );
        }
    }
}
