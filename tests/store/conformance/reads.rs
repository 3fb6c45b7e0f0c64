//! Conformance cases: reading versions back (snapshots, pruned versions,
//! history).

use std::sync::Arc;

use ringd::store::{HistoryEntry, Store, StoreError};

use super::{add_node, chain, name, store_all};

pub(crate) async fn snapshot_lookup(store: Arc<dyn Store>) {
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
pub(crate) async fn pruned_versions(store: Arc<dyn Store>) {
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

pub(crate) async fn history_order_and_contents(store: Arc<dyn Store>) {
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
