//! Recognising a retried change by its `Idempotency-Key`.
//!
//! A client whose change request timed out cannot know whether it was
//! committed. If it sent an `Idempotency-Key`, the key is stored in the
//! version the change produced, and a retry with the same key finds it
//! there and answers with that version instead of applying the change a
//! second time. The lookup runs against the store's own history, so it
//! works whichever instance took the first attempt, and it is checked
//! again after every lost compare-and-swap, so two attempts racing each
//! other also produce one version.
//!
//! Keys are found for as long as the version they produced is retained.

use std::collections::{HashMap, VecDeque};

use super::{ChangeOutcome, Current, RingService, ServiceError};
use crate::ring::{ops_match, IdempotencyKey, RequestedOp, RingError, RingName};
use crate::store::StoreError;

/// Most keys remembered per ring; beyond it the oldest are forgotten. It
/// exceeds the default retention, so with default settings every key of
/// a retained version is found.
const MAX_KEYS_PER_RING: usize = 10_000;

/// The keys found in a ring's history so far.
#[derive(Debug, Default)]
pub(super) struct KeyIndex {
    /// Every version up to this one has been read.
    covered: u64,
    by_key: HashMap<IdempotencyKey, u64>,
    order: VecDeque<IdempotencyKey>,
}

impl KeyIndex {
    fn insert(&mut self, key: IdempotencyKey, version: u64) {
        if self.by_key.insert(key.clone(), version).is_none() {
            self.order.push_back(key);
        }
        while self.order.len() > MAX_KEYS_PER_RING {
            if let Some(old) = self.order.pop_front() {
                self.by_key.remove(&old);
            }
        }
    }
}

impl RingService {
    /// The version an earlier attempt of this change produced, as a
    /// [`ChangeOutcome::Replayed`]; `None` if no retained version carries
    /// `key`. The same key on different ops is refused.
    pub(super) async fn replay(
        &self,
        ring: &RingName,
        key: &IdempotencyKey,
        ops: &[RequestedOp],
        current: &Current,
    ) -> Result<Option<ChangeOutcome>, ServiceError> {
        let Some(version) = self
            .version_of_key(ring, key, current.snapshot.version)
            .await?
        else {
            return Ok(None);
        };
        let snapshot = match self.snapshot(ring, version).await {
            Ok(s) => s,
            // Pruned since it was indexed: the key is no longer known.
            Err(ServiceError::Store(StoreError::VersionPruned { .. })) => return Ok(None),
            Err(e) => return Err(e),
        };
        if !ops_match(ops, &snapshot.change.ops) {
            return Err(RingError::IdempotencyKeyReused {
                key: key.clone(),
                version,
            }
            .into());
        }
        let (_, after) = self.placement(ring, Some(version)).await?;
        // The movement is shown when the version before is still retained.
        let (diff, base_config) = match self.placement(ring, Some(version - 1)).await {
            Ok((_, before)) => (Some(before.diff(&after)), Some(before.config().clone())),
            Err(_) => (None, None),
        };
        Ok(Some(ChangeOutcome::Replayed {
            snapshot,
            placement: after,
            diff,
            base_config,
        }))
    }

    /// Reads the history the index has not seen (up to at least
    /// `latest`), then looks `key` up.
    async fn version_of_key(
        &self,
        ring: &RingName,
        key: &IdempotencyKey,
        latest: u64,
    ) -> Result<Option<u64>, ServiceError> {
        let covered = {
            let mut keys = self.keys.lock().expect("key index lock");
            let index = keys.entry(ring.clone()).or_default();
            // A ring that went backwards was deleted and created again:
            // its old keys mean nothing now.
            if latest < index.covered {
                *index = KeyIndex::default();
            }
            if index.covered >= latest {
                return Ok(index.by_key.get(key).copied());
            }
            index.covered
        };
        let entries = self.store.history_after(ring, covered).await?;
        let mut keys = self.keys.lock().expect("key index lock");
        let index = keys.entry(ring.clone()).or_default();
        for entry in entries {
            index.covered = index.covered.max(entry.version);
            if let Some(k) = entry.change.idempotency_key {
                index.insert(k, entry.version);
            }
        }
        index.covered = index.covered.max(latest);
        Ok(index.by_key.get(key).copied())
    }

    /// Forgets a deleted ring's keys.
    pub(super) fn forget_keys(&self, ring: &RingName) {
        self.keys.lock().expect("key index lock").remove(ring);
    }
}
