//! Lookup-cost ratios measured in alternating rounds, for two targets:
//! a `Router` lookup within 10% of the placement's own, and `ring` at least
//! 5× faster than the `hashring` crate.
//!
//! Separate criterion functions (`cargo bench --bench client`, `--bench
//! placement`) move by ±15% to 2× between runs on a shared machine, from
//! code placement and frequency changes alone. Here each round times 20 ×
//! 1,024 lookups one way, then the same keys the other way, moments apart
//! under the same conditions; each table gives the median of 300 per-round
//! ratios.
//!
//! ```sh
//! cargo run --release --example lookup_ratios
//! ```

#[path = "../support/mod.rs"]
mod support;

use std::hint::black_box;
use std::time::Instant;

use ringd::client::RingClient;
use ringd::placement::{Algorithm, Node, NodeId, Placement, RingConfig};
use ringd::ring::{ChangeOp, NodeRecord, RingName, Role, Snapshot};

const ROUNDS: usize = 300;
const PASSES: usize = 20;

fn node_id(i: usize) -> NodeId {
    NodeId::new(format!("node-{i:05}")).unwrap()
}

/// A default `ring` snapshot of `n` nodes of weight 1.
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
            node: NodeRecord::new(node_id(i)),
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

/// `Router::owner` and `RingView::owner` against `Placement::owner`.
fn client_overhead(keys: &[Vec<u8>]) {
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
            let p = round(keys, |k| {
                black_box(placement.owner(k));
            });
            let r = round(keys, |k| {
                black_box(router.owner(k).map(|n| &n.id));
            });
            let v = round(keys, |k| {
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

/// A virtual node for the `hashring` crate: node number and point number.
#[derive(Hash, Clone, PartialEq, Debug)]
struct VNode(u32, u32);

/// `ring` against `hashring` with the same 160 virtual nodes per node.
fn against_hashring(keys: &[Vec<u8>]) {
    let per_round = (PASSES * keys.len()) as f64;
    println!("| N | ring ns/lookup | hashring ns/lookup | hashring / ring |");
    println!("|---:|---:|---:|---:|");
    for n in [10, 100, 1_000, 10_000] {
        let nodes: Vec<Node> = (0..n).map(|i| Node::new(node_id(i))).collect();
        let placement = Placement::build(&RingConfig::new(Algorithm::Ring), &nodes).unwrap();
        let mut other = hashring::HashRing::new();
        other.batch_add(
            (0..n as u32)
                .flat_map(|node| (0..160).map(move |v| VNode(node, v)))
                .collect(),
        );
        let (mut ours, mut theirs, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            let a = round(keys, |k| {
                black_box(placement.owner_index(k));
            });
            let b = round(keys, |k| {
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

/// `table` (2^16 partitions, RF 3) against hashing the key alone and
/// against `maglev`, in alternating rounds.
fn table_against_hash(keys: &[Vec<u8>]) {
    use ringd::placement::hash::hash64;
    use ringd::placement::HashFunction;
    let per_round = (PASSES * keys.len()) as f64;
    println!("| N | hash ns | table ns | maglev ns | table − hash | maglev − hash |");
    println!("|---:|---:|---:|---:|---:|---:|");
    for n in [10, 100, 1_000, 10_000] {
        let nodes: Vec<Node> = (0..n).map(|i| Node::new(node_id(i))).collect();
        let table = Placement::build(&RingConfig::new(Algorithm::Table), &nodes).unwrap();
        let maglev = Placement::build(&RingConfig::new(Algorithm::Maglev), &nodes).unwrap();
        let (mut h, mut t, mut m, mut dt, mut dm) = (vec![], vec![], vec![], vec![], vec![]);
        for _ in 0..ROUNDS {
            let a = round(keys, |k| {
                black_box(hash64(HashFunction::Xxh3, k));
            }) / per_round;
            let b = round(keys, |k| {
                black_box(table.owner_index(k));
            }) / per_round;
            let c = round(keys, |k| {
                black_box(maglev.owner_index(k));
            }) / per_round;
            h.push(a);
            t.push(b);
            m.push(c);
            dt.push(b - a);
            dm.push(c - a);
        }
        println!(
            "| {n} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} |",
            median(h),
            median(t),
            median(m),
            median(dt),
            median(dm)
        );
    }
}

fn main() {
    let keys = support::keys();
    client_overhead(&keys);
    println!();
    against_hashring(&keys);
    println!();
    table_against_hash(&keys);
}
