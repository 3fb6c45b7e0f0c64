//! How the connection's thread groups client acks. Each case first holds
//! the thread with a job that waits for a signal, queues work behind it,
//! and only then lets it go, so what queued together is known exactly.

use std::sync::Arc;
use std::time::{Duration, Instant};

use time::OffsetDateTime;

use crate::placement::{Algorithm, RingConfig};
use crate::ring::{ClientAck, ClientId, ManualClock, RingName, Role, Snapshot};
use crate::store::sqlite::worker::MAX_GROUP;
use crate::store::sqlite::{AckStats, SqliteStore};
use crate::store::{Store, StoreError, DEFAULT_RETENTION};

fn name(s: &str) -> RingName {
    RingName::new(s).unwrap()
}

fn at(secs: i64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp(1_750_000_000 + secs).unwrap()
}

fn ring(s: &str) -> Snapshot {
    let config = RingConfig::new(Algorithm::Ring);
    Snapshot::first(name(s), config, Role::Admin, at(0))
        .unwrap()
        .0
}

fn ack(client: &str, first: &Snapshot) -> ClientAck {
    ClientAck {
        client_id: ClientId::new(client).unwrap(),
        version: 1,
        fingerprint: first.fingerprint,
        last_seen: at(1),
        expires_at: at(61),
        kind: crate::ring::ClientKind::Library,
        failure: None,
    }
}

async fn open(rings: &[&Snapshot]) -> (tempfile::TempDir, Arc<SqliteStore>) {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(
        &dir.path().join("ringd.db"),
        DEFAULT_RETENTION,
        &ManualClock::new(at(0)),
    )
    .unwrap();
    for r in rings {
        store.create_ring(r).await.unwrap();
    }
    (dir, Arc::new(store))
}

/// Occupies the store's thread until the returned sender is used.
async fn hold(store: &Arc<SqliteStore>) -> std::sync::mpsc::Sender<()> {
    let (release, wait) = std::sync::mpsc::channel::<()>();
    let (started, running) = tokio::sync::oneshot::channel();
    let store = Arc::clone(store);
    tokio::spawn(async move {
        store
            .run(move |_, _| {
                started.send(()).unwrap();
                wait.recv().unwrap();
                Ok(())
            })
            .await
    });
    running.await.unwrap();
    release
}

/// Waits until `n` jobs wait in the queue.
async fn queued(store: &SqliteStore, n: usize) {
    let until = Instant::now() + Duration::from_secs(10);
    while store.worker.queued() != n {
        assert!(
            Instant::now() < until,
            "{} queued, not {n}",
            store.worker.queued()
        );
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

fn put(
    store: &Arc<SqliteStore>,
    ring: &str,
    ack: ClientAck,
) -> tokio::task::JoinHandle<Result<(), StoreError>> {
    let (store, ring) = (Arc::clone(store), name(ring));
    tokio::spawn(async move { store.put_ack(&ring, &ack).await })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn acks_queued_behind_a_job_share_a_transaction() {
    let cache = ring("cache");
    let (_dir, store) = open(&[&cache]).await;
    let before = store.ack_stats();
    let release = hold(&store).await;
    // One group's worth and 44 more; one of them for a ring that does not
    // exist, which fails alone.
    let count = MAX_GROUP + 44;
    let missing = 100;
    let mut tasks = Vec::new();
    for i in 0..count {
        let target = if i == missing { "missing" } else { "cache" };
        tasks.push(put(&store, target, ack(&format!("client-{i:03}"), &cache)));
    }
    queued(&store, count).await;
    release.send(()).unwrap();
    for (i, task) in tasks.into_iter().enumerate() {
        let result = task.await.unwrap();
        if i == missing {
            assert!(
                matches!(&result, Err(StoreError::RingNotFound(r)) if *r == name("missing")),
                "{result:?}"
            );
        } else {
            assert!(result.is_ok(), "ack {i}: {result:?}");
        }
    }
    assert_eq!(
        store.ack_stats(),
        AckStats {
            acks: before.acks + count as u64,
            transactions: before.transactions + 2,
        }
    );
    let stored: Vec<String> = store
        .list_acks(&name("cache"), at(2))
        .await
        .unwrap()
        .iter()
        .map(|a| a.client_id.to_string())
        .collect();
    let expected: Vec<String> = (0..count)
        .filter(|i| *i != missing)
        .map(|i| format!("client-{i:03}"))
        .collect();
    assert_eq!(stored, expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn another_job_ends_the_group_and_keeps_its_place() {
    let cache = ring("cache");
    let (_dir, store) = open(&[&cache]).await;
    let before = store.ack_stats();
    let release = hold(&store).await;
    let a = put(&store, "cache", ack("web-a", &cache));
    queued(&store, 1).await;
    let b = put(&store, "cache", ack("web-b", &cache));
    queued(&store, 2).await;
    let deleter = Arc::clone(&store);
    let delete = tokio::spawn(async move { deleter.delete_ring(&name("cache"), None).await });
    queued(&store, 3).await;
    let c = put(&store, "cache", ack("web-c", &cache));
    queued(&store, 4).await;
    release.send(()).unwrap();

    // The acks queued before the deletion ran before it, the one after it
    // found the ring gone.
    a.await.unwrap().unwrap();
    b.await.unwrap().unwrap();
    delete.await.unwrap().unwrap();
    let late = c.await.unwrap();
    assert!(
        matches!(&late, Err(StoreError::RingNotFound(r)) if *r == name("cache")),
        "{late:?}"
    );
    assert_eq!(
        store.ack_stats(),
        AckStats {
            acks: before.acks + 3,
            transactions: before.transactions + 2,
        }
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failed_transaction_fails_every_ack_of_its_group() {
    let cache = ring("cache");
    let (dir, store) = open(&[&cache]).await;
    let release = hold(&store).await;
    let tasks: Vec<_> = ["web-a", "web-b", "web-c"]
        .into_iter()
        .map(|client| put(&store, "cache", ack(client, &cache)))
        .collect();
    queued(&store, 3).await;
    // Another process holds the write lock past the busy timeout.
    let other = rusqlite::Connection::open(dir.path().join("ringd.db")).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    release.send(()).unwrap();
    for task in tasks {
        let err = task.await.unwrap().unwrap_err();
        assert!(
            matches!(&err, StoreError::Unavailable { .. }) && err.to_string().contains("locked"),
            "{err:?}"
        );
    }
    other.execute_batch("ROLLBACK").unwrap();
    assert_eq!(store.list_acks(&name("cache"), at(2)).await.unwrap(), []);
    // The lock is gone, and so is the failure.
    store
        .put_ack(&name("cache"), &ack("web-a", &cache))
        .await
        .unwrap();
    assert_eq!(
        store.list_acks(&name("cache"), at(2)).await.unwrap().len(),
        1
    );
}

#[tokio::test]
async fn a_panicking_operation_fails_alone() {
    let cache = ring("cache");
    let (_dir, store) = open(&[&cache]).await;
    let err = store
        .run(|_, _| -> Result<(), StoreError> { panic!("deliberate, in a test") })
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::Unavailable { source: None, .. }),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "store unavailable: the store operation failed unexpectedly"
    );
    // The thread goes on serving.
    assert_eq!(store.latest(&name("cache")).await.unwrap(), cache);
    store
        .put_ack(&name("cache"), &ack("web-a", &cache))
        .await
        .unwrap();
}
