//! Client acks in the `client_acks` table (schema 2; kinds and failures
//! since schema 5).

use std::collections::HashMap;

use rusqlite::{params, Connection, OptionalExtension, Transaction, TransactionBehavior};
use time::OffsetDateTime;

use super::db_err;
use crate::placement::Fingerprint;
use crate::ring::{ApplyFailure, ClientAck, ClientId, ClientKind, RingName};
use crate::store::{Cause, StoreError};

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
        .map_err(|e| StoreError::corrupt_from(format!("stored ack time {ns}"), e))
}

/// Records a group of acks in one write transaction, with the effect of
/// recording them one after another in order, and returns each ack's own
/// result. An ack replaces its client's previous one if its ring exists
/// (`RingNotFound` otherwise, for that ack alone). On the way, each ack
/// purges every ack of every ring expired when it was received: writes are
/// rare enough (one per client per poll) that this keeps the table at the
/// size of the live clients without a background task.
///
/// If the transaction itself fails (the file is locked, the disk full …),
/// nothing is written and every ack of the group gets that error.
pub(super) fn put_acks(
    conn: &mut Connection,
    acks: &[(RingName, ClientAck)],
) -> Vec<Result<(), StoreError>> {
    match write_group(conn, acks) {
        Ok(results) => results,
        Err(e) => acks.iter().map(|_| Err(shared(&e))).collect(),
    }
}

/// The transaction of [`put_acks`]: the outer error fails the whole group,
/// the inner results are the acks' own.
fn write_group(
    conn: &mut Connection,
    acks: &[(RingName, ClientAck)],
) -> Result<Vec<Result<(), StoreError>>, StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(db_err)?;
    // Acks neither create nor delete rings, so each ring is looked up once.
    let mut rings: HashMap<&RingName, bool> = HashMap::new();
    let mut results = Vec::with_capacity(acks.len());
    for (ring, ack) in acks {
        let exists = match rings.get(ring) {
            Some(exists) => *exists,
            None => {
                let exists = ring_exists(&tx, ring)?;
                rings.insert(ring, exists);
                exists
            }
        };
        if !exists {
            results.push(Err(StoreError::RingNotFound(ring.clone())));
            continue;
        }
        let Ok(version) = i64::try_from(ack.version) else {
            results.push(Err(StoreError::unavailable(format!(
                "version {} is too large to store",
                ack.version
            ))));
            continue;
        };
        let failed_version = match ack.failure.as_ref().map(|f| i64::try_from(f.version)) {
            Some(Err(_)) => {
                results.push(Err(StoreError::unavailable(format!(
                    "failed version {} is too large to store",
                    ack.failure.as_ref().map_or(0, |f| f.version)
                ))));
                continue;
            }
            Some(Ok(v)) => Some(v),
            None => None,
        };
        tx.prepare_cached("DELETE FROM client_acks WHERE expires_ns <= ?1")
            .and_then(|mut purge| purge.execute([to_ns(ack.last_seen)]))
            .map_err(db_err)?;
        tx.prepare_cached(
            "INSERT INTO client_acks (ring, client_id, version, fingerprint, last_seen_ns,
                 expires_ns, kind, failed_version, failure)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
             ON CONFLICT (ring, client_id) DO UPDATE SET
                 version = excluded.version,
                 fingerprint = excluded.fingerprint,
                 last_seen_ns = excluded.last_seen_ns,
                 expires_ns = excluded.expires_ns,
                 kind = excluded.kind,
                 failed_version = excluded.failed_version,
                 failure = excluded.failure",
        )
        .and_then(|mut upsert| {
            upsert.execute(params![
                ring.as_str(),
                ack.client_id.as_str(),
                version,
                ack.fingerprint.to_string(),
                to_ns(ack.last_seen),
                to_ns(ack.expires_at),
                ack.kind.name(),
                failed_version,
                ack.failure.as_ref().map(|f| f.error.as_str()),
            ])
        })
        .map_err(db_err)?;
        results.push(Ok(()));
    }
    tx.commit().map_err(db_err)?;
    Ok(results)
}

fn ring_exists(tx: &Transaction<'_>, ring: &RingName) -> Result<bool, StoreError> {
    let found = tx
        .prepare_cached("SELECT 1 FROM rings WHERE name = ?1")
        .and_then(|mut stmt| stmt.query_row([ring.as_str()], |_| Ok(())).optional())
        .map_err(db_err)?;
    Ok(found.is_some())
}

/// One failure reported to every ack of a group. Transactions fail only
/// with the two kinds [`db_err`] produces; each ack gets the same kind and
/// text (a boxed cause cannot be cloned, so the copies carry its text).
fn shared(e: &StoreError) -> StoreError {
    let text = |source: &Option<Cause>| -> Option<Cause> {
        source.as_ref().map(|c| Cause::from(c.to_string()))
    };
    match e {
        StoreError::Corrupt { what, source } => StoreError::Corrupt {
            what: what.clone(),
            source: text(source),
        },
        StoreError::Unavailable { context, source } => StoreError::Unavailable {
            context: context.clone(),
            source: text(source),
        },
        other => StoreError::unavailable(other.to_string()),
    }
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
            "SELECT client_id, version, fingerprint, last_seen_ns, expires_ns, kind,
                 failed_version, failure
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
                row.get::<_, String>(5)?,
                row.get::<_, Option<i64>>(6)?,
                row.get::<_, Option<String>>(7)?,
            ))
        })
        .map_err(db_err)?;
    let mut out = Vec::new();
    for row in rows {
        let (client, version, fingerprint, last_seen, expires, kind, failed, failure) =
            row.map_err(db_err)?;
        let bad = |what: &str, e: Cause| {
            StoreError::corrupt_from(format!("ack of `{client}` in ring `{ring}`: {what}"), e)
        };
        out.push(ClientAck {
            client_id: ClientId::new(client.clone()).map_err(|e| bad("client id", e.into()))?,
            version: u64::try_from(version).map_err(|e| bad("version", e.into()))?,
            fingerprint: fingerprint
                .parse::<Fingerprint>()
                .map_err(|e| bad("fingerprint", e.into()))?,
            last_seen: from_ns(last_seen)?,
            expires_at: from_ns(expires)?,
            kind: match kind.as_str() {
                "library" => ClientKind::Library,
                "proxy" => ClientKind::Proxy,
                other => return Err(bad("kind", format!("unknown kind `{other}`").into())),
            },
            failure: match (failed, failure) {
                (Some(v), Some(error)) => Some(ApplyFailure {
                    version: u64::try_from(v).map_err(|e| bad("failed version", e.into()))?,
                    error,
                }),
                _ => None,
            },
        });
    }
    Ok(out)
}
