//! Applying a change: propose against the latest version, commit with
//! compare-and-swap, retry when another writer got there first.

use std::sync::Arc;

use super::{
    BaseConfig, ChangeOutcome, ChangeRequest, Current, RingService, ServiceError, MAX_RETRIES,
};
use crate::ring::{RingName, Role};
use crate::store::StoreError;

impl RingService {
    /// Applies a change as one new version (or previews it).
    pub async fn apply(
        &self,
        ring: &RingName,
        request: ChangeRequest,
        role: Role,
    ) -> Result<ChangeOutcome, ServiceError> {
        let turn = self
            .writers
            .lock()
            .expect("writer lock")
            .entry(ring.clone())
            .or_default()
            .clone();
        let _turn = turn.lock().await;
        for attempt in 0..MAX_RETRIES {
            if attempt > 0 {
                // Lost to a writer in another instance: wait a little,
                // randomly, so competing instances stop colliding.
                tokio::time::sleep(retry_pause(attempt)).await;
            }
            let current = self.current(ring).await?;
            let version = current.snapshot.version;
            // Before the precondition: a retry of a committed change must
            // get its version back, though the ring has moved past its
            // expected version since.
            if let (Some(key), false) = (&request.idempotency_key, request.dry_run) {
                if let Some(replay) = self.replay(ring, key, &request.ops, &current).await? {
                    return Ok(replay);
                }
            }
            if let Some(expected) = request.expected_version {
                if expected != version {
                    return Err(ServiceError::PreconditionFailed {
                        expected,
                        current: version,
                    });
                }
            }
            let proposal = current.snapshot.propose(
                &current.placement,
                request.ops.clone(),
                request.reason.clone(),
                role,
                self.now(),
            )?;
            let Some(mut proposal) = proposal else {
                return Ok(ChangeOutcome::Unchanged { current });
            };
            proposal.snapshot.change.idempotency_key = request.idempotency_key.clone();
            if request.dry_run {
                return Ok(ChangeOutcome::Preview {
                    snapshot: proposal.snapshot,
                    diff: proposal.diff,
                    base_version: version,
                    base_config: BaseConfig::of(&current.snapshot),
                });
            }
            match self.store.commit(&proposal.snapshot).await {
                Ok(()) => {
                    self.forget_removed_leases(ring, &proposal.snapshot.change.ops);
                    let next = Arc::new(Current {
                        snapshot: Arc::new(proposal.snapshot),
                        placement: Arc::new(proposal.placement),
                    });
                    self.remember(next.clone());
                    return Ok(ChangeOutcome::Committed {
                        current: next,
                        diff: proposal.diff,
                        base_config: BaseConfig::of(&current.snapshot),
                    });
                }
                Err(StoreError::VersionConflict {
                    current: actual, ..
                }) => {
                    // Someone else committed first: the cache is behind.
                    // It is brought forward, never emptied, so readers
                    // keep being served from memory meanwhile (and never
                    // see an older version than before).
                    self.refresh(ring).await?;
                    // With a key, the winner may have been an earlier
                    // attempt of this very change: look again first.
                    if let (Some(expected), None) =
                        (request.expected_version, &request.idempotency_key)
                    {
                        return Err(ServiceError::PreconditionFailed {
                            expected,
                            current: actual,
                        });
                    }
                }
                Err(e) => return Err(e.into()),
            }
        }
        Err(ServiceError::TooMuchContention(MAX_RETRIES))
    }
}

/// A random pause of up to `attempt` × 5 ms (at most 50 ms).
fn retry_pause(attempt: usize) -> std::time::Duration {
    crate::jitter::random_below(std::time::Duration::from_millis(5 * attempt.min(10) as u64))
}
