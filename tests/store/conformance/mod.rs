//! The behaviour every `Store` backend must show, written once against the
//! trait so each backend runs the same cases unchanged.
//!
//! A backend's test module invokes
//! [`store_conformance_tests!`] with an async opener
//! `async fn(retention: u64) -> (Guard, Arc<dyn Store>)`: each case gets a
//! fresh, empty store, kept alive (a temporary directory, an etcd prefix
//! …) by `Guard` until the case ends.
//!
//! Snapshots are built with the real domain code (`Snapshot::first`,
//! `Snapshot::propose`), so stored data has realistic node lists,
//! fingerprints, bucket orders and change records.

#![allow(dead_code)] // Each backend's test binary uses a different subset of helpers.

mod acks;
mod events;
mod jump;

pub use acks::client_acks;
pub use events::subscribe_sees_writes_in_order;
pub use jump::{jump_chain, jump_orders_round_trip};

use std::sync::Arc;

use ringd::placement::{Algorithm, NodeId, Placement, RingConfig, Weight};
use ringd::ring::{ChangeOp, NodeRecord, RingName, Role, Snapshot};
use ringd::store::{HistoryEntry, Store, StoreError};
use time::OffsetDateTime;

/// Defines one `#[tokio::test]` per conformance case, each on a fresh
/// store from `$open`.
#[macro_export]
macro_rules! store_conformance_tests {
    ($open:expr) => {
        $crate::store_conformance_tests!(@cases $open;
            create_then_latest,
            create_twice_is_ring_exists,
            commits_are_gapless,
            stale_commit_conflicts,
            concurrent_commits_one_wins,
            snapshot_lookup,
            history_order_and_contents,
            delete_then_recreate,
            list_rings_sorted,
            subscribe_sees_writes_in_order,
            client_acks,
            jump_orders_round_trip,
        );
        #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
        async fn pruned_versions() {
            let (_guard, store) = $open(3).await;
            $crate::conformance::pruned_versions(store).await;
        }
    };
    (@cases $open:expr; $($case:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $case() {
                let (_guard, store) = $open(ringd::store::DEFAULT_RETENTION).await;
                $crate::conformance::$case(store).await;
            }
        )*
    };
}

/// A valid ring name.
pub fn name(s: &str) -> RingName {
    RingName::new(s).expect("valid ring name")
}

/// A fixed instant `secs` after a base, with nanoseconds so that
/// sub-second precision must survive a round trip through the store.
pub fn at(secs: i64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp_nanos(
        (1_750_000_000 + i128::from(secs)) * 1_000_000_000 + 123_456_789,
    )
    .expect("valid time")
}

/// Version 1 of `ring` on `algorithm`, with its placement.
pub fn first_with(ring: &str, algorithm: Algorithm) -> (Snapshot, Placement) {
    Snapshot::first(name(ring), RingConfig::new(algorithm), Role::Admin, at(0))
        .expect("first snapshot")
}

/// Version 1 of `ring` on the default `ring` algorithm.
pub fn first(ring: &str) -> (Snapshot, Placement) {
    first_with(ring, Algorithm::Ring)
}

/// The version after `prev` that registers node `node`, with an address,
/// a weight and a label, as an operator would.
pub fn add_node(prev: &Snapshot, placement: &Placement, node: &str) -> (Snapshot, Placement) {
    let mut record = NodeRecord::new(NodeId::new(node).expect("valid node id"));
    record.address = Some(format!("{node}.internal:11211"));
    record.weight = Weight::new(1 + prev.version % 3).expect("valid weight");
    record
        .labels
        .insert("rack".into(), format!("r{}", prev.version % 2));
    let proposal = prev
        .propose(
            placement,
            vec![ChangeOp::Upsert { node: record }],
            Some(format!("add {node}")),
            Role::Admin,
            at(i64::try_from(prev.version).expect("small version")),
        )
        .expect("valid change")
        .expect("not a no-op");
    (proposal.snapshot, proposal.placement)
}

/// Versions 1..=n of `ring`, each adding one node.
pub fn chain(ring: &str, n: u64) -> Vec<Snapshot> {
    let (mut snapshot, mut placement) = first(ring);
    let mut out = vec![snapshot.clone()];
    for v in 2..=n {
        (snapshot, placement) = add_node(&snapshot, &placement, &format!("node-{v}"));
        out.push(snapshot.clone());
    }
    out
}

/// Creates the ring and commits every later version of `versions`.
pub async fn store_all(store: &dyn Store, versions: &[Snapshot]) {
    store.create_ring(&versions[0]).await.expect("create");
    for s in &versions[1..] {
        store.commit(s).await.expect("commit");
    }
}

pub async fn create_then_latest(store: Arc<dyn Store>) {
    let (first, _) = first("cache");
    store.create_ring(&first).await.unwrap();
    assert_eq!(store.latest(&name("cache")).await.unwrap(), first);
    assert_eq!(store.snapshot(&name("cache"), 1).await.unwrap(), first);
    assert_eq!(store.list_rings().await.unwrap(), vec![first]);
    assert!(matches!(
        store.latest(&name("other")).await,
        Err(StoreError::RingNotFound(r)) if r == name("other")
    ));
}

pub async fn create_twice_is_ring_exists(store: Arc<dyn Store>) {
    let (first, _) = first("cache");
    store.create_ring(&first).await.unwrap();
    // A second create, even with another config, must not replace the ring.
    let (other, _) = first_with("cache", Algorithm::Maglev);
    match store.create_ring(&other).await {
        Err(StoreError::RingExists(existing)) => assert_eq!(*existing, first),
        other => panic!("expected RingExists, got {other:?}"),
    }
    assert_eq!(store.latest(&name("cache")).await.unwrap(), first);
    // RingExists carries the latest version, not version 1.
    let versions = chain("cache", 2);
    store.commit(&versions[1]).await.unwrap();
    match store.create_ring(&other).await {
        Err(StoreError::RingExists(existing)) => assert_eq!(*existing, versions[1]),
        other => panic!("expected RingExists, got {other:?}"),
    }
}

pub async fn commits_are_gapless(store: Arc<dyn Store>) {
    let versions = chain("cache", 3);
    store_all(&*store, &versions).await;
    assert_eq!(store.latest(&name("cache")).await.unwrap(), versions[2]);
    for (i, s) in versions.iter().enumerate() {
        assert_eq!(
            store.snapshot(&name("cache"), i as u64 + 1).await.unwrap(),
            *s
        );
    }
}

pub async fn stale_commit_conflicts(store: Arc<dyn Store>) {
    let versions = chain("cache", 3);
    store_all(&*store, &versions).await;
    // A writer that read version 2 and built its own version 3.
    let (_, p1) = first("cache");
    let (_, p2) = add_node(&versions[0], &p1, "node-2");
    let (stale, _) = add_node(&versions[1], &p2, "late-node");
    assert_eq!(stale.version, 3);
    assert!(matches!(
        store.commit(&stale).await,
        Err(StoreError::VersionConflict {
            expected: 2,
            current: 3
        })
    ));
    // Skipping ahead is a conflict too: versions are gapless.
    let mut ahead = versions[2].clone();
    ahead.version = 5;
    assert!(matches!(
        store.commit(&ahead).await,
        Err(StoreError::VersionConflict {
            expected: 4,
            current: 3
        })
    ));
    assert_eq!(store.latest(&name("cache")).await.unwrap(), versions[2]);
    // Committing to a ring that does not exist.
    let mut orphan = versions[1].clone();
    orphan.ring = name("nowhere");
    assert!(matches!(
        store.commit(&orphan).await,
        Err(StoreError::RingNotFound(r)) if r == name("nowhere")
    ));
}

pub async fn concurrent_commits_one_wins(store: Arc<dyn Store>) {
    let (first, placement) = first("cache");
    store.create_ring(&first).await.unwrap();
    let candidates: Vec<Snapshot> = (0..8)
        .map(|i| add_node(&first, &placement, &format!("writer-{i}")).0)
        .collect();
    let tasks: Vec<_> = candidates
        .iter()
        .cloned()
        .map(|s| {
            let store = Arc::clone(&store);
            tokio::spawn(async move { store.commit(&s).await })
        })
        .collect();
    let mut winners = Vec::new();
    for (i, task) in tasks.into_iter().enumerate() {
        match task.await.unwrap() {
            Ok(()) => winners.push(i),
            Err(StoreError::VersionConflict {
                expected: 1,
                current: 2,
            }) => {}
            other => panic!("writer {i}: expected Ok or VersionConflict{{1, 2}}, got {other:?}"),
        }
    }
    assert_eq!(winners.len(), 1, "exactly one writer wins: {winners:?}");
    assert_eq!(
        store.latest(&name("cache")).await.unwrap(),
        candidates[winners[0]]
    );
    assert_eq!(store.history(&name("cache")).await.unwrap().len(), 2);
}

pub async fn snapshot_lookup(store: Arc<dyn Store>) {
    let versions = chain("cache", 3);
    store_all(&*store, &versions).await;
    let ring = name("cache");
    assert_eq!(store.snapshot(&ring, 1).await.unwrap(), versions[0]);
    assert_eq!(store.snapshot(&ring, 3).await.unwrap(), versions[2]);
    assert!(matches!(
        store.snapshot(&ring, 0).await,
        Err(StoreError::VersionNotFound {
            version: 0,
            latest: 3
        })
    ));
    assert!(matches!(
        store.snapshot(&ring, 4).await,
        Err(StoreError::VersionNotFound {
            version: 4,
            latest: 3
        })
    ));
    assert!(matches!(
        store.snapshot(&ring, u64::MAX).await,
        Err(StoreError::VersionNotFound {
            version: u64::MAX,
            latest: 3
        })
    ));
    assert!(matches!(
        store.snapshot(&name("nowhere"), 1).await,
        Err(StoreError::RingNotFound(_))
    ));
}

/// Needs a store opened with retention 3.
pub async fn pruned_versions(store: Arc<dyn Store>) {
    let versions = chain("cache", 6);
    store_all(&*store, &versions).await;
    let ring = name("cache");
    for v in 1..=3 {
        assert!(matches!(
            store.snapshot(&ring, v).await,
            Err(StoreError::VersionPruned { version, oldest: 4 }) if version == v
        ));
    }
    for v in 4..=6 {
        assert_eq!(
            store.snapshot(&ring, v).await.unwrap(),
            versions[v as usize - 1]
        );
    }
    assert!(matches!(
        store.snapshot(&ring, 7).await,
        Err(StoreError::VersionNotFound {
            version: 7,
            latest: 6
        })
    ));
    let kept: Vec<u64> = store
        .history(&ring)
        .await
        .unwrap()
        .iter()
        .map(|h| h.version)
        .collect();
    assert_eq!(kept, vec![4, 5, 6]);
    // Pruning continues with every commit.
    let placement = versions[5].placement().expect("placement of v6");
    let (v7, _) = add_node(&versions[5], &placement, "node-7");
    store.commit(&v7).await.unwrap();
    assert!(matches!(
        store.snapshot(&ring, 4).await,
        Err(StoreError::VersionPruned {
            version: 4,
            oldest: 5
        })
    ));
    assert_eq!(store.latest(&ring).await.unwrap(), v7);
}

pub async fn history_order_and_contents(store: Arc<dyn Store>) {
    let versions = chain("cache", 4);
    store_all(&*store, &versions).await;
    let expected: Vec<HistoryEntry> = versions.iter().map(HistoryEntry::from).collect();
    assert_eq!(store.history(&name("cache")).await.unwrap(), expected);
    assert_eq!(expected[0].change.reason.as_deref(), Some("ring created"));
    assert_eq!(expected[3].change.reason.as_deref(), Some("add node-4"));
    assert!(matches!(
        store.history(&name("nowhere")).await,
        Err(StoreError::RingNotFound(_))
    ));
}

pub async fn delete_then_recreate(store: Arc<dyn Store>) {
    let versions = chain("cache", 3);
    store_all(&*store, &versions).await;
    let (keep, _) = first("keep");
    store.create_ring(&keep).await.unwrap();
    let ring = name("cache");

    // A stale precondition deletes nothing.
    assert!(matches!(
        store.delete_ring(&ring, Some(2)).await,
        Err(StoreError::VersionConflict {
            expected: 2,
            current: 3
        })
    ));
    assert_eq!(store.latest(&ring).await.unwrap().version, 3);
    store.delete_ring(&ring, Some(3)).await.unwrap();
    assert!(matches!(store.latest(&ring).await, Err(StoreError::RingNotFound(r)) if r == ring));
    assert!(matches!(
        store.snapshot(&ring, 1).await,
        Err(StoreError::RingNotFound(_))
    ));
    assert!(matches!(
        store.history(&ring).await,
        Err(StoreError::RingNotFound(_))
    ));
    assert!(matches!(
        store.delete_ring(&ring, None).await,
        Err(StoreError::RingNotFound(_))
    ));
    assert_eq!(store.list_rings().await.unwrap(), vec![keep.clone()]);

    // A recreated ring starts over at version 1, with no trace of the old one.
    let (again, placement) = first_with("cache", Algorithm::Jump);
    store.create_ring(&again).await.unwrap();
    assert_eq!(store.latest(&ring).await.unwrap(), again);
    assert!(matches!(
        store.snapshot(&ring, 2).await,
        Err(StoreError::VersionNotFound {
            version: 2,
            latest: 1
        })
    ));
    assert_eq!(
        store.history(&ring).await.unwrap(),
        vec![HistoryEntry::from(&again)]
    );
    let (v2, _) = add_node(&again, &placement, "node-a");
    store.commit(&v2).await.unwrap();
    assert_eq!(store.latest(&ring).await.unwrap(), v2);
    assert_eq!(store.latest(&name("keep")).await.unwrap(), keep);
}

pub async fn list_rings_sorted(store: Arc<dyn Store>) {
    assert_eq!(store.list_rings().await.unwrap(), Vec::<Snapshot>::new());
    // Names whose byte order differs from a naive "natural" order.
    let names = ["b", "a-1", "a.1", "a_1", "a0", "a", "9z", "c-cache"];
    let mut expected = Vec::new();
    for (i, n) in names.iter().enumerate() {
        let algorithm = if i % 2 == 0 {
            Algorithm::Ring
        } else {
            Algorithm::Jump
        };
        let (s, placement) = first_with(n, algorithm);
        store.create_ring(&s).await.unwrap();
        // Give some rings a second version: the list shows the latest.
        if i % 3 == 0 {
            let (v2, _) = add_node(&s, &placement, "node-x");
            store.commit(&v2).await.unwrap();
            expected.push(v2);
        } else {
            expected.push(s);
        }
    }
    expected.sort_by(|a, b| a.ring.cmp(&b.ring));
    assert_eq!(store.list_rings().await.unwrap(), expected);
}
