//! Conformance cases: creating a ring and committing versions, alone and
//! racing.

use std::sync::Arc;

use ringd::placement::Algorithm;
use ringd::ring::Snapshot;
use ringd::store::{Store, StoreError};

use super::{add_node, chain, first, first_with, name, store_all};

pub(crate) async fn create_then_latest(store: Arc<dyn Store>) {
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

pub(crate) async fn create_twice_is_ring_exists(store: Arc<dyn Store>) {
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

pub(crate) async fn commits_are_gapless(store: Arc<dyn Store>) {
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

pub(crate) async fn stale_commit_conflicts(store: Arc<dyn Store>) {
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

pub(crate) async fn concurrent_commits_one_wins(store: Arc<dyn Store>) {
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
