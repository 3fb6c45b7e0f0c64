//! Bounded-load picks on a live ring of ten nodes (one draining), under a
//! skewed workload with requests that start and finish in a seeded
//! pattern: every pick is checked against a bound and a walk of the
//! preference list computed independently here.
#![cfg(feature = "server")]

use std::collections::HashMap;

use crate::support::api::TestApi;
use crate::support::client::{client, GUARD};
use crate::support::in_process::InProcessServer;
use crate::support::ringd::Ringd;
use ringd::client::{BoundedLoad, RingClient, RingView, WatchMode};
use ringd::placement::NodeId;
use ringd::ring::Snapshot;
use ringd::wire::SnapshotView;
use serde_json::json;

/// splitmix64: a tiny seeded generator, the same on every platform.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A key: `hot` 30% of the time, otherwise one of 200 keys with a
/// zipf-like popularity (key i weighs 1/(i+1)).
fn key(rng: &mut Rng, cumulative: &[u64]) -> String {
    if rng.below(10) < 3 {
        return "hot".to_owned();
    }
    let total = *cumulative.last().unwrap();
    let x = rng.below(total);
    let i = cumulative.partition_point(|&c| c <= x);
    format!("key:{i}")
}

/// `ceil(factor × (total + 1) / nodes)` with the factor given as a
/// fraction, in integers: the bound the test expects, computed without
/// the library.
fn expected_bound(num: u64, den: u64, total: u64, nodes: u64) -> u64 {
    (num * (total + 1)).div_ceil(den * nodes)
}

/// What one simulation saw.
#[derive(Debug, Default, PartialEq)]
struct Tally {
    picks: u64,
    /// Picks that were not the key's owner.
    moved: u64,
    /// Picks of the hot key that were not its owner.
    hot_moved: u64,
    max_in_flight: u64,
}

/// Runs 20,000 steps: each starts a request (picking its node) or, a
/// third of the time, finishes a random one in flight. The factor is
/// `num/den`.
fn simulate(view: &RingView, num: u64, den: u64, seed: u64) -> Tally {
    let balance = BoundedLoad::new(num as f64 / den as f64).unwrap();
    let active: Vec<NodeId> = view
        .placement()
        .nodes()
        .iter()
        .map(|n| n.id.clone())
        .collect();
    let n = active.len();
    let cumulative: Vec<u64> = (0..200u64)
        .scan(0, |acc, i| {
            *acc += 720_720 / (i + 1);
            Some(*acc)
        })
        .collect();
    let mut load: HashMap<NodeId, u64> = active.iter().map(|id| (id.clone(), 0)).collect();
    let mut in_flight: Vec<NodeId> = Vec::new();
    let mut rng = Rng(seed);
    let mut t = Tally::default();
    for _ in 0..20_000 {
        if !in_flight.is_empty() && rng.below(3) == 0 {
            let i = rng.below(in_flight.len() as u64) as usize;
            let done = in_flight.swap_remove(i);
            *load.get_mut(&done).unwrap() -= 1;
            continue;
        }
        let k = key(&mut rng, &cumulative);
        let total: u64 = load.values().sum();
        assert_eq!(total, in_flight.len() as u64);
        let bound = expected_bound(num, den, total, n as u64);
        assert_eq!(balance.bound(total, n), bound, "total {total}");
        let picked = balance
            .pick(view, k.as_bytes(), |id| load[id])
            .expect("a node")
            .id
            .clone();
        // The first node on the full preference list under the bound.
        let list = view.preference_list(k.as_bytes(), n);
        assert_eq!(list.len(), n);
        let want = list
            .iter()
            .find(|r| load[&r.id] < bound)
            .expect("some node is under the bound");
        assert_eq!(picked, want.id, "key {k}, loads {load:?}, bound {bound}");
        assert!(load[&picked] < bound);
        let owner = view.owner(k.as_bytes()).unwrap().id.clone();
        assert_eq!(owner, list[0].id);
        if picked != owner {
            t.moved += 1;
            if k == "hot" {
                t.hot_moved += 1;
            }
        }
        *load.get_mut(&picked).unwrap() += 1;
        t.max_in_flight = t.max_in_flight.max(load[&picked]);
        in_flight.push(picked);
        t.picks += 1;
    }
    t
}

async fn live_ring() -> (InProcessServer, RingClient, u64) {
    let s = Ringd::sqlite().in_process().start();
    let api = TestApi::new(&s.url, "hot");
    assert_eq!(api.create().await, 1);
    let mut ops: Vec<_> = (0..9)
        .map(|i| json!({"op": "upsert", "node": {"id": format!("node-{i}"), "weight": 1 + i % 3}}))
        .collect();
    ops.push(json!({"op": "upsert", "node": {"id": "node-9", "state": "draining"}}));
    assert_eq!(api.change(json!(ops)).await, 2);
    let c = client(&[&s.url], "hot", WatchMode::Auto, "bounded");
    c.wait_for_version(2, GUARD).await.unwrap();
    (s, c, 2)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_pick_is_the_first_node_under_the_bound() {
    let (_s, c, _) = live_ring().await;
    let view = c.current().unwrap();
    assert_eq!(view.snapshot().nodes.len(), 10);
    // The draining node counts neither in the bound nor as a candidate.
    assert_eq!(view.placement().nodes().len(), 9);
    let draining = NodeId::new("node-9").unwrap();
    let t = simulate(&view, 5, 4, 42);
    assert!(t.picks > 10_000, "{t:?}");
    // The bound did its job: the hot key was often sent past its owner.
    assert!(t.hot_moved > 0, "{t:?}");
    assert!(t.moved >= t.hot_moved);
    assert!(view.placement().index_of(&draining).is_none());
    // The same simulation with the same seed makes the same picks.
    assert_eq!(simulate(&view, 5, 4, 42), t);
    // A factor of 1 balances perfectly: still every pick checked.
    let perfect = simulate(&view, 1, 1, 42);
    assert!(perfect.moved > t.moved, "{perfect:?} vs {t:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_enough_factor_always_picks_the_owner() {
    let (_s, c, _) = live_ring().await;
    let view = c.current().unwrap();
    // With factor = nodes the bound is total + 1: no node can reach it.
    let t = simulate(&view, 9, 1, 42);
    assert_eq!((t.moved, t.hot_moved), (0, 0), "{t:?}");
    assert!(t.picks > 10_000);
    let balance = BoundedLoad::new(9.0).unwrap();
    for total in [0, 1, 10, 1000] {
        assert_eq!(balance.bound(total, 9), total + 1);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fixed_client_on_the_servers_snapshot_picks_the_same() {
    let (s, c, v) = live_ring().await;
    let api = TestApi::new(&s.url, "hot");
    let view: SnapshotView = serde_json::from_value(api.snapshot(v).await).unwrap();
    let snapshot = Snapshot::try_from(view).unwrap();
    let fixed = RingClient::fixed(snapshot).unwrap();
    assert_eq!(fixed.version(), Some(v));
    assert!(fixed.endpoints().is_none());
    let (live, pinned) = (c.current().unwrap(), fixed.current().unwrap());
    assert_eq!(live.fingerprint(), pinned.fingerprint());
    assert_eq!(simulate(&live, 5, 4, 99), simulate(&pinned, 5, 4, 99));
    let balance = BoundedLoad::new(1.25).unwrap();
    // The key's owner and second node carry 100 each, the rest nothing:
    // bound = ceil(1.25 × 201 / 9) = 28, so the third node is picked.
    let bound = expected_bound(5, 4, 200, 9);
    assert_eq!(bound, 28);
    assert_eq!(balance.bound(200, 9), 28);
    for i in 0..50 {
        let key = format!("k{i}");
        let list: Vec<NodeId> = pinned
            .preference_list(key.as_bytes(), 3)
            .iter()
            .map(|r| r.id.clone())
            .collect();
        let busy = |id: &NodeId| if list[..2].contains(id) { 100 } else { 0 };
        let got = balance.pick(&pinned, key.as_bytes(), busy).unwrap();
        assert_eq!(got.id, list[2], "{key}");
        // One below the bound is still taken: 27 + 8 × 21 = 195 in
        // flight, bound 28.
        assert_eq!(balance.bound(195, 9), 28);
        let owner_at_27 = |id: &NodeId| if *id == list[0] { 27 } else { 21 };
        let got = balance.pick(&pinned, key.as_bytes(), owner_at_27).unwrap();
        assert_eq!(got.id, list[0], "{key}");
    }
    // Invalid factors are refused.
    for f in [0.5, f64::NAN] {
        assert!(BoundedLoad::new(f).is_err());
    }
}
