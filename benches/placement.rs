//! Placement core benchmarks: lookup per algorithm and cluster size (with
//! the `hashring` crate as an outside baseline), and the build, incremental
//! change, ownership and diff of a 10,000-node × 160-point ring.
//!
//! Run: `cargo bench --bench placement`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use ringd::placement::{Algorithm, Node, NodeId, Placement, RingConfig};

/// 1,024 keys of 16 to 40 bytes.
fn keys() -> Vec<Vec<u8>> {
    (0..1024)
        .map(|i| {
            let mut k = format!("user:{i:08}:").into_bytes();
            k.resize(16 + i % 25, b'x');
            k
        })
        .collect()
}

fn nodes(n: usize) -> Vec<Node> {
    (0..n)
        .map(|i| Node::new(NodeId::new(format!("node-{i:05}")).unwrap()))
        .collect()
}

/// A virtual node for the `hashring` crate: node number and point number.
#[derive(Hash, Clone, PartialEq, Debug)]
struct VNode(u32, u32);

fn lookup(c: &mut Criterion) {
    let keys = keys();
    let mut group = c.benchmark_group("lookup");
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(2));
    // The floor every algorithm pays: hashing the key.
    let mut i = 0usize;
    group.bench_function("xxh3-key-hash-only", |b| {
        b.iter(|| {
            i = (i + 1) & 1023;
            black_box(ringd::placement::hash::hash64(
                ringd::placement::HashFunction::Xxh3,
                black_box(&keys[i]),
            ))
        })
    });
    for n in [10, 100, 1_000, 10_000] {
        let ns = nodes(n);
        for alg in Algorithm::ALL {
            let p = Placement::build(&RingConfig::new(alg), &ns).unwrap();
            let mut i = 0usize;
            group.bench_function(BenchmarkId::new(alg.name(), n), |b| {
                b.iter(|| {
                    i = (i + 1) & 1023;
                    black_box(p.owner_index(black_box(&keys[i])))
                })
            });
        }
        let mut ring = hashring::HashRing::new();
        ring.batch_add(
            (0..n as u32)
                .flat_map(|node| (0..160).map(move |v| VNode(node, v)))
                .collect(),
        );
        let mut i = 0usize;
        group.bench_function(BenchmarkId::new("hashring-crate", n), |b| {
            b.iter(|| {
                i = (i + 1) & 1023;
                black_box(ring.get(black_box(&keys[i])).map(|v| v.0))
            })
        });
    }
    group.finish();
}

fn big_ring(c: &mut Criterion) {
    let config = RingConfig::new(Algorithm::Ring);
    let ns = nodes(10_000);
    let mut more = ns.clone();
    more.push(Node::new(NodeId::new("node-new").unwrap()));
    let before = Placement::build(&config, &ns).unwrap();
    let after = before.rebuild(&config, &more).unwrap();

    let mut group = c.benchmark_group("ring-10000x160");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(6));
    group.bench_function("build", |b| {
        b.iter(|| black_box(Placement::build(&config, black_box(&ns)).unwrap()))
    });
    group.bench_function("add-one-node", |b| {
        b.iter(|| black_box(before.rebuild(&config, black_box(&more)).unwrap()))
    });
    group.bench_function("ownership", |b| b.iter(|| black_box(before.ownership())));
    group.bench_function("diff", |b| b.iter(|| black_box(before.diff(&after))));
    group.bench_function("fingerprint", |b| {
        b.iter(|| black_box(ringd::placement::Fingerprint::of(&before.encode())))
    });
    group.finish();
}

criterion_group!(benches, lookup, big_ring);
criterion_main!(benches);
