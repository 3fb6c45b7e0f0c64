//! The SQLite store's unit tests: its per-connection settings here, the
//! grouping of client acks (`ack_groups.rs`) and its stored records
//! against the golden files (`golden.rs`). The behaviour it shares with
//! etcd is tested once for both in `tests/store/conformance/`.

mod ack_groups;
mod golden;

use crate::ring::SystemClock;
use crate::store::sqlite::*;

/// The settings durability depends on are per connection, so they can
/// only be checked from inside.
#[tokio::test]
async fn connection_is_durable() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("ringd.db"), 10, &SystemClock).unwrap();
    let (mode, synchronous, foreign_keys, user_version) = store
        .run(|conn, _| {
            let pragma =
                |name: &str| -> i64 { conn.pragma_query_value(None, name, |r| r.get(0)).unwrap() };
            let mode: String = conn
                .pragma_query_value(None, "journal_mode", |r| r.get(0))
                .unwrap();
            Ok((
                mode,
                pragma("synchronous"),
                pragma("foreign_keys"),
                pragma("user_version"),
            ))
        })
        .await
        .unwrap();
    assert_eq!(mode, "wal");
    assert_eq!(synchronous, 2, "FULL");
    assert_eq!(foreign_keys, 1);
    assert_eq!(user_version, SCHEMA_VERSION as i64);
}

/// Whether this process has `path` open.
fn is_open(path: &Path) -> bool {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
        .any(|target| target == path)
}

/// Dropping the store waits for its thread, so the file is closed
/// when the drop returns, and a restart in the same process opens it
/// afresh.
#[tokio::test]
async fn dropping_the_store_closes_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().canonicalize().unwrap().join("ringd.db");
    let store = SqliteStore::open(&db, 10, &SystemClock).unwrap();
    assert_eq!(store.list_rings().await.unwrap(), vec![]);
    assert!(is_open(&db));
    drop(store);
    assert!(!is_open(&db));
}

#[test]
fn retention_is_at_least_one() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("ringd.db"), 0, &SystemClock).unwrap();
    assert_eq!(store.retention(), 1);
}
