//! Rollout records in the `rollouts` table (schema 4).

use async_trait::async_trait;
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};

use super::{db_err, SqliteStore};
use crate::ring::rollout::{RolloutId, RolloutRecord};
use crate::ring::RingName;
use crate::store::{RolloutStore, StoreError, ROLLOUT_RETENTION};

pub(super) fn encode(r: &RolloutRecord) -> Result<String, StoreError> {
    serde_json::to_string(r).map_err(|e| {
        StoreError::unavailable_from(
            format!("cannot encode rollout {} of ring `{}`", r.id, r.ring),
            e,
        )
    })
}

pub(super) fn decode(ring: &str, id: i64, text: &str) -> Result<RolloutRecord, StoreError> {
    serde_json::from_str(text)
        .map_err(|e| StoreError::corrupt_from(format!("rollout {id} of ring `{ring}`"), e))
}

fn ring_exists(conn: &Connection, ring: &RingName) -> Result<bool, StoreError> {
    conn.query_row(
        "SELECT 1 FROM rings WHERE name = ?1",
        [ring.as_str()],
        |_| Ok(()),
    )
    .optional()
    .map(|r| r.is_some())
    .map_err(db_err)
}

fn create(conn: &mut Connection, mut record: RolloutRecord) -> Result<RolloutRecord, StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(db_err)?;
    let ring = record.ring.clone();
    if !ring_exists(&tx, &ring)? {
        return Err(StoreError::RingNotFound(ring));
    }
    let active: Option<i64> = tx
        .query_row(
            "SELECT id FROM rollouts WHERE ring = ?1 AND active = 1",
            [ring.as_str()],
            |row| row.get(0),
        )
        .optional()
        .map_err(db_err)?;
    if let Some(id) = active {
        return Err(StoreError::RolloutActive {
            ring,
            id: RolloutId(id as u64),
        });
    }
    let last: i64 = tx
        .query_row(
            "SELECT COALESCE(MAX(id), 0) FROM rollouts WHERE ring = ?1",
            [ring.as_str()],
            |row| row.get(0),
        )
        .map_err(db_err)?;
    record.id = RolloutId(last as u64 + 1);
    record.revision = 1;
    tx.execute(
        "INSERT INTO rollouts (ring, id, active, revision, record) VALUES (?1, ?2, ?3, 1, ?4)",
        params![
            ring.as_str(),
            last + 1,
            i64::from(record.state.is_active()),
            encode(&record)?
        ],
    )
    .map_err(db_err)?;
    // Keep the newest finished ones only.
    tx.execute(
        "DELETE FROM rollouts WHERE ring = ?1 AND active = 0 AND id <= ?2",
        params![ring.as_str(), last + 1 - ROLLOUT_RETENTION as i64],
    )
    .map_err(db_err)?;
    tx.commit().map_err(db_err)?;
    Ok(record)
}

fn update(conn: &mut Connection, record: &RolloutRecord) -> Result<(), StoreError> {
    let changed = conn
        .execute(
            "UPDATE rollouts SET active = ?1, revision = ?2, record = ?3
             WHERE ring = ?4 AND id = ?5 AND revision = ?6",
            params![
                i64::from(record.state.is_active()),
                record.revision as i64,
                encode(record)?,
                record.ring.as_str(),
                record.id.0 as i64,
                record.revision as i64 - 1
            ],
        )
        .map_err(db_err)?;
    if changed == 1 {
        return Ok(());
    }
    let exists = conn
        .query_row(
            "SELECT 1 FROM rollouts WHERE ring = ?1 AND id = ?2",
            params![record.ring.as_str(), record.id.0 as i64],
            |_| Ok(()),
        )
        .optional()
        .map_err(db_err)?;
    Err(match exists {
        Some(()) => StoreError::RolloutConflict {
            ring: record.ring.clone(),
            id: record.id,
        },
        None => StoreError::RolloutNotFound {
            ring: record.ring.clone(),
            id: record.id,
        },
    })
}

fn select(
    conn: &Connection,
    sql: &str,
    args: impl rusqlite::Params,
) -> Result<Vec<RolloutRecord>, StoreError> {
    let mut stmt = conn.prepare_cached(sql).map_err(db_err)?;
    let rows = stmt
        .query_map(args, |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, i64>(1)?,
                row.get::<_, String>(2)?,
            ))
        })
        .map_err(db_err)?;
    let mut out = Vec::new();
    for row in rows {
        let (ring, id, text) = row.map_err(db_err)?;
        out.push(decode(&ring, id, &text)?);
    }
    Ok(out)
}

#[async_trait]
impl RolloutStore for SqliteStore {
    async fn create_rollout(&self, record: RolloutRecord) -> Result<RolloutRecord, StoreError> {
        self.run(move |conn, _| create(conn, record)).await
    }

    async fn update_rollout(&self, record: &RolloutRecord) -> Result<(), StoreError> {
        let record = record.clone();
        self.run(move |conn, _| update(conn, &record)).await
    }

    async fn rollout(&self, ring: &RingName, id: RolloutId) -> Result<RolloutRecord, StoreError> {
        let r = ring.clone();
        let found = self
            .run(move |conn, _| {
                select(
                    conn,
                    "SELECT ring, id, record FROM rollouts WHERE ring = ?1 AND id = ?2",
                    params![r.as_str(), id.0 as i64],
                )
            })
            .await?;
        found
            .into_iter()
            .next()
            .ok_or_else(|| StoreError::RolloutNotFound {
                ring: ring.clone(),
                id,
            })
    }

    async fn rollouts(&self, ring: &RingName) -> Result<Vec<RolloutRecord>, StoreError> {
        let r = ring.clone();
        self.run(move |conn, _| {
            select(
                conn,
                "SELECT ring, id, record FROM rollouts WHERE ring = ?1 ORDER BY id DESC",
                [r.as_str()],
            )
        })
        .await
    }

    async fn latest_rollout(&self, ring: &RingName) -> Result<Option<RolloutRecord>, StoreError> {
        let r = ring.clone();
        let found = self
            .run(move |conn, _| {
                select(
                    conn,
                    "SELECT ring, id, record FROM rollouts WHERE ring = ?1 ORDER BY id DESC LIMIT 1",
                    [r.as_str()],
                )
            })
            .await?;
        Ok(found.into_iter().next())
    }

    async fn active_rollout(&self, ring: &RingName) -> Result<Option<RolloutRecord>, StoreError> {
        let r = ring.clone();
        let found = self
            .run(move |conn, _| {
                select(
                    conn,
                    "SELECT ring, id, record FROM rollouts WHERE ring = ?1 AND active = 1",
                    [r.as_str()],
                )
            })
            .await?;
        Ok(found.into_iter().next())
    }

    async fn active_rollouts(&self) -> Result<Vec<RolloutRecord>, StoreError> {
        self.run(move |conn, _| {
            select(
                conn,
                "SELECT ring, id, record FROM rollouts WHERE active = 1 ORDER BY ring",
                [],
            )
        })
        .await
    }
}
