//! `table` partition-table benchmarks: building a table of 2^16
//! partitions × 3 replicas from scratch, and computing the next one after
//! adding one node, at 100, 1,000 and 10,000 nodes in three zones with
//! weights 1–4, with and without the zone rule; and a change the greedy
//! passes cannot finish, completed along augmenting paths.
//!
//! Run: `cargo bench --bench table`.

// criterion_group! defines a function that carries no doc comment.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use ringd::placement::table::PartitionTable;
use ringd::placement::{Node, NodeId, Weight, Zone};

const PARTITIONS: u32 = 1 << 16;
const REPLICAS: usize = 3;

/// `n` nodes in zones `z0`–`z2` round-robin, with weights 1–4 spread by a
/// fixed multiplier (the same set on every run).
fn nodes(n: usize) -> (Vec<Node>, Vec<u32>) {
    let nodes = (0..n)
        .map(|i| {
            Node::new(NodeId::new(format!("node-{i:05}")).unwrap())
                .with_weight(Weight::new(1 + (i as u64 * 7919) % 4).unwrap())
                .with_zone(Zone::new(format!("z{}", i % 3)).unwrap())
        })
        .collect();
    let zones = (0..n).map(|i| (i % 3) as u32).collect();
    (nodes, zones)
}

fn table(c: &mut Criterion) {
    let mut group = c.benchmark_group("table");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
    for n in [100, 1_000, 10_000] {
        let (ns, zs) = nodes(n);
        let (mut more, mut more_zones) = (ns.clone(), zs.clone());
        more.push(
            Node::new(NodeId::new("node-new").unwrap())
                .with_weight(Weight::new(2).unwrap())
                .with_zone(Zone::new("z1").unwrap()),
        );
        more_zones.push(1);
        for zoned in [false, true] {
            let label = if zoned { "zones" } else { "no-zones" };
            let z = zoned.then(|| (&zs[..], 3));
            let zm = zoned.then(|| (&more_zones[..], 3));
            group.bench_function(BenchmarkId::new(format!("build/{label}"), n), |b| {
                b.iter(|| {
                    PartitionTable::compute(PARTITIONS, REPLICAS, black_box(&ns), z, None).unwrap()
                })
            });
            let first = PartitionTable::compute(PARTITIONS, REPLICAS, &ns, z, None).unwrap();
            group.bench_function(BenchmarkId::new(format!("add-one/{label}"), n), |b| {
                b.iter(|| {
                    PartitionTable::compute(
                        PARTITIONS,
                        REPLICAS,
                        black_box(&more),
                        zm,
                        Some((&first, &ns)),
                    )
                    .unwrap()
                })
            });
        }
    }
    group.finish();
}

/// `a0` (weight 3), `a1`–`a4`, `b0`–`b3` and `c0`–`c3` (weight 1), with
/// `b-new` too if `joined`: ids and zone numbers, in id order.
fn light_zone(joined: bool) -> (Vec<Node>, Vec<u32>) {
    let mut named = vec![("a0".to_owned(), 3, 0)];
    for (z, zone) in ["a", "b", "c"].into_iter().enumerate() {
        let first = usize::from(zone == "a");
        for i in first..first + 4 {
            named.push((format!("{zone}{i}"), 1, z as u32));
        }
    }
    if joined {
        named.push(("b-new".to_owned(), 1, 1));
    }
    named.sort();
    let nodes = named
        .iter()
        .map(|(id, w, z)| {
            Node::new(NodeId::new(id.as_str()).unwrap())
                .with_weight(Weight::new(*w).unwrap())
                .with_zone(Zone::new(["a", "b", "c"][*z as usize]).unwrap())
        })
        .collect();
    (nodes, named.iter().map(|n| n.2).collect())
}

/// `b-new` joins the lighter zone `b` of a ring of RF 4 over 3 zones:
/// zone `b` must now hold two replicas of a quarter of the partitions and
/// `c` of none, the greedy passes leave slots no node may take, and the
/// augmenting paths fill them (`docs/design/table.md`).
fn completion(c: &mut Criterion) {
    let mut group = c.benchmark_group("table-completion");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
    let (before, before_zones) = light_zone(false);
    let (after, after_zones) = light_zone(true);
    for partitions in [1u32 << 12, 1 << 16] {
        let first = PartitionTable::compute(partitions, 4, &before, Some((&before_zones, 3)), None)
            .unwrap();
        group.bench_function(BenchmarkId::new("join-light-zone", partitions), |b| {
            b.iter(|| {
                PartitionTable::compute(
                    partitions,
                    4,
                    black_box(&after),
                    Some((&after_zones, 3)),
                    Some((&first, &before)),
                )
                .unwrap()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, table, completion);
criterion_main!(benches);
