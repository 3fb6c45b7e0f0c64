//! Conformance cases: deleting, recreating and listing rings.

use std::sync::Arc;

use ringd::placement::Algorithm;
use ringd::ring::Snapshot;
use ringd::store::{HistoryEntry, Store, StoreError};

use super::{add_node, chain, first, first_with, name, store_all};

pub(crate) async fn delete_then_recreate(store: Arc<dyn Store>) {
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

pub(crate) async fn list_rings_sorted(store: Arc<dyn Store>) {
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
