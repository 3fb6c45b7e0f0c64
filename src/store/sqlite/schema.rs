//! Opening a database file: connection settings and schema migrations.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, TransactionBehavior};

use super::db_err;
use crate::store::StoreError;

/// Migrations in order; migration `n` (1-based) brings the schema from
/// version `n - 1` to `n`. Embedded so the binary carries its own schema
/// and never depends on files next to it at run time. Append only: a
/// released migration must never change, or databases created by older
/// binaries would silently differ from new ones.
const MIGRATIONS: &[&str] = &[
    include_str!("../../../migrations/sqlite/0001_init.sql"),
    include_str!("../../../migrations/sqlite/0002_client_acks.sql"),
    include_str!("../../../migrations/sqlite/0003_leases.sql"),
    include_str!("../../../migrations/sqlite/0004_rollouts.sql"),
    include_str!("../../../migrations/sqlite/0005_client_kinds.sql"),
];

/// The schema version this binary creates and understands.
pub const SCHEMA_VERSION: u64 = MIGRATIONS.len() as u64;

/// How long a statement waits for a lock held by another connection (for
/// example a second process opened on the same file, or a backup tool)
/// before failing with "database is locked".
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Opens (creating if needed) the database at `path`, configures the
/// connection for durability and brings the schema up to date.
pub(super) fn open(path: &Path) -> Result<Connection, StoreError> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| {
            StoreError::unavailable_from(format!("cannot create directory {}", parent.display()), e)
        })?;
    }
    let mut conn = Connection::open(path).map_err(|e| {
        StoreError::unavailable_from(format!("cannot open database {}", path.display()), e)
    })?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(db_err)?;
    // Refuse a newer schema before anything below writes to the file, so
    // an old binary started by mistake leaves the database as it found it.
    check_supported(user_version(&conn)?)?;
    configure(&conn)?;
    migrate(&mut conn)?;
    Ok(conn)
}

/// Per-connection settings. WAL lets readers (including backup tools)
/// proceed during a write; `synchronous=FULL` makes SQLite fsync the WAL
/// at every commit, so a commit that returned is on disk and survives a
/// crash or power loss, and a torn write is rolled back on recovery.
fn configure(conn: &Connection) -> Result<(), StoreError> {
    let mode: String = conn
        .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))
        .map_err(db_err)?;
    if !mode.eq_ignore_ascii_case("wal") {
        // Some file systems (network mounts) cannot host a WAL. Failing
        // loudly beats silently running with different crash semantics.
        return Err(StoreError::unavailable(format!(
            "cannot enable write-ahead logging (journal mode is {mode}); put the database on a local file system"
        )));
    }
    conn.pragma_update(None, "synchronous", "FULL")
        .map_err(db_err)?;
    // On macOS a plain fsync does not flush the drive's cache; elsewhere
    // this is a no-op.
    conn.pragma_update(None, "fullfsync", "ON")
        .map_err(db_err)?;
    // SQLite leaves foreign keys off by default; deleting a ring relies on
    // the cascade to remove its snapshots.
    conn.pragma_update(None, "foreign_keys", "ON")
        .map_err(db_err)?;
    Ok(())
}

/// The schema version recorded in the file (0 for a new file).
fn user_version(conn: &Connection) -> Result<u64, StoreError> {
    let v: i64 = conn
        .pragma_query_value(None, "user_version", |row| row.get(0))
        .map_err(db_err)?;
    u64::try_from(v).map_err(|_| StoreError::corrupt(format!("schema version {v} is invalid")))
}

fn check_supported(found: u64) -> Result<(), StoreError> {
    if found > SCHEMA_VERSION {
        return Err(StoreError::SchemaTooNew {
            found,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(())
}

/// Applies every pending migration in one transaction, so a crash or a
/// failing migration leaves the file at its old version rather than half
/// way. `IMMEDIATE` takes the write lock up front, so two processes opening
/// the same new file cannot both run the migrations.
fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(db_err)?;
    // Re-read under the lock: another process may have migrated meanwhile.
    let found = user_version(&tx)?;
    check_supported(found)?;
    if found == SCHEMA_VERSION {
        return Ok(());
    }
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        tx.execute_batch(sql).map_err(|e| {
            StoreError::unavailable_from(format!("schema migration {} failed", index + 1), e)
        })?;
    }
    // SQLite integers are signed; the schema version is a small count.
    tx.pragma_update(None, "user_version", SCHEMA_VERSION as i64)
        .map_err(db_err)?;
    tx.commit().map_err(db_err)
}
