//! Conformance: a subscriber sees every commit and deletion, in order and
//! exactly once.

use std::sync::Arc;
use std::time::Duration;

use ringd::store::{Store, StoreEvent};
use tokio::sync::broadcast::error::TryRecvError;

use super::{chain, name, store_all};

/// The next event, failing the test if none arrives soon.
async fn next_event(rx: &mut tokio::sync::broadcast::Receiver<StoreEvent>) -> StoreEvent {
    tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .expect("an event within 5 s")
        .expect("channel open and not lagged")
}

pub(crate) async fn subscribe_sees_writes_in_order(store: Arc<dyn Store>) {
    let mut rx = store.subscribe();
    let versions = chain("cache", 3);
    store_all(&*store, &versions).await;
    // Failed writes publish nothing.
    assert!(store.create_ring(&versions[0]).await.is_err());
    assert!(store.commit(&versions[1]).await.is_err());
    store.delete_ring(&name("cache"), None).await.unwrap();
    assert!(store.delete_ring(&name("cache"), None).await.is_err());

    for expected in &versions {
        match next_event(&mut rx).await {
            StoreEvent::Committed(s) => assert_eq!(*s, *expected),
            other => panic!("expected Committed v{}, got {other:?}", expected.version),
        }
    }
    match next_event(&mut rx).await {
        StoreEvent::Deleted(r) => assert_eq!(r, name("cache")),
        other => panic!("expected Deleted, got {other:?}"),
    }
    assert!(matches!(rx.try_recv(), Err(TryRecvError::Empty)));
}
