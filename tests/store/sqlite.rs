//! The SQLite store: the shared conformance cases, plus what only a file
//! on disk can show (reopening, expiry by the clock, schema versions, damage,
//! being killed).
#![cfg(feature = "server")]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use crate::conformance::{add_node, chain, first, name, store_all, Backend};
use ringd::placement::NodeId;
use ringd::ring::{Clock, ManualClock, NodeHealth, SystemClock};
use ringd::store::sqlite::{SqliteStore, SCHEMA_VERSION};
use ringd::store::{LeaseError, Store, StoreError, DEFAULT_RETENTION};
use tempfile::TempDir;

/// A fresh store in its own temporary directory, deleted with the guard.
async fn open(retention: u64) -> (TempDir, Arc<dyn Store>) {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("ringd.db"), retention, &SystemClock).unwrap();
    (dir, Arc::new(store))
}

store_conformance_tests!(open);

/// A database file in its own temporary directory, deleted with it; each
/// store opened on it is ringd started again on the same file.
struct SqlitePath {
    dir: TempDir,
}

impl SqlitePath {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }
}

impl Backend for SqlitePath {
    const NAME: &'static str = "sqlite";

    async fn open(&self, clock: Arc<ManualClock>) -> Arc<dyn Store> {
        let db = self.dir.path().join("ringd.db");
        Arc::new(SqliteStore::open(&db, DEFAULT_RETENTION, &*clock).unwrap())
    }
}

lease_and_leadership_conformance_tests!(|| async { SqlitePath::new() });

fn node(id: &str) -> NodeId {
    NodeId::new(id).unwrap()
}

/// Sets a column of one stored version directly in the file.
fn tamper(db: &Path, column: &str, version: i64, value: &str) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let sql = format!("UPDATE snapshots SET {column} = ?1 WHERE version = ?2");
    assert_eq!(
        conn.execute(&sql, rusqlite::params![value, version])
            .unwrap(),
        1
    );
}

#[tokio::test]
async fn data_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ringd.db");
    let versions = chain("cache", 5);
    {
        let store = SqliteStore::open(&db, 3, &SystemClock).unwrap();
        store_all(&store, &versions).await;
        let (other, _) = first("other");
        store.create_ring(&other).await.unwrap();
    }
    // A larger retention does not bring pruned versions back.
    let store = SqliteStore::open(&db, DEFAULT_RETENTION, &SystemClock).unwrap();
    assert_eq!(store.latest(&name("cache")).await.unwrap(), versions[4]);
    let kept: Vec<u64> = store
        .history(&name("cache"))
        .await
        .unwrap()
        .iter()
        .map(|h| h.version)
        .collect();
    assert_eq!(kept, vec![3, 4, 5]);
    assert!(matches!(
        store.snapshot(&name("cache"), 2).await,
        Err(StoreError::VersionPruned {
            version: 2,
            oldest: 3
        })
    ));
    let names: Vec<String> = store
        .list_rings()
        .await
        .unwrap()
        .iter()
        .map(|s| s.ring.to_string())
        .collect();
    assert_eq!(names, ["cache", "other"]);
    drop(store);

    // A smaller retention applies from the next commit.
    let store = SqliteStore::open(&db, 2, &SystemClock).unwrap();
    let (v6, _) = add_node(&versions[4], &versions[4].placement().unwrap(), "node-6");
    store.commit(&v6).await.unwrap();
    let kept: Vec<u64> = store
        .history(&name("cache"))
        .await
        .unwrap()
        .iter()
        .map(|h| h.version)
        .collect();
    assert_eq!(kept, vec![5, 6]);
}

/// SQLite expires a lease by the time it is given: live to the instant
/// of its deadline, expired the microsecond after, when renewing it is
/// refused and registering again gives a new id. (etcd expires leases
/// itself, in real time: `tests/etcd/leases.rs`.)
#[tokio::test]
async fn a_lease_expires_when_the_clock_passes_its_deadline() {
    let (file, clock) = (SqlitePath::new(), crate::conformance::clock_at(0));
    let store = file.open(clock.clone()).await;
    let (ring, a, ttl) = (name("cache"), node("a"), Duration::from_secs(10));
    store.create_ring(&first("cache").0).await.unwrap();
    let granted = store.grant_lease(&ring, &a, ttl, clock.now()).await;
    let (id, deadline) = granted.map(|l| (l.id, l.deadline)).unwrap();
    let renewed = store.renew_lease(&ring, &a, id, deadline).await.unwrap();
    assert_eq!(renewed.deadline, deadline + ttl);

    let now = renewed.deadline + time::Duration::MICROSECOND;
    let health = store.leases(&ring, now)[&a].health(now);
    assert_eq!(health, NodeHealth::Unhealthy);
    let refused = store.renew_lease(&ring, &a, id, now).await;
    assert!(
        matches!(refused, Err(LeaseError::Expired { deadline }) if deadline == renewed.deadline),
        "{refused:?}"
    );
    let back = store.grant_lease(&ring, &a, ttl, now).await.unwrap();
    assert_ne!(back.id, id);
    assert_eq!(back.health(now), NodeHealth::Healthy);
}

#[tokio::test]
async fn too_new_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ringd.db");
    drop(SqliteStore::open(&db, DEFAULT_RETENTION, &SystemClock).unwrap());
    // Five migrations: the rings and snapshots, client acks, leases,
    // rollouts, client kinds and failures.
    assert_eq!(SCHEMA_VERSION, 5);
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.pragma_update(None, "user_version", 6).unwrap();
    drop(conn);

    let err = SqliteStore::open(&db, DEFAULT_RETENTION, &SystemClock).unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::SchemaTooNew {
                found: 6,
                supported: 5
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("upgrade ringd"), "{err}");
    // Refusing leaves the file as the newer binary wrote it.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let v: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(v, 6);
}

#[tokio::test]
async fn open_creates_missing_parent_directories() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("var/lib/ringd/ringd.db");
    let store = SqliteStore::open(&db, DEFAULT_RETENTION, &SystemClock).unwrap();
    assert!(db.is_file());
    assert_eq!(store.path(), db);
    assert_eq!(store.list_rings().await.unwrap(), vec![]);
}

#[tokio::test]
async fn damaged_rows_are_reported_as_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ringd.db");
    let versions = chain("cache", 3);
    store_all(
        &SqliteStore::open(&db, DEFAULT_RETENTION, &SystemClock).unwrap(),
        &versions,
    )
    .await;
    tamper(&db, "snapshot", 2, "{not json");
    tamper(&db, "change", 3, "[]");
    // Version 1's row now claims to be version 3.
    tamper(&db, "snapshot", 1, &stored_row(&db, 3));

    let store = SqliteStore::open(&db, DEFAULT_RETENTION, &SystemClock).unwrap();
    let ring = name("cache");
    for v in [1, 2] {
        let err = store.snapshot(&ring, v).await.unwrap_err();
        assert!(matches!(err, StoreError::Corrupt { .. }), "v{v}: {err:?}");
    }
    assert!(matches!(
        store.history(&ring).await,
        Err(StoreError::Corrupt { .. })
    ));
    // Undamaged data stays readable.
    assert_eq!(store.latest(&ring).await.unwrap(), versions[2]);
}

#[test]
fn a_file_that_is_not_a_database_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ringd.db");
    std::fs::write(&db, vec![b'x'; 4096]).unwrap();
    let err = SqliteStore::open(&db, DEFAULT_RETENTION, &SystemClock).unwrap_err();
    // The cause is SQLite's own error, kept whole.
    let cause = match &err {
        StoreError::Corrupt {
            source: Some(c), ..
        } => c.downcast_ref::<rusqlite::Error>(),
        _ => None,
    };
    assert!(cause.is_some(), "{err:?}");
    assert_eq!(
        err.to_string(),
        "stored data is corrupt: file is not a database"
    );
}

/// Set in the child process of `acknowledged_commits_survive_kill`.
const WRITER_DB: &str = "RINGD_TEST_WRITER_DB";

/// The child half of `acknowledged_commits_survive_kill`: commits forever,
/// printing each version once `commit` has returned. Does nothing in a
/// normal test run.
#[tokio::test]
async fn child_commits_until_it_is_killed() {
    let Some(db) = std::env::var_os(WRITER_DB) else {
        return;
    };
    let store = SqliteStore::open(Path::new(&db), DEFAULT_RETENTION, &SystemClock).unwrap();
    let (mut snapshot, mut placement) = first("cache");
    store.create_ring(&snapshot).await.unwrap();
    println!("acked 1");
    loop {
        let node = format!("node-{}", snapshot.version % 50);
        (snapshot, placement) = add_node(&snapshot, &placement, &node);
        store.commit(&snapshot).await.unwrap();
        println!("acked {}", snapshot.version);
    }
}

/// SIGKILL a process in the middle of committing: every version it was
/// told was committed is there, the file opens cleanly and nothing is
/// half-written. (A process kill leaves the OS page cache intact; power
/// loss is covered by `synchronous=FULL`, which this cannot simulate.)
#[test]
fn acknowledged_commits_survive_kill() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ringd.db");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "sqlite::child_commits_until_it_is_killed",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(WRITER_DB, &db)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let acked_in = |line: &str| {
        line.strip_prefix("acked ")
            .map(|v| v.parse::<u64>().unwrap())
    };
    let mut acked = 0;
    while acked < 40 {
        let line = lines.next().expect("the writer exited early").unwrap();
        acked = acked_in(&line).unwrap_or(acked);
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // Acknowledgements already in the pipe when the kill landed count too.
    for line in lines {
        acked = acked_in(&line.unwrap()).unwrap_or(acked);
    }

    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let store = SqliteStore::open(&db, DEFAULT_RETENTION, &SystemClock).unwrap();
        let ring = name("cache");
        let latest = store.latest(&ring).await.unwrap();
        // At most one commit can have landed without being printed.
        assert!(
            latest.version == acked || latest.version == acked + 1,
            "acked {acked}, stored {}",
            latest.version
        );
        let history = store.history(&ring).await.unwrap();
        let versions: Vec<u64> = history.iter().map(|h| h.version).collect();
        assert_eq!(versions, (1..=latest.version).collect::<Vec<_>>());
        for v in 1..=latest.version {
            let s = store.snapshot(&ring, v).await.unwrap();
            assert_eq!(s.placement().unwrap().fingerprint(), s.fingerprint);
        }
    });
}

/// The bundled SQLite is past CVE-2025-6965 (memory corruption through
/// aggregate terms exceeding the available columns), fixed in 3.50.2.
#[test]
fn linked_sqlite_has_the_cve_2025_6965_fix() {
    let number = rusqlite::version_number();
    assert!(
        number >= 3_050_002,
        "SQLite {} is too old",
        rusqlite::version()
    );
    let parts: Vec<u32> = rusqlite::version()
        .split('.')
        .map(|p| p.parse().unwrap())
        .collect();
    assert_eq!(
        parts[0] * 1_000_000 + parts[1] * 1_000 + parts[2],
        u32::try_from(number).unwrap(),
        "version string and number agree"
    );
}

/// Version 4 of `jump_chain("heavy")` as its row holds it: the bucket
/// order as runs.
const RUNS_ROW: &str = r#"{"ring":"heavy","version":4,"created_at":"2025-06-15T15:06:43.123456789Z","config":{"algorithm":"jump","hash":"xxh3","vnodes_per_weight":160,"replication_factor":3,"zone_aware":false},"nodes":[{"id":"node-3","address":"node-3.internal:11211","weight":3,"labels":{"rack":"r0"},"state":"active"}],"fingerprint":"fcb34de3d0f9a18d8a1918bca10104dc84b12cafed5e2adc14970f1b7b203426","bucket_runs":[[null,2],["node-3",3]],"change":{"ops":[{"op":"remove","id":"node-2"}],"reason":"remove node-2","role":"admin","moved_fraction":0.4000000000000001}}"#;

/// The same version as rows written before bucket orders were stored as
/// runs (and `table_size` for `maglev` only) hold it: one entry per bucket.
const PER_BUCKET_ROW: &str = r#"{"ring":"heavy","version":4,"created_at":"2025-06-15T15:06:43.123456789Z","config":{"algorithm":"jump","hash":"xxh3","vnodes_per_weight":160,"table_size":65537,"replication_factor":3,"zone_aware":false},"nodes":[{"id":"node-3","address":"node-3.internal:11211","weight":3,"labels":{"rack":"r0"},"state":"active"}],"fingerprint":"fcb34de3d0f9a18d8a1918bca10104dc84b12cafed5e2adc14970f1b7b203426","buckets":[null,null,"node-3","node-3","node-3"],"change":{"ops":[{"op":"remove","id":"node-2"}],"reason":"remove node-2","role":"admin","moved_fraction":0.4000000000000001}}"#;

fn stored_row(db: &Path, version: i64) -> String {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row(
        "SELECT snapshot FROM snapshots WHERE version = ?1",
        [version],
        |r| r.get(0),
    )
    .unwrap()
}

#[tokio::test]
async fn jump_orders_are_stored_as_runs_and_old_per_bucket_rows_still_read() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ringd.db");
    let versions = crate::conformance::jump_chain("heavy");
    store_all(
        &SqliteStore::open(&db, DEFAULT_RETENTION, &SystemClock).unwrap(),
        &versions,
    )
    .await;
    assert_eq!(stored_row(&db, 4), RUNS_ROW);

    tamper(&db, "snapshot", 4, PER_BUCKET_ROW);
    let store = SqliteStore::open(&db, DEFAULT_RETENTION, &SystemClock).unwrap();
    let ring = name("heavy");
    let read = store.latest(&ring).await.unwrap();
    assert_eq!(read, versions[3]);
    assert_eq!(store.snapshot(&ring, 4).await.unwrap(), versions[3]);
    let placement = read.placement().unwrap();
    assert_eq!(
        placement.fingerprint().to_string(),
        "fcb34de3d0f9a18d8a1918bca10104dc84b12cafed5e2adc14970f1b7b203426"
    );
    // A commit on top of the old row continues its order, as runs.
    let (v5, _) = add_node(&read, &placement, "node-5");
    store.commit(&v5).await.unwrap();
    assert_eq!(store.latest(&ring).await.unwrap(), v5);
    let row5: serde_json::Value = serde_json::from_str(&stored_row(&db, 5)).unwrap();
    assert_eq!(
        row5["bucket_runs"],
        serde_json::json!([["node-5", 2], ["node-3", 3]])
    );
    assert_eq!(row5.get("buckets"), None);
}
