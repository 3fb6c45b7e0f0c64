//! Leases on etcd: each ringd lease is backed by an etcd lease of its TTL
//! (whole seconds, rounded up), so a lease made through one instance
//! renews through any other, and etcd's own lease survives its leader
//! elections (a new etcd leader extends every lease by its TTL).
//!
//! A renewal is one keep-alive round trip and writes no key. A
//! registration writes the record and alive keys (`lease_keys.rs`) only
//! when it creates a lease or changes its TTL; a release marks the record
//! released, deletes the alive key and revokes the etcd lease.

use std::collections::HashMap;
use std::time::Duration;

use async_trait::async_trait;
use etcd_client::{Compare, CompareOp, DeleteOptions, PutOptions, Txn, TxnOp};
use time::OffsetDateTime;

use super::layout::encode;
use super::lease_keys::{etcd_ttl, ttl_ms, Alive, LeaseKey, LeaseRecord};
use super::lease_view::{apply, report, Held};
use super::{unavailable, EtcdStore};
use crate::placement::NodeId;
use crate::ring::{LeaseId, RingName};
use crate::store::{new_lease_id, Lease, LeaseError, LeaseStore, StoreError};

/// Attempts at a registration while other instances change the same
/// node's lease under it.
const GRANT_ATTEMPTS: usize = 4;

/// Whether an etcd error says the lease is gone (expired or revoked).
fn lease_gone(e: &etcd_client::Error) -> bool {
    e.to_string().contains("lease not found")
}

impl EtcdStore {
    /// One keep-alive round trip of `etcd_lease`: `Ok(false)` if etcd no
    /// longer holds it. The stream is dropped at once; none outlives the
    /// renewal.
    async fn keep_alive(&self, etcd_lease: i64) -> Result<bool, StoreError> {
        self.bounded(async {
            match self.ops.client.clone().lease_keep_alive(etcd_lease).await {
                Ok(_) => Ok(true),
                Err(e) if lease_gone(&e) => Ok(false),
                Err(e) => Err(unavailable(e)),
            }
        })
        .await
    }

    /// Revokes `etcd_lease`, ignoring failures: an unrevoked lease holds
    /// no key that matters and expires by itself.
    async fn revoke(&self, etcd_lease: i64) {
        let revoked = self
            .bounded(async {
                self.ops
                    .client
                    .clone()
                    .lease_revoke(etcd_lease)
                    .await
                    .map_err(unavailable)
            })
            .await;
        if let Err(e) = revoked {
            tracing::debug!(etcd_lease, error = %e, "etcd lease not revoked; it will expire");
        }
    }

    /// Reads `ring`'s leases from etcd into memory at `now`: for a lease
    /// the watch has not brought yet (made through another instance a
    /// moment ago).
    async fn reread(&self, ring: &RingName, now: OffsetDateTime) -> Result<(), StoreError> {
        let keys = &self.ops.keys;
        let prefixes = [
            keys.lease_prefix(LeaseKey::Record, ring),
            keys.lease_prefix(LeaseKey::Alive, ring),
        ];
        let (seen, _) = self.bounded(self.ops.read_leases(&prefixes)).await?;
        apply(&self.lease_view, seen, now);
        Ok(())
    }

    /// `node`'s lease `id` and what is held beside it, read again from
    /// etcd at `now` when memory does not know it.
    async fn find(
        &self,
        ring: &RingName,
        node: &NodeId,
        id: LeaseId,
        now: OffsetDateTime,
    ) -> Result<(Lease, Held), LeaseError> {
        match self.lease_view.owned(ring, node, id) {
            Ok(found) => Ok(found),
            Err(_) => {
                self.reread(ring, now).await?;
                self.lease_view.owned(ring, node, id)
            }
        }
    }

    /// Writes a lease's record and alive keys on `etcd_lease`, if the
    /// record is still at `record_rev` (0: absent) and the ring exists.
    /// `Ok(None)` when another writer changed the record first.
    async fn put_lease(
        &self,
        ring: &RingName,
        node: &NodeId,
        record: &LeaseRecord,
        record_rev: i64,
    ) -> Result<Option<i64>, StoreError> {
        let keys = &self.ops.keys;
        let record_key = keys.lease_key(LeaseKey::Record, ring, node);
        let alive = Alive {
            id: record.id.clone(),
        };
        let txn = Txn::new()
            .when([
                Compare::version(keys.meta(ring), CompareOp::Greater, 0),
                Compare::mod_revision(record_key.clone(), CompareOp::Equal, record_rev),
            ])
            .and_then([
                TxnOp::put(record_key, encode("lease record", record)?, None),
                TxnOp::put(
                    keys.lease_key(LeaseKey::Alive, ring, node),
                    encode("lease alive key", &alive)?,
                    Some(PutOptions::new().with_lease(record.etcd_lease)),
                ),
            ]);
        let resp = self
            .bounded(async { self.ops.client.clone().txn(txn).await.map_err(unavailable) })
            .await?;
        if resp.succeeded() {
            return Ok(resp.header().map(|h| h.revision()));
        }
        if self.ops.meta(ring, 0).await?.is_none() {
            return Err(StoreError::RingNotFound(ring.clone()));
        }
        Ok(None)
    }

    /// The node's record as etcd holds it now, with its `mod_revision`
    /// (0 when absent) and whether its alive key holds its id.
    async fn read_record(
        &self,
        ring: &RingName,
        node: &NodeId,
    ) -> Result<Option<(LeaseRecord, i64, bool)>, StoreError> {
        let keys = &self.ops.keys;
        let get = |kind| TxnOp::get(keys.lease_key(kind, ring, node), None);
        let txn = Txn::new().and_then([get(LeaseKey::Record), get(LeaseKey::Alive)]);
        let resp = self
            .bounded(async { self.ops.client.clone().txn(txn).await.map_err(unavailable) })
            .await?;
        let mut ranges = resp.op_responses().into_iter().filter_map(|r| match r {
            etcd_client::TxnOpResponse::Get(g) => Some(g),
            _ => None,
        });
        let (Some(record), Some(alive)) = (ranges.next(), ranges.next()) else {
            return Err(StoreError::unavailable("etcd answered a lease read oddly"));
        };
        let Some(kv) = record.kvs().first() else {
            return Ok(None);
        };
        let value: LeaseRecord = super::layout::decode(kv.key(), kv.value())?;
        let live = alive.kvs().first().is_some_and(|a| {
            super::layout::decode::<Alive>(a.key(), a.value()).is_ok_and(|a| a.id == value.id)
        });
        Ok(Some((value, kv.mod_revision(), live)))
    }
}

#[async_trait]
impl LeaseStore for EtcdStore {
    async fn grant_lease(
        &self,
        ring: &RingName,
        node: &NodeId,
        ttl: Duration,
        now: OffsetDateTime,
    ) -> Result<Lease, LeaseError> {
        let _turn = self.lease_writes.lock().await;
        for _ in 0..GRANT_ATTEMPTS {
            let held = self.read_record(ring, node).await?;
            let mut replaced = None;
            let mut id = None;
            let mut rev = 0;
            if let Some((record, record_rev, live)) = &held {
                rev = *record_rev;
                let parsed = LeaseId::parse(&record.id).ok();
                if let (true, None, Some(live_id)) = (*live, record.released_at, parsed) {
                    if record.ttl_ms != ttl_ms(ttl) {
                        // A new TTL keeps the id, on a new etcd lease.
                        id = Some(live_id);
                    } else if self.keep_alive(record.etcd_lease).await? {
                        // Registering again while live, unchanged: a
                        // renewal, which writes no key.
                        let lease = Lease::granted(live_id, ttl, now);
                        let held = Held::at(record.etcd_lease, rev, true);
                        self.lease_view.insert(ring, node, lease.clone(), held);
                        return Ok(lease);
                    }
                    // Otherwise it expired a moment ago: a new lease.
                }
                replaced = Some(record.etcd_lease);
            }
            let id = id.unwrap_or_else(|| new_lease_id(now));
            let granted = self
                .bounded(async {
                    self.ops
                        .client
                        .clone()
                        .lease_grant(etcd_ttl(ttl), None)
                        .await
                        .map_err(unavailable)
                })
                .await?;
            let record = LeaseRecord {
                id: id.to_string(),
                ttl_ms: ttl_ms(ttl),
                etcd_lease: granted.id(),
                released_at: None,
            };
            match self.put_lease(ring, node, &record, rev).await {
                Ok(Some(revision)) => {
                    let lease = Lease::granted(id, ttl, now);
                    let held = Held::at(granted.id(), revision, true);
                    self.lease_view.insert(ring, node, lease.clone(), held);
                    if let Some(old) = replaced {
                        self.revoke(old).await;
                    }
                    return Ok(lease);
                }
                // Another instance changed this node's lease meanwhile:
                // read it again.
                Ok(None) => self.revoke(granted.id()).await,
                Err(e) => {
                    self.revoke(granted.id()).await;
                    return Err(e.into());
                }
            }
        }
        Err(StoreError::unavailable(format!(
            "the lease of node `{node}` kept changing through other instances; register again"
        ))
        .into())
    }

    async fn renew_lease(
        &self,
        ring: &RingName,
        node: &NodeId,
        id: LeaseId,
        now: OffsetDateTime,
    ) -> Result<Lease, LeaseError> {
        let (lease, held) = self.find(ring, node, id, now).await?;
        if lease.released {
            return Err(LeaseError::Released);
        }
        // etcd decides, not this instance's memory: the lease may have
        // been renewed elsewhere, or expired a moment ago.
        if !self.keep_alive(held.etcd_lease).await? {
            let expired = report(
                lease,
                &Held {
                    alive: false,
                    ..held
                },
                now,
            );
            return Err(LeaseError::Expired {
                deadline: expired.deadline,
            });
        }
        let mut renewed = lease;
        renewed.renew(now);
        self.lease_view.with(|t| {
            let entry = t.get_mut(ring).and_then(|l| l.get_mut(node));
            if let Some((l, h)) = entry.filter(|(l, _)| l.id == id) {
                l.renew(now);
                h.alive = true;
            }
        });
        Ok(renewed)
    }

    async fn release_lease(
        &self,
        ring: &RingName,
        node: &NodeId,
        id: LeaseId,
        now: OffsetDateTime,
    ) -> Result<Lease, LeaseError> {
        let _turn = self.lease_writes.lock().await;
        let (lease, _) = self.find(ring, node, id, now).await?;
        if lease.released {
            return Err(LeaseError::Released);
        }
        // Read again so the write is guarded by the record as etcd has it.
        let Some((mut record, rev, _)) = self.read_record(ring, node).await? else {
            return Err(LeaseError::NotFound);
        };
        if record.id != id.to_string() {
            return Err(LeaseError::NotFound);
        }
        if record.released_at.is_some() {
            return Err(LeaseError::Released);
        }
        record.released_at = Some(now);
        let keys = &self.ops.keys;
        let record_key = keys.lease_key(LeaseKey::Record, ring, node);
        let txn = Txn::new()
            .when([Compare::mod_revision(
                record_key.clone(),
                CompareOp::Equal,
                rev,
            )])
            .and_then([
                TxnOp::put(record_key, encode("lease record", &record)?, None),
                TxnOp::delete(
                    keys.lease_key(LeaseKey::Alive, ring, node),
                    Some(DeleteOptions::new()),
                ),
            ]);
        let resp = self
            .bounded(async { self.ops.client.clone().txn(txn).await.map_err(unavailable) })
            .await?;
        if !resp.succeeded() {
            return Err(StoreError::unavailable(format!(
                "the lease of node `{node}` changed through another instance during its release; retry"
            ))
            .into());
        }
        self.revoke(record.etcd_lease).await;
        let mut released = lease;
        released.release(now);
        let revision = resp.header().map_or(rev, |h| h.revision());
        let held = Held::at(record.etcd_lease, revision, false);
        self.lease_view.insert(ring, node, released.clone(), held);
        Ok(released)
    }

    fn leases(&self, ring: &RingName, now: OffsetDateTime) -> HashMap<NodeId, Lease> {
        self.lease_view
            .ring(ring)
            .into_iter()
            .map(|(n, (l, h))| (n, report(l, &h, now)))
            .collect()
    }

    async fn forget_leases(&self, ring: &RingName, nodes: &[NodeId]) -> Result<(), StoreError> {
        let _turn = self.lease_writes.lock().await;
        let keys = &self.ops.keys;
        // Two deletions per node, within etcd's limit per transaction.
        for chunk in nodes.chunks((self.ops.max_txn_ops / 2).max(1)) {
            let ops: Vec<TxnOp> = chunk
                .iter()
                .flat_map(|n| {
                    [LeaseKey::Record, LeaseKey::Alive]
                        .map(|k| TxnOp::delete(keys.lease_key(k, ring, n), None))
                })
                .collect();
            let txn = Txn::new().and_then(ops);
            self.bounded(async { self.ops.client.clone().txn(txn).await.map_err(unavailable) })
                .await?;
        }
        let etcd_leases: Vec<i64> = nodes
            .iter()
            .filter_map(|n| self.lease_view.get(ring, n).map(|(_, h)| h.etcd_lease))
            .collect();
        self.lease_view.remove(ring, nodes);
        for l in etcd_leases {
            self.revoke(l).await;
        }
        Ok(())
    }

    fn forget_ring_leases(&self, ring: &RingName) {
        self.lease_view.remove_ring(ring);
    }
}
