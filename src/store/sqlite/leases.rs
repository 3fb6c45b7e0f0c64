//! Leases on the embedded store: deadlines in memory, rows in the
//! `leases` table (schema 3).
//!
//! A renewal is a map update and never a disk write. A row is written only
//! when a registration creates a lease or changes its TTL, and on release;
//! a registration that only renews writes nothing either. At start-up
//! every stored live lease gets a fresh deadline of one full TTL from then
//! (the grace), so a node renewing through a restart keeps its lease id
//! and is never counted as missed.

use std::collections::HashMap;
use std::time::Duration;

use async_trait::async_trait;
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use time::OffsetDateTime;

use super::{db_err, SqliteStore};
use crate::placement::NodeId;
use crate::ring::{LeaseId, NodeHealth, RingName};
use crate::store::{live, new_lease_id, Lease, LeaseError, LeaseStore, LeaseTable, StoreError};

/// A lease's row.
struct Row {
    ring: RingName,
    node: NodeId,
    id: String,
    ttl_ms: i64,
    released_ns: Option<i64>,
}

impl Row {
    fn of(ring: &RingName, node: &NodeId, lease: &Lease) -> Self {
        Self {
            ring: ring.clone(),
            node: node.clone(),
            id: lease.id.to_string(),
            // A TTL is at most an hour, far inside an i64 of milliseconds.
            ttl_ms: i64::try_from(lease.ttl.as_millis()).unwrap_or(i64::MAX),
            released_ns: lease.released.then(|| to_ns(lease.deadline)),
        }
    }
}

/// A time as stored: Unix nanoseconds, saturating far outside any lease.
fn to_ns(t: OffsetDateTime) -> i64 {
    i64::try_from(t.unix_timestamp_nanos()).unwrap_or(i64::MAX)
}

/// Writes `row`, replacing the node's previous lease; `RingNotFound` if
/// the ring is gone (checked in the same transaction).
fn put(conn: &mut Connection, row: &Row) -> Result<(), StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(db_err)?;
    let exists = tx
        .prepare_cached("SELECT 1 FROM rings WHERE name = ?1")
        .and_then(|mut s| s.query_row([row.ring.as_str()], |_| Ok(())).optional())
        .map_err(db_err)?;
    if exists.is_none() {
        return Err(StoreError::RingNotFound(row.ring.clone()));
    }
    tx.prepare_cached(
        "INSERT INTO leases (ring, node, lease_id, ttl_ms, released_ns)
         VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (ring, node) DO UPDATE SET
             lease_id = excluded.lease_id,
             ttl_ms = excluded.ttl_ms,
             released_ns = excluded.released_ns",
    )
    .and_then(|mut s| {
        s.execute(params![
            row.ring.as_str(),
            row.node.as_str(),
            row.id,
            row.ttl_ms,
            row.released_ns
        ])
    })
    .map_err(db_err)?;
    tx.commit().map_err(db_err)
}

/// Deletes the rows of `nodes` of `ring`.
fn delete(conn: &mut Connection, ring: &RingName, nodes: &[NodeId]) -> Result<(), StoreError> {
    let tx = conn.transaction().map_err(db_err)?;
    for node in nodes {
        tx.prepare_cached("DELETE FROM leases WHERE ring = ?1 AND node = ?2")
            .and_then(|mut s| s.execute(params![ring.as_str(), node.as_str()]))
            .map_err(db_err)?;
    }
    tx.commit().map_err(db_err)
}

/// Every stored lease, each live one with a fresh deadline of one TTL
/// from `start` (the grace after a restart); a released one keeps its
/// release time as deadline and last heartbeat.
pub(super) fn load(conn: &Connection, start: OffsetDateTime) -> Result<LeaseTable, StoreError> {
    let table = LeaseTable::default();
    let mut stmt = conn
        .prepare("SELECT ring, node, lease_id, ttl_ms, released_ns FROM leases")
        .map_err(db_err)?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, Option<i64>>(4)?,
            ))
        })
        .map_err(db_err)?;
    for row in rows {
        let (ring, node, id, ttl_ms, released_ns) = row.map_err(db_err)?;
        let bad = |what: &str, e: String| {
            StoreError::corrupt(format!("lease of `{node}` in ring `{ring}`: {what}: {e}"))
        };
        let ring_name = RingName::new(&ring).map_err(|e| bad("ring", e.to_string()))?;
        let node_id = NodeId::new(&node).map_err(|e| bad("node", e.to_string()))?;
        let id = LeaseId::parse(&id).map_err(|e| bad("lease id", e.to_string()))?;
        let ttl = u64::try_from(ttl_ms)
            .map(Duration::from_millis)
            .map_err(|e| bad("ttl", e.to_string()))?;
        let mut lease = Lease::granted(id, ttl, start);
        if let Some(ns) = released_ns {
            let at = OffsetDateTime::from_unix_timestamp_nanos(i128::from(ns))
                .map_err(|e| bad("release time", e.to_string()))?;
            lease.release(at);
        }
        table.insert(&ring_name, &node_id, lease, ());
    }
    Ok(table)
}

#[async_trait]
impl LeaseStore for SqliteStore {
    async fn grant_lease(
        &self,
        ring: &RingName,
        node: &NodeId,
        ttl: Duration,
        now: OffsetDateTime,
    ) -> Result<Lease, LeaseError> {
        let _turn = self.lease_writes.lock().await;
        let held = self.leases.get(ring, node).map(|(l, _)| l);
        let id = match held {
            Some(mut l) if l.health(now) == NodeHealth::Healthy && l.ttl == ttl => {
                // Registering again while live, unchanged: a renewal,
                // which never writes to disk.
                l.renew(now);
                self.leases.insert(ring, node, l.clone(), ());
                return Ok(l);
            }
            Some(l) if l.health(now) == NodeHealth::Healthy => l.id,
            _ => new_lease_id(now),
        };
        let lease = Lease::granted(id, ttl, now);
        let row = Row::of(ring, node, &lease);
        self.run(move |conn, _| put(conn, &row)).await?;
        self.leases.insert(ring, node, lease.clone(), ());
        Ok(lease)
    }

    async fn renew_lease(
        &self,
        ring: &RingName,
        node: &NodeId,
        id: LeaseId,
        now: OffsetDateTime,
    ) -> Result<Lease, LeaseError> {
        // Checked and renewed under one lock, so a registration that
        // replaces the lease meanwhile is never undone.
        self.leases
            .with(|t| {
                let lease = match t.get_mut(ring).and_then(|l| l.get_mut(node)) {
                    Some((lease, _)) if lease.id == id => lease,
                    _ => return None,
                };
                Some(live(lease.clone(), now).map(|_| {
                    lease.renew(now);
                    lease.clone()
                }))
            })
            .unwrap_or_else(|| self.leases.owned(ring, node, id).map(|(l, _)| l))
    }

    async fn release_lease(
        &self,
        ring: &RingName,
        node: &NodeId,
        id: LeaseId,
        now: OffsetDateTime,
    ) -> Result<Lease, LeaseError> {
        let _turn = self.lease_writes.lock().await;
        let (mut lease, _) = self.leases.owned(ring, node, id)?;
        if lease.released {
            return Err(LeaseError::Released);
        }
        lease.release(now);
        let row = Row::of(ring, node, &lease);
        self.run(move |conn, _| put(conn, &row)).await?;
        self.leases.insert(ring, node, lease.clone(), ());
        Ok(lease)
    }

    fn leases(&self, ring: &RingName, _now: OffsetDateTime) -> HashMap<NodeId, Lease> {
        self.leases
            .ring(ring)
            .into_iter()
            .map(|(n, (l, _))| (n, l))
            .collect()
    }

    async fn forget_leases(&self, ring: &RingName, nodes: &[NodeId]) -> Result<(), StoreError> {
        let _turn = self.lease_writes.lock().await;
        let (r, n) = (ring.clone(), nodes.to_vec());
        self.run(move |conn, _| delete(conn, &r, &n)).await?;
        self.leases.remove(ring, nodes);
        Ok(())
    }

    fn forget_ring_leases(&self, ring: &RingName) {
        self.leases.remove_ring(ring);
    }
}
