//! Writes. Each is one etcd transaction guarded by a compare on the
//! ring's meta key, so two writers — in this process or in another ringd
//! instance — can never both move a ring from the same version.

use std::time::Duration;

use etcd_client::{Compare, CompareOp, DeleteOptions, GetOptions, Txn, TxnOp};

use super::election::fence_compare;
use super::layout::{encode, BeforeImage, RingMeta, VersionRecord, MAX_TXN_BYTES};
use super::{unavailable, Ops};
use crate::ring::{RingName, Snapshot};
use crate::store::leadership::Fence;
use crate::store::StoreError;

/// How long a write transaction may wait for etcd's answer. A request
/// caught on a member whose leader just died waits out etcd's own request
/// timeout (about 7 s) before failing; giving up sooner lets the next
/// change, sent to a member with a leader, go through within seconds.
const TXN_TIMEOUT: Duration = Duration::from_secs(3);

/// How often `delete_ring` without a precondition retries when commits
/// keep moving the ring under it.
const DELETE_ATTEMPTS: usize = 100;

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
    /// Sends `batch` if `guard` holds; returns whether it did.
    async fn txn(&self, guard: Compare, batch: Batch) -> Result<bool, StoreError> {
        self.txn_when(vec![guard], batch).await
    }

    /// Sends `batch` if every one of `guards` holds; returns whether it did.
    async fn txn_when(&self, guards: Vec<Compare>, batch: Batch) -> Result<bool, StoreError> {
        let txn = Txn::new().when(guards).and_then(batch.ops);
        let sent = tokio::time::timeout(TXN_TIMEOUT, self.client.clone().txn(txn)).await;
        let resp = sent
            .map_err(|_| {
                StoreError::unavailable(format!(
                    "etcd did not confirm the change within {} s (a member may have just \
                     failed); it may or may not be applied: retry with the same \
                     Idempotency-Key, or check the ring's history",
                    TXN_TIMEOUT.as_secs()
                ))
            })?
            .map_err(unavailable)?;
        Ok(resp.succeeded())
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
        if self.txn(absent, batch).await? {
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
        let record = VersionRecord::of(next, before);
        batch.put(
            self.keys.version(ring, next.version),
            encode("version", &record)?,
        );
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

        let unchanged =
            Compare::mod_revision(self.keys.meta(ring), CompareOp::Equal, m.mod_revision);
        let guards = std::iter::once(unchanged)
            .chain(fence.map(fence_compare))
            .collect();
        if self.txn_when(guards, batch).await? {
            return Ok(());
        }
        if let Some(fence) = fence {
            if !self.fence_holds(fence).await? {
                return Err(StoreError::Deposed(fence.term()));
            }
        }
        // Someone else moved (or deleted) the ring since we read it.
        let now = self.existing_meta(ring, 0).await?;
        Err(StoreError::VersionConflict {
            expected,
            current: now.meta.latest,
        })
    }

    /// Deletes a ring's meta, nodes, versions and client acks in one transaction,
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
            let unchanged =
                Compare::mod_revision(self.keys.meta(ring), CompareOp::Equal, m.mod_revision);
            if self.txn(unchanged, batch).await? {
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
