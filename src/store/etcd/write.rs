//! Writes. Each is one etcd transaction guarded by a compare on the
//! ring's meta key, so two writers — in this process or in another ringd
//! instance — can never both move a ring from the same version.

use std::time::Duration;

use etcd_client::{Compare, CompareOp, DeleteOptions, GetOptions, Txn, TxnOp};

use super::election::fence_compare;
use super::layout::{encode, BeforeImage, RingMeta, VersionRecord, MAX_TXN_BYTES};
use super::lease_keys::LeaseKey;
use super::read::transient;
use super::{unavailable, Ops};
use crate::ring::{RingName, Snapshot};
use crate::store::leadership::Fence;
use crate::store::StoreError;

/// How long one try of a write transaction may wait for etcd's answer. A
/// request caught on a member that froze, or whose leader died, waits out
/// etcd's own request timeout (about 7 s) before failing; giving up sooner
/// and sending it again, normally to another member, lets the change
/// through within seconds.
const TXN_ATTEMPT: Duration = Duration::from_millis(1500);

/// Tries per transaction; two, so a write is never in doubt for longer
/// than 3 s. Sending the same guarded transaction again is safe: if the
/// first try was applied after all, the guard refuses the second.
const TXN_TRIES: usize = 2;

/// How often `delete_ring` without a precondition retries when commits
/// keep moving the ring under it.
const DELETE_ATTEMPTS: usize = 100;

/// What became of a transaction.
struct Sent {
    /// Its guard held and its operations were applied.
    applied: bool,
    /// An earlier try got no answer, so it may be the one applied.
    in_doubt: bool,
}

/// The operations of one write transaction, checked against etcd's limits
/// before sending so an oversized change fails clearly, not with a gRPC error.
#[derive(Default)]
struct Batch {
    ops: Vec<TxnOp>,
    bytes: usize,
}

impl Batch {
    fn put(&mut self, key: String, value: Vec<u8>) {
        self.bytes += key.len() + value.len();
        self.ops.push(TxnOp::put(key, value, None));
    }

    fn delete(&mut self, key: String, options: DeleteOptions) {
        self.bytes += key.len() * 2;
        self.ops.push(TxnOp::delete(key, Some(options)));
    }

    fn check(&self, ring: &RingName, max_ops: usize) -> Result<(), StoreError> {
        if self.ops.len() > max_ops {
            return Err(StoreError::unavailable(format!(
                "this change to ring `{ring}` needs {} etcd operations in one transaction, \
                 over the limit of {max_ops}: split it into smaller changes, or raise etcd's \
                 --max-txn-ops and ringd's limit together",
                self.ops.len()
            )));
        }
        if self.bytes > MAX_TXN_BYTES {
            return Err(StoreError::unavailable(format!(
                "this change to ring `{ring}` is {} bytes, over the {MAX_TXN_BYTES}-byte \
                 limit of one etcd transaction: split it into smaller changes",
                self.bytes
            )));
        }
        Ok(())
    }
}

impl Ops {
    /// Sends `batch` if `guard` holds, up to [`TXN_TRIES`] times while etcd
    /// does not answer.
    async fn txn(&self, guards: impl Into<Vec<Compare>>, batch: Batch) -> Result<Sent, StoreError> {
        let txn = Txn::new().when(guards).and_then(batch.ops);
        let mut last = None;
        for attempt in 0..TXN_TRIES {
            let mut client = self.client.clone();
            let sent = client.txn(txn.clone());
            match tokio::time::timeout(TXN_ATTEMPT, sent).await {
                Ok(Ok(resp)) => {
                    return Ok(Sent {
                        applied: resp.succeeded(),
                        in_doubt: attempt > 0,
                    })
                }
                Ok(Err(e)) if transient(&e) => last = Some(unavailable(e)),
                Ok(Err(e)) => return Err(unavailable(e)),
                Err(_) => last = None,
            }
        }
        Err(last.unwrap_or_else(|| {
            StoreError::unavailable(format!(
                "etcd did not confirm the change within {} s (a member may have just \
                 failed); it may or may not be applied: retry with the same \
                 Idempotency-Key, or check the ring's history",
                (TXN_ATTEMPT * TXN_TRIES as u32).as_secs()
            ))
        }))
    }

    /// Whether version `version` of `ring` holds exactly `record`: after a
    /// try in doubt, tells this writer's own commit from another's.
    async fn holds(
        &self,
        ring: &RingName,
        version: u64,
        record: &[u8],
    ) -> Result<bool, StoreError> {
        let key = self.keys.version(ring, version);
        let (kvs, _) = self.get(key, GetOptions::new(), 0).await?;
        Ok(kvs.first().is_some_and(|kv| kv.value() == record))
    }

    /// Writes version 1 of a new ring: meta, its nodes and its version record.
    pub(super) async fn create_ring(&self, first: &Snapshot) -> Result<(), StoreError> {
        let ring = &first.ring;
        let mut batch = Batch::default();
        let meta = RingMeta {
            latest: first.version,
            oldest: first.version,
        };
        batch.put(self.keys.meta(ring), encode("ring meta", &meta)?);
        let record = VersionRecord::of(first, Vec::new());
        batch.put(
            self.keys.version(ring, first.version),
            encode("version", &record)?,
        );
        for node in &first.nodes {
            batch.put(self.keys.node(ring, &node.id), encode("node", node)?);
        }
        batch.check(ring, self.max_txn_ops)?;
        // Version 0 of a key means it does not exist.
        let absent = Compare::version(self.keys.meta(ring), CompareOp::Equal, 0);
        if self.txn([absent], batch).await?.applied {
            return Ok(());
        }
        Err(StoreError::RingExists(Box::new(
            self.latest_at(ring, 0).await?,
        )))
    }

    /// Commits `next` if the ring is at `next.version - 1`, writing only
    /// the nodes that changed and pruning versions beyond retention; with
    /// a `fence`, only if its term is also still current (else `Deposed`).
    pub(super) async fn commit(
        &self,
        next: &Snapshot,
        fence: Option<&Fence>,
    ) -> Result<(), StoreError> {
        let ring = &next.ring;
        let m = self.existing_meta(ring, 0).await?;
        let expected = next.version.saturating_sub(1);
        if m.meta.latest != expected || next.version == 0 {
            return Err(StoreError::VersionConflict {
                expected,
                current: m.meta.latest,
            });
        }
        let mut current = self.nodes(ring, m.revision).await?;
        let mut batch = Batch::default();
        let mut before = Vec::new();
        for node in &next.nodes {
            let old = current.remove(&node.id);
            if old.as_ref() != Some(node) {
                batch.put(self.keys.node(ring, &node.id), encode("node", node)?);
                before.push(BeforeImage {
                    id: node.id.clone(),
                    node: old,
                });
            }
        }
        // What is left of `current` is not in `next`: removed nodes.
        for (id, old) in current {
            batch.delete(self.keys.node(ring, &id), DeleteOptions::new());
            before.push(BeforeImage {
                id,
                node: Some(old),
            });
        }
        let record = encode("version", &VersionRecord::of(next, before))?;
        batch.put(self.keys.version(ring, next.version), record.clone());
        // Keep the newest `retention` versions; `max` keeps `oldest` from
        // moving back if retention was raised since.
        let floor = next.version.saturating_sub(self.retention);
        let oldest = m.meta.oldest.max(floor + 1);
        if oldest > m.meta.oldest {
            let end = self.keys.version(ring, oldest);
            batch.delete(
                self.keys.version(ring, m.meta.oldest),
                DeleteOptions::new().with_range(end),
            );
        }
        let meta = RingMeta {
            latest: next.version,
            oldest,
        };
        batch.put(self.keys.meta(ring), encode("ring meta", &meta)?);
        batch.check(ring, self.max_txn_ops)?;
        // Holding the writers' turn, the commit ends it too (when there is
        // room for one more operation): the next writer's wait ends with it.
        let turn = self.turns.key(ring);
        let holding = turn.is_some();
        let releases = holding && batch.ops.len() < self.max_txn_ops;
        if let (Some(key), true) = (turn, releases) {
            batch.ops.push(TxnOp::delete(key, None));
        }

        let unchanged =
            Compare::mod_revision(self.keys.meta(ring), CompareOp::Equal, m.mod_revision);
        let mut guards = vec![unchanged];
        if !holding && !self.turns.passed(ring) {
            // Writers queued for the turn go first: without it, the commit
            // is refused while any is queued (the ring itself unchanged).
            guards.push(Compare::version(self.turn_queue(ring), CompareOp::Equal, 0).with_prefix());
        }
        guards.extend(fence.map(fence_compare));
        let sent = self.txn(guards, batch).await?;
        if sent.applied {
            if releases {
                self.turns.released(ring);
            }
            return Ok(());
        }
        if let Some(fence) = fence {
            if !self.fence_holds(fence).await? {
                return Err(StoreError::Deposed(fence.term()));
            }
        }
        // Someone else moved (or deleted) the ring since we read it, or,
        // after a try in doubt, the first try was applied after all.
        let now = self.existing_meta(ring, 0).await?;
        if sent.in_doubt
            && now.meta.latest >= next.version
            && self.holds(ring, next.version, &record).await?
        {
            return Ok(());
        }
        Err(StoreError::VersionConflict {
            expected,
            current: now.meta.latest,
        })
    }

    /// Deletes a ring's meta, nodes, versions, client acks, rollouts and leases in one transaction,
    /// guarded by the version the precondition was checked against.
    pub(super) async fn delete_ring(
        &self,
        ring: &RingName,
        expected_version: Option<u64>,
    ) -> Result<(), StoreError> {
        for _ in 0..DELETE_ATTEMPTS {
            let m = self.existing_meta(ring, 0).await?;
            if let Some(expected) = expected_version {
                if expected != m.meta.latest {
                    return Err(StoreError::VersionConflict {
                        expected,
                        current: m.meta.latest,
                    });
                }
            }
            let mut batch = Batch::default();
            batch.delete(self.keys.meta(ring), DeleteOptions::new());
            batch.delete(self.keys.nodes(ring), DeleteOptions::new().with_prefix());
            batch.delete(self.keys.versions(ring), DeleteOptions::new().with_prefix());
            batch.delete(self.keys.acks(ring), DeleteOptions::new().with_prefix());
            batch.delete(self.keys.rollouts(ring), DeleteOptions::new().with_prefix());
            batch.delete(self.keys.active_rollout(ring), DeleteOptions::new());
            for kind in [LeaseKey::Record, LeaseKey::Alive] {
                let leases = self.keys.lease_prefix(kind, ring);
                batch.delete(leases, DeleteOptions::new().with_prefix());
            }
            let unchanged =
                Compare::mod_revision(self.keys.meta(ring), CompareOp::Equal, m.mod_revision);
            if self.txn([unchanged], batch).await?.applied {
                return Ok(());
            }
            // A commit slipped in: re-check the precondition against it.
        }
        Err(StoreError::unavailable(format!(
            "ring `{ring}` kept changing; could not delete it"
        )))
    }

    /// The layout version stored under `prefix`, 0 if none.
    pub(super) async fn layout_version(&self) -> Result<(u64, i64), StoreError> {
        let (kvs, revision) = self.get(self.keys.layout(), GetOptions::new(), 0).await?;
        let found = match kvs.first() {
            None => 0,
            Some(kv) => kv
                .value_str()
                .ok()
                .and_then(|v| v.trim().parse().ok())
                .ok_or_else(|| {
                    StoreError::corrupt(format!(
                        "layout version `{}` is not a number",
                        String::from_utf8_lossy(kv.value())
                    ))
                })?,
        };
        Ok((found, revision))
    }
}
