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

use super::{BaseConfig, ChangeOutcome, Current, Rings};
use crate::ring::{ops_match, IdempotencyKey, RequestedOp, RingError, RingName};
use crate::service::ServiceError;
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

impl Rings {
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
        let (diff, base_config) = match (
            self.placement(ring, Some(version - 1)).await,
            self.snapshot(ring, version - 1).await,
        ) {
            (Ok((_, before)), Ok(base)) => (Some(before.diff(&after)), Some(BaseConfig::of(&base))),
            _ => (None, None),
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

#[cfg(test)]
mod tests {
    use super::super::ChangeRequest;
    use super::*;
    use crate::ring::Role;
    use crate::service::test_support::{at, create, remove, service, upsert};

    fn request(op: RequestedOp, key: Option<&str>) -> ChangeRequest {
        ChangeRequest {
            idempotency_key: key.map(|k| IdempotencyKey::try_from(k.to_owned()).unwrap()),
            ..ChangeRequest::of(vec![op])
        }
    }

    /// The committed version and its commit time.
    fn committed(outcome: &ChangeOutcome) -> (u64, time::OffsetDateTime) {
        match outcome {
            ChangeOutcome::Committed { current, .. } => {
                (current.snapshot.version, current.snapshot.created_at)
            }
            other => panic!("not committed: {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_retry_gets_the_first_attempts_version_and_time_until_that_version_is_pruned() {
        // Two versions retained: version 2, which carries the key, is
        // pruned once version 4 is committed.
        let (service, clock, _dir) = service(2);
        let ring = create(&service, "r").await;
        let with_key = || request(upsert("n1"), Some("k1"));

        clock.set(at(5, 0));
        let first = service
            .rings()
            .apply(&ring, with_key(), Role::Admin)
            .await
            .unwrap();
        assert_eq!(committed(&first), (2, at(5, 0)));

        clock.set(at(60, 0));
        match service
            .rings()
            .apply(&ring, with_key(), Role::Admin)
            .await
            .unwrap()
        {
            ChangeOutcome::Replayed { snapshot, .. } => {
                assert_eq!((snapshot.version, snapshot.created_at), (2, at(5, 0)));
            }
            other => panic!("not replayed: {other:?}"),
        }

        let third = service
            .rings()
            .apply(&ring, request(remove("n1"), None), Role::Admin)
            .await
            .unwrap();
        assert_eq!(committed(&third), (3, at(60, 0)));
        // Still retained: the retry is answered with version 2 although
        // the ring has moved on (and n1 is gone).
        assert!(matches!(
            service
                .rings()
                .apply(&ring, with_key(), Role::Admin)
                .await
                .unwrap(),
            ChangeOutcome::Replayed { .. }
        ));

        clock.set(at(120, 0));
        let fourth = service
            .rings()
            .apply(&ring, request(upsert("n2"), None), Role::Admin)
            .await
            .unwrap();
        assert_eq!(committed(&fourth), (4, at(120, 0)));

        // Version 2 is pruned, and its key with it: the same request is
        // now a new change.
        clock.set(at(180, 0));
        let again = service
            .rings()
            .apply(&ring, with_key(), Role::Admin)
            .await
            .unwrap();
        assert_eq!(committed(&again), (5, at(180, 0)));
        let history: Vec<(u64, Option<String>)> = service
            .rings()
            .history(&ring)
            .await
            .unwrap()
            .into_iter()
            .map(|e| {
                let key = e.change.idempotency_key.map(|k| k.as_str().to_owned());
                (e.version, key)
            })
            .collect();
        assert_eq!(history, vec![(4, None), (5, Some("k1".to_owned()))]);
    }
}
