//! Placement core benchmarks: lookup per algorithm and cluster size (with
//! the `hashring` crate as an outside baseline, and each key hash alone
//! for `ring` and the proxy modes), and the build, incremental
//! change, ownership and diff of a 10,000-node × 160-point ring, and a
//! `jump` ring of 5 nodes at the maximum weight (preference lists and the
//! change path on 5,000,000 buckets).
//!
//! Run: `cargo bench --bench placement`.

// criterion_group! defines a function that carries no doc comment.
#![allow(missing_docs)]

#[path = "support/mod.rs"]
mod support;

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use ringd::placement::{Address, Algorithm, Node, NodeId, Placement, RingConfig};
use ringd::ring::BucketOrder;

fn nodes(n: usize) -> Vec<Node> {
    (0..n)
        .map(|i| Node::new(NodeId::new(format!("node-{i:05}")).unwrap()))
        .collect()
}

/// `nodes(n)`, each with a distinct address `10.0.x.y:11211` (up to
/// 64,000 nodes). `nginx` and `twemproxy` place a node by its `host:port`
/// (a build without one fails with `MissingAddress`), and at port 11211
/// twemproxy names a server by its host alone, so the names are distinct
/// too. Every other algorithm, `haproxy` included (it places by server
/// id), ignores the address: its placement and encoding are those of
/// `nodes`, so all algorithms share this one list. IPv4 hosts, because
/// twemproxy takes no IPv6.
fn addressed_nodes(n: usize) -> Vec<Node> {
    assert!(n <= 256 * 250, "10.0.x.y runs out of hosts");
    nodes(n)
        .into_iter()
        .enumerate()
        .map(|(i, node)| {
            let address = format!("10.0.{}.{}:11211", i / 250, i % 250 + 1);
            node.with_address(Address::new(address).unwrap())
        })
        .collect()
}

/// A virtual node for the `hashring` crate: node number and point number.
#[derive(Hash, Clone, PartialEq, Debug)]
struct VNode(u32, u32);

fn lookup(c: &mut Criterion) {
    let keys = support::keys();
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
        let ns = addressed_nodes(n);
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
    // The key hash alone under `ring` and each proxy mode (xxh3, nginx's
    // CRC-32, HAProxy's sdbm with the avalanche modifier, twemproxy's
    // fnv1a_64, Envoy's xxh64), through the placement as a lookup takes it; it does not
    // depend on the node count.
    let ns = addressed_nodes(10);
    for alg in [
        Algorithm::Ring,
        Algorithm::Nginx,
        Algorithm::Haproxy,
        Algorithm::Twemproxy,
        Algorithm::EnvoyRingHash,
    ] {
        let p = Placement::build(&RingConfig::new(alg), &ns).unwrap();
        let mut i = 0usize;
        group.bench_function(BenchmarkId::new("key-hash-only", alg.name()), |b| {
            b.iter(|| {
                i = (i + 1) & 1023;
                black_box(p.key_hash(black_box(&keys[i])))
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

/// Five nodes at weight 1,000,000: 5,000,000 buckets, five runs.
fn heavy_jump(c: &mut Criterion) {
    let config = RingConfig::new(Algorithm::Jump);
    let heavy = |i: usize| {
        Node::new(NodeId::new(format!("node-{i}")).unwrap())
            .with_weight(ringd::placement::Weight::new(1_000_000).unwrap())
    };
    let ns: Vec<Node> = (0..5).map(heavy).collect();
    let mut more = ns.clone();
    more.push(heavy(5));
    let before = Placement::build(&config, &ns).unwrap();
    let keys = support::keys();

    let mut group = c.benchmark_group("jump-5x1000000");
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
    for r in [1, 3] {
        let mut i = 0usize;
        group.bench_function(BenchmarkId::new("preference-list", r), |b| {
            b.iter(|| {
                i = (i + 1) & 1023;
                black_box(before.preference_indices(black_box(&keys[i]), r))
            })
        });
    }
    // What a change costs the service: the next placement, its diff
    // against the current one and its (not yet cached) fingerprint.
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(8));
    group.bench_function("add-one-node", |b| {
        b.iter(|| {
            let after = before.rebuild(&config, black_box(&more)).unwrap();
            let diff = before.diff(&after);
            black_box((after.fingerprint(), diff.moved_fraction))
        })
    });
    // The same without the fingerprint: SHA-256 over the 24 MB encoding is
    // the one part that stays linear in buckets.
    group.bench_function("add-one-node-without-fingerprint", |b| {
        b.iter(|| {
            let after = before.rebuild(&config, black_box(&more)).unwrap();
            black_box(before.diff(&after).moved_fraction)
        })
    });
    // The persisted order the service stores with each version (one id
    // per bucket), outside the placement core's own change path.
    group.bench_function("bucket-order", |b| {
        b.iter(|| black_box(before.bucket_order().map(|o| o.len())))
    });
    // What the service keeps, stores and sends instead: the order as runs
    // (a snapshot's `BucketOrder`), its stored form written, read back and
    // turned into a placement, and the per-bucket wire form written from
    // the runs and read back into runs (as the Rust client does).
    group.bench_function("bucket-runs", |b| {
        b.iter(|| black_box(BucketOrder::of(black_box(&before))))
    });
    let order = BucketOrder::of(&before).unwrap();
    let restore = |o: &BucketOrder| {
        Placement::build_with_runs(&config, &ns, o.placement_runs())
            .unwrap()
            .nodes()
            .len()
    };
    group.bench_function("stored-runs-round-trip", |b| {
        b.iter(|| {
            let json = serde_json::to_vec(black_box(&order)).unwrap();
            let back: BucketOrder = serde_json::from_slice(&json).unwrap();
            black_box(restore(&back))
        })
    });
    // The stored form before runs: the per-bucket list, as it was built,
    // written, read back and restored.
    group.bench_function("stored-per-bucket-round-trip", |b| {
        b.iter(|| {
            let json = serde_json::to_vec(&black_box(&before).bucket_order()).unwrap();
            let back: Option<Vec<Option<NodeId>>> = serde_json::from_slice(&json).unwrap();
            let p = Placement::build_with_buckets(&config, &ns, &back.unwrap()).unwrap();
            black_box(p.nodes().len())
        })
    });
    group.bench_function("wire-per-bucket-round-trip", |b| {
        b.iter(|| {
            let json = serde_json::to_vec(&black_box(&order).per_bucket()).unwrap();
            let back: BucketOrder = serde_json::from_slice(&json).unwrap();
            black_box(restore(&back))
        })
    });
    group.finish();
}

criterion_group!(benches, lookup, big_ring, heavy_jump);
criterion_main!(benches);
