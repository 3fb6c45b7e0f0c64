//! Client acks in the `client_acks` table (schema 2).

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use time::OffsetDateTime;

use super::db_err;
use crate::placement::Fingerprint;
use crate::ring::{ClientId, RingName};
use crate::store::{ClientAck, StoreError};

/// A time as stored: Unix nanoseconds. Saturates outside 1677–2262, far
/// beyond any ack's lifetime, rather than failing.
fn to_ns(t: OffsetDateTime) -> i64 {
    i64::try_from(t.unix_timestamp_nanos()).unwrap_or(if t.unix_timestamp() < 0 {
        i64::MIN
    } else {
        i64::MAX
    })
}

fn from_ns(ns: i64) -> Result<OffsetDateTime, StoreError> {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(ns))
        .map_err(|e| StoreError::Corrupt(format!("stored ack time {ns}: {e}")))
}

/// Replaces the client's ack if the ring exists, and purges every expired
/// ack of every ring on the way: writes are rare enough (one per client
/// per poll) that this keeps the table at the size of the live clients
/// without a background task.
pub(super) fn put_ack(
    conn: &mut Connection,
    ring: &RingName,
    ack: &ClientAck,
) -> Result<(), StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(db_err)?;
    let exists = tx
        .query_row(
            "SELECT 1 FROM rings WHERE name = ?1",
            [ring.as_str()],
            |_| Ok(()),
        )
        .optional()
        .map_err(db_err)?;
    if exists.is_none() {
        return Err(StoreError::RingNotFound(ring.clone()));
    }
    let version = i64::try_from(ack.version).map_err(|_| {
        StoreError::Unavailable(format!("version {} is too large to store", ack.version))
    })?;
    tx.execute(
        "DELETE FROM client_acks WHERE expires_ns <= ?1",
        [to_ns(ack.last_seen)],
    )
    .map_err(db_err)?;
    tx.execute(
        "INSERT INTO client_acks (ring, client_id, version, fingerprint, last_seen_ns, expires_ns)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (ring, client_id) DO UPDATE SET
             version = excluded.version,
             fingerprint = excluded.fingerprint,
             last_seen_ns = excluded.last_seen_ns,
             expires_ns = excluded.expires_ns",
        params![
            ring.as_str(),
            ack.client_id.as_str(),
            version,
            ack.fingerprint.to_string(),
            to_ns(ack.last_seen),
            to_ns(ack.expires_at),
        ],
    )
    .map_err(db_err)?;
    tx.commit().map_err(db_err)
}

/// The ring's acks live at `now`, by client id. Expired rows are skipped
/// here, not deleted: a read stays a read.
pub(super) fn list_acks(
    conn: &mut Connection,
    ring: &RingName,
    now: OffsetDateTime,
) -> Result<Vec<ClientAck>, StoreError> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT client_id, version, fingerprint, last_seen_ns, expires_ns
             FROM client_acks WHERE ring = ?1 AND expires_ns > ?2
             ORDER BY client_id",
        )
        .map_err(db_err)?;
    let rows = stmt
        .query_map(params![ring.as_str(), to_ns(now)], |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, i64>(1)?,
                row.get::<_, String>(2)?,
                row.get::<_, i64>(3)?,
                row.get::<_, i64>(4)?,
            ))
        })
        .map_err(db_err)?;
    let mut out = Vec::new();
    for row in rows {
        let (client, version, fingerprint, last_seen, expires) = row.map_err(db_err)?;
        let bad = |what: &str, e: &dyn std::fmt::Display| {
            StoreError::Corrupt(format!("ack of `{client}` in ring `{ring}`: {what}: {e}"))
        };
        out.push(ClientAck {
            client_id: ClientId::new(client.clone()).map_err(|e| bad("client id", &e))?,
            version: u64::try_from(version).map_err(|e| bad("version", &e))?,
            fingerprint: fingerprint
                .parse::<Fingerprint>()
                .map_err(|e| bad("fingerprint", &e))?,
            last_seen: from_ns(last_seen)?,
            expires_at: from_ns(expires)?,
        });
    }
    Ok(out)
}
