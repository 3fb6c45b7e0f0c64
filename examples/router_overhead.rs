//! What a lookup through the client's `Router` costs over the same lookup
//! on the placement itself, measured in alternating rounds.
//!
//! Separate criterion functions (`cargo bench --bench client`) differ by
//! ±15% on this kind of machine from code placement and frequency changes
//! alone, which is more than the difference looked for here. So this
//! program times a round of 20 × 1,024 lookups on the placement, then the
//! same round through a `Router` and through a held `RingView`, 300 times,
//! and reports the median of the per-round ratios: both sides see the same
//! conditions, moments apart.
//!
//! ```sh
//! cargo run --release --example router_overhead
//! ```

use std::hint::black_box;
use std::time::Instant;

use ringd::client::RingClient;
use ringd::placement::{Algorithm, NodeId, RingConfig};
use ringd::ring::{ChangeOp, NodeRecord, RingName, Role, Snapshot};

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

/// A default `ring` snapshot of `n` nodes.
fn snapshot(n: usize) -> Snapshot {
    let now = time::OffsetDateTime::now_utc();
    let (first, placement) = Snapshot::first(
        RingName::new("bench").unwrap(),
        RingConfig::new(Algorithm::Ring),
        Role::Admin,
        now,
    )
    .unwrap();
    let ops = (0..n)
        .map(|i| ChangeOp::Upsert {
            node: NodeRecord::new(NodeId::new(format!("node-{i:05}")).unwrap()),
        })
        .collect();
    first
        .propose(&placement, ops, None, Role::Admin, now)
        .unwrap()
        .expect("a change")
        .snapshot
}

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
    println!("| N | placement ns/lookup | Router / placement | RingView / placement |");
    println!("|---:|---:|---:|---:|");
    for n in [10, 100, 1_000] {
        let snapshot = snapshot(n);
        let placement = snapshot.placement().unwrap();
        let client = RingClient::fixed(snapshot).unwrap();
        let mut router = client.router();
        let view = client.current().unwrap();
        let (mut base, mut via_router, mut via_view) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            let p = round(&keys, |k| {
                black_box(placement.owner(k));
            });
            let r = round(&keys, |k| {
                black_box(router.owner(k).map(|n| &n.id));
            });
            let v = round(&keys, |k| {
                black_box(view.owner(k).map(|n| &n.id));
            });
            base.push(p / (PASSES * keys.len()) as f64);
            via_router.push(r / p);
            via_view.push(v / p);
        }
        println!(
            "| {n} | {:.1} | {:.3} | {:.3} |",
            median(base),
            median(via_router),
            median(via_view)
        );
    }
}
