//! The store operations as blocking functions on a connection. Each one
//! runs in a single transaction, so it sees and leaves a consistent state
//! even if another process has the same file open.

use rusqlite::{params, Connection, OptionalExtension, Transaction, TransactionBehavior};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use super::db_err;
use super::record::{decode_change, decode_snapshot, to_sql, SnapshotRow};
use crate::ring::{RingName, Snapshot};
use crate::store::{Cause, HistoryEntry, StoreError};

/// Inserts a version's row.
fn insert(tx: &Transaction<'_>, ring: &RingName, row: &SnapshotRow) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO snapshots (ring, version, created_at, fingerprint, change, snapshot)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            ring.as_str(),
            row.version,
            row.created_at,
            row.fingerprint,
            row.change,
            row.snapshot
        ],
    )
    .map_err(db_err)?;
    Ok(())
}

/// A version read back; negative means the file was tampered with.
fn from_sql(version: i64) -> Result<u64, StoreError> {
    u64::try_from(version)
        .map_err(|_| StoreError::corrupt(format!("stored version {version} is negative")))
}

/// `(latest, oldest)` retained versions of `ring`, or `None` if it does not exist.
fn bounds(conn: &Connection, ring: &RingName) -> Result<Option<(u64, u64)>, StoreError> {
    let row = conn
        .query_row(
            "SELECT latest_version, oldest_version FROM rings WHERE name = ?1",
            [ring.as_str()],
            |row| Ok((row.get::<_, i64>(0)?, row.get::<_, i64>(1)?)),
        )
        .optional()
        .map_err(db_err)?;
    row.map(|(latest, oldest)| Ok((from_sql(latest)?, from_sql(oldest)?)))
        .transpose()
}

fn existing_bounds(conn: &Connection, ring: &RingName) -> Result<(u64, u64), StoreError> {
    bounds(conn, ring)?.ok_or_else(|| StoreError::RingNotFound(ring.clone()))
}

/// A version that the `rings` row says is retained.
fn load(conn: &Connection, ring: &RingName, version: u64) -> Result<Snapshot, StoreError> {
    let json: Option<String> = conn
        .query_row(
            "SELECT snapshot FROM snapshots WHERE ring = ?1 AND version = ?2",
            params![ring.as_str(), to_sql(version)?],
            |row| row.get(0),
        )
        .optional()
        .map_err(db_err)?;
    let json = json.ok_or_else(|| {
        StoreError::corrupt(format!(
            "ring `{ring}` version {version} should be retained but is missing"
        ))
    })?;
    decode_snapshot(ring, version, &json)
}

/// A write transaction. `IMMEDIATE` takes the write lock before the first
/// read, so the version check and the write form one atomic
/// compare-and-swap even against another process on the same file.
fn write_tx(conn: &mut Connection) -> Result<Transaction<'_>, StoreError> {
    conn.transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(db_err)
}

/// A read transaction, so multi-statement reads see one consistent state.
fn read_tx(conn: &mut Connection) -> Result<Transaction<'_>, StoreError> {
    conn.transaction_with_behavior(TransactionBehavior::Deferred)
        .map_err(db_err)
}

pub(super) fn create_ring(conn: &mut Connection, first: &Snapshot) -> Result<(), StoreError> {
    let row = SnapshotRow::encode(first)?;
    let tx = write_tx(conn)?;
    if let Some((latest, _)) = bounds(&tx, &first.ring)? {
        return Err(StoreError::RingExists(Box::new(load(
            &tx,
            &first.ring,
            latest,
        )?)));
    }
    tx.execute(
        "INSERT INTO rings (name, latest_version, oldest_version, created_at)
         VALUES (?1, ?2, ?2, ?3)",
        params![first.ring.as_str(), row.version, row.created_at],
    )
    .map_err(db_err)?;
    insert(&tx, &first.ring, &row)?;
    tx.commit().map_err(db_err)
}

pub(super) fn commit(
    conn: &mut Connection,
    retention: u64,
    next: &Snapshot,
) -> Result<(), StoreError> {
    let row = SnapshotRow::encode(next)?;
    let tx = write_tx(conn)?;
    let (current, oldest) = existing_bounds(&tx, &next.ring)?;
    // Saturating: a version-0 snapshot can never follow anything, and it
    // conflicts with every ring since rings start at 1.
    let expected = next.version.saturating_sub(1);
    if current != expected || next.version == 0 {
        return Err(StoreError::VersionConflict { expected, current });
    }
    insert(&tx, &next.ring, &row)?;
    // Keep the newest `retention` versions. Versions at or below `floor`
    // go; `max` keeps `oldest` from moving back if retention was raised.
    let floor = next.version.saturating_sub(retention);
    let oldest = oldest.max(floor + 1);
    tx.execute(
        "DELETE FROM snapshots WHERE ring = ?1 AND version <= ?2",
        params![next.ring.as_str(), to_sql(floor)?],
    )
    .map_err(db_err)?;
    tx.execute(
        "UPDATE rings SET latest_version = ?2, oldest_version = ?3 WHERE name = ?1",
        params![next.ring.as_str(), row.version, to_sql(oldest)?],
    )
    .map_err(db_err)?;
    tx.commit().map_err(db_err)
}

pub(super) fn delete_ring(
    conn: &mut Connection,
    ring: &RingName,
    expected_version: Option<u64>,
) -> Result<(), StoreError> {
    let tx = write_tx(conn)?;
    let current: Option<i64> = tx
        .query_row(
            "SELECT latest_version FROM rings WHERE name = ?1",
            [ring.as_str()],
            |row| row.get(0),
        )
        .optional()
        .map_err(db_err)?;
    let Some(current) = current else {
        return Err(StoreError::RingNotFound(ring.clone()));
    };
    let current = from_sql(current)?;
    if let Some(expected) = expected_version {
        if expected != current {
            return Err(StoreError::VersionConflict { expected, current });
        }
    }
    // Snapshots go with the ring through ON DELETE CASCADE.
    tx.execute("DELETE FROM rings WHERE name = ?1", [ring.as_str()])
        .map_err(db_err)?;
    tx.commit().map_err(db_err)
}

pub(super) fn list_rings(conn: &mut Connection) -> Result<Vec<Snapshot>, StoreError> {
    let tx = read_tx(conn)?;
    // TEXT compares with the BINARY collation, i.e. byte order, which for
    // UTF-8 is the order of Rust's `String`/`RingName`.
    let mut stmt = tx
        .prepare(
            "SELECT r.name, r.latest_version, s.snapshot
             FROM rings r JOIN snapshots s ON s.ring = r.name AND s.version = r.latest_version
             ORDER BY r.name",
        )
        .map_err(db_err)?;
    let rows = stmt
        .query_map([], |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, i64>(1)?,
                row.get::<_, String>(2)?,
            ))
        })
        .map_err(db_err)?;
    let mut out = Vec::new();
    for row in rows {
        let (name, version, json) = row.map_err(db_err)?;
        let ring =
            RingName::new(name).map_err(|e| StoreError::corrupt_from("stored ring name", e))?;
        out.push(decode_snapshot(&ring, from_sql(version)?, &json)?);
    }
    Ok(out)
}

pub(super) fn latest(conn: &mut Connection, ring: &RingName) -> Result<Snapshot, StoreError> {
    let tx = read_tx(conn)?;
    let (latest, _) = existing_bounds(&tx, ring)?;
    load(&tx, ring, latest)
}

pub(super) fn snapshot(
    conn: &mut Connection,
    ring: &RingName,
    version: u64,
) -> Result<Snapshot, StoreError> {
    let tx = read_tx(conn)?;
    let (latest, oldest) = existing_bounds(&tx, ring)?;
    if version == 0 || version > latest {
        return Err(StoreError::VersionNotFound { version, latest });
    }
    if version < oldest {
        return Err(StoreError::VersionPruned { version, oldest });
    }
    load(&tx, ring, version)
}

pub(super) fn history(
    conn: &mut Connection,
    ring: &RingName,
    after: u64,
) -> Result<Vec<HistoryEntry>, StoreError> {
    let tx = read_tx(conn)?;
    existing_bounds(&tx, ring)?;
    // Reads the narrow columns only: listing 1,000 versions must not decode
    // 1,000 node lists.
    let mut stmt = tx
        .prepare(
            "SELECT version, created_at, fingerprint, change FROM snapshots
             WHERE ring = ?1 AND version > ?2 ORDER BY version",
        )
        .map_err(db_err)?;
    // Versions never exceed i64::MAX, so a larger `after` matches nothing.
    let after = i64::try_from(after).unwrap_or(i64::MAX);
    let rows = stmt
        .query_map(rusqlite::params![ring.as_str(), after], |row| {
            Ok((
                row.get::<_, i64>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, String>(2)?,
                row.get::<_, String>(3)?,
            ))
        })
        .map_err(db_err)?;
    let mut out = Vec::new();
    for row in rows {
        let (version, created_at, fingerprint, change) = row.map_err(db_err)?;
        let version = from_sql(version)?;
        let corrupt = |what: &str, e: Cause| {
            StoreError::corrupt_from(format!("{what} of ring `{ring}` version {version}"), e)
        };
        out.push(HistoryEntry {
            version,
            created_at: OffsetDateTime::parse(&created_at, &Rfc3339)
                .map_err(|e| corrupt("time", e.into()))?,
            fingerprint: fingerprint
                .parse::<crate::placement::Fingerprint>()
                .map_err(|e| corrupt("fingerprint", e.into()))?,
            change: decode_change(&change).map_err(|e| corrupt("change", e.into()))?,
        });
    }
    Ok(out)
}
