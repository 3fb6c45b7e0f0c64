//! Client library lookup cost: `owner(key)` through the client's handles
//! against the placement core it wraps, on the same snapshot and keys.
//!
//! - `placement`: `Placement::owner`, the floor.
//! - `router`: `Router::owner`, the hot-path handle (one atomic load to
//!   check for a newer version, then the lookup; returns the node record).
//! - `client`: `RingClient::owner` (loads the current view and clones the
//!   node id).
//! - `view`: `RingView::owner` on a view held by the caller.
//! - `index-record` (diagnostic): `Placement::owner_index` on the view's
//!   placement, then `RingView::record`: the mapping from the placement's
//!   node number to the node record that `router` and `view` go through.
//!
//! The snapshot is built in memory (`Snapshot::first` + `propose`) and the
//! client is a `RingClient::fixed` one: no server, no network.
//!
//! Run: `cargo bench --bench client`.

// criterion_group! defines a function that carries no doc comment.
#![allow(missing_docs)]

#[path = "support/mod.rs"]
mod support;

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use ringd::client::RingClient;
use ringd::placement::{Algorithm, NodeId, RingConfig};
use ringd::ring::{ChangeOp, NodeRecord, RingName, Role, Snapshot};
use time::OffsetDateTime;

/// A `ring` snapshot (default config: 160 points per weight unit, xxh3)
/// of `n` nodes of weight 1, version 2.
fn snapshot(n: usize) -> Snapshot {
    let now = OffsetDateTime::now_utc();
    let (first, placement) = Snapshot::first(
        RingName::new("bench").unwrap(),
        RingConfig::new(Algorithm::Ring),
        Role::Admin,
        now,
    )
    .unwrap();
    let ops = (0..n)
        .map(|i| {
            let mut node = NodeRecord::new(NodeId::new(format!("node-{i:05}")).unwrap());
            node.address = Some(format!("10.0.{}.{}:11211", i / 250, i % 250));
            ChangeOp::Upsert { node }
        })
        .collect();
    first
        .propose(&placement, ops, None, Role::Admin, now)
        .unwrap()
        .expect("a change")
        .snapshot
}

fn owner(c: &mut Criterion) {
    let keys = support::keys();
    let mut group = c.benchmark_group("client-owner");
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(2));
    for n in [10, 100, 1_000] {
        let snapshot = snapshot(n);
        // The placement core on its own, built from the same snapshot.
        let placement = snapshot.placement().unwrap();
        let client = RingClient::fixed(snapshot).unwrap();
        let mut router = client.router();
        let view = client.current().unwrap();
        // Same answers through every path.
        for k in &keys {
            let id = placement.owner(k).unwrap();
            assert_eq!(&router.owner(k).unwrap().id, id);
            assert_eq!(&client.owner(k).unwrap(), id);
            assert_eq!(&view.owner(k).unwrap().id, id);
        }

        let mut i = 0usize;
        group.bench_function(BenchmarkId::new("placement", n), |b| {
            b.iter(|| {
                i = (i + 1) & 1023;
                black_box(placement.owner(black_box(&keys[i])));
            })
        });
        // Diagnostic: the placement lookup plus the view's index → record
        // mapping, written out here; what `router` and `view` add to
        // `placement` apart from the version check and a call.
        let mut i = 0usize;
        group.bench_function(BenchmarkId::new("index-record", n), |b| {
            b.iter(|| {
                i = (i + 1) & 1023;
                let index = view.placement().owner_index(black_box(&keys[i]));
                black_box(index.map(|j| &view.record(j).id));
            })
        });
        let mut i = 0usize;
        group.bench_function(BenchmarkId::new("router", n), |b| {
            b.iter(|| {
                i = (i + 1) & 1023;
                black_box(router.owner(black_box(&keys[i])).map(|r| &r.id));
            })
        });
        let mut i = 0usize;
        group.bench_function(BenchmarkId::new("client", n), |b| {
            b.iter(|| {
                i = (i + 1) & 1023;
                black_box(client.owner(black_box(&keys[i])));
            })
        });
        let mut i = 0usize;
        group.bench_function(BenchmarkId::new("view", n), |b| {
            b.iter(|| {
                i = (i + 1) & 1023;
                black_box(view.owner(black_box(&keys[i])).map(|r| &r.id));
            })
        });
    }
    group.finish();
}

criterion_group!(benches, owner);
criterion_main!(benches);
