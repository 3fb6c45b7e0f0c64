//! Applying a change: propose against the latest version, commit with
//! compare-and-swap, retry when another writer got there first. Writers
//! of one instance queue in process; a writer that lost to another
//! instance's queues for the ring's turn among all instances (see
//! [`crate::store::Store::queue`]) and retries holding it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{BaseConfig, ChangeOutcome, ChangeRequest, Current, Rings};
use crate::placement::NodeId;
use crate::ring::{ChangeOp, RingName, Role, Snapshot};
use crate::service::ServiceError;
use crate::store::leadership::{Fence, Term};
use crate::store::{StoreError, WriteTurn};

/// Attempts at a change whose caller gave no expected version, when other
/// writers keep getting in first. After the first lost attempt a writer
/// waits for its turn among every instance's writers ([`Store::queue`]),
/// so only writers that have not lost yet can still get in first.
///
/// [`Store::queue`]: crate::store::Store::queue
const MAX_RETRIES: usize = 16;

/// How long an instance keeps queueing for turns on a ring after its
/// writers last met another instance's there: while writers of several
/// instances alternate, each of them asks for its turn before its first
/// attempt, instead of losing one race per change to a fresh writer.
const CONTENDED_FOR: Duration = Duration::from_secs(2);

/// How this instance's writers to one ring have lately fared against
/// other instances' writers; held by the ring's in-process queue.
#[derive(Debug, Default)]
pub(super) struct Contention {
    /// Until when writers ask for a turn before their first attempt.
    until: Option<Instant>,
    /// The version this instance's last change to the ring made.
    last_committed: u64,
}

impl Contention {
    fn contended(&self) -> bool {
        self.until.is_some_and(|t| t > Instant::now())
    }

    fn met_others(&mut self) {
        self.until = Some(Instant::now() + CONTENDED_FOR);
    }
}

impl Rings {
    /// Applies a change as one new version (or previews it).
    pub async fn apply(
        &self,
        ring: &RingName,
        request: ChangeRequest,
        role: Role,
    ) -> Result<ChangeOutcome, ServiceError> {
        self.apply_fenced(ring, request, role, None).await
    }

    /// Applies an automatic change as the decision-maker of `term`: like
    /// [`Rings::apply`] (as `admin`), but refused with
    /// `StoreError::Deposed` once `term` is over, by this instance's own
    /// knowledge or by the store's check in the commit itself. See the
    /// contract in `service/leadership.rs`.
    pub async fn apply_as_leader(
        &self,
        ring: &RingName,
        request: ChangeRequest,
        term: Term,
    ) -> Result<ChangeOutcome, ServiceError> {
        let fence = self
            .leadership
            .fence()
            .filter(|f| f.term() == term)
            .ok_or(StoreError::Deposed(term))?;
        self.apply_fenced(ring, request, Role::Admin, Some(&fence))
            .await
    }

    /// [`Rings::apply`], committed behind `fence` when there is one.
    async fn apply_fenced(
        &self,
        ring: &RingName,
        request: ChangeRequest,
        role: Role,
        fence: Option<&Fence>,
    ) -> Result<ChangeOutcome, ServiceError> {
        let turn = self
            .writers
            .lock()
            .expect("writer lock")
            .entry(ring.clone())
            .or_default()
            .clone();
        let mut contention = turn.lock().await;
        let mut turn: Option<WriteTurn> = None;
        if contention.contended() && !request.dry_run {
            turn = self.store.queue(ring).await;
        }
        for attempt in 0..MAX_RETRIES {
            if attempt > 0 && turn.is_none() {
                // Lost to a writer in another instance: queue for a turn.
                turn = self.store.queue(ring).await;
                if turn.is_none() {
                    // None to be had: wait a little, randomly, so
                    // competing instances stop colliding.
                    tokio::time::sleep(retry_pause(attempt)).await;
                }
            }
            // Holding a turn, the previous holder (likely in another
            // instance) has just committed: read it rather than lose a
            // compare-and-swap to what the cache has not heard of yet.
            let current = if turn.is_some() {
                self.refresh(ring).await?
            } else {
                self.current(ring).await?
            };
            let version = current.snapshot.version;
            if turn.is_some()
                && contention.last_committed != 0
                && version != contention.last_committed
            {
                // Another instance wrote since this one's last change:
                // writers still alternate, so keep queueing.
                contention.met_others();
            }
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
            if !request.force && !request.dry_run {
                // Inside the loop: a rollout started by another instance
                // while this change lost a compare-and-swap is seen on the
                // retry. Its own steps come forced.
                if let Some(active) = self.store.active_rollout(ring).await? {
                    return Err(StoreError::RolloutActive {
                        ring: ring.clone(),
                        id: active.id,
                    }
                    .into());
                }
            }
            let proposal = match &request.layout {
                None => current.snapshot.propose(
                    &current.placement,
                    request.ops.clone(),
                    request.reason.clone(),
                    role,
                    self.clock.now(),
                )?,
                layout => current.snapshot.propose_exact(
                    &current.placement,
                    request.ops.clone(),
                    layout.as_ref(),
                    request.reason.clone(),
                    role,
                    self.clock.now(),
                )?,
            };
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
            match self.commit_in_term(&proposal.snapshot, fence).await {
                Ok(()) => {
                    contention.last_committed = proposal.snapshot.version;
                    let created = created_nodes(&current.snapshot, &proposal.snapshot);
                    self.forget_removed_leases(ring, &proposal.snapshot.change.ops)
                        .await;
                    let next = Arc::new(Current {
                        snapshot: Arc::new(proposal.snapshot),
                        placement: Arc::new(proposal.placement),
                    });
                    self.cache.remember(next.clone());
                    return Ok(ChangeOutcome::Committed {
                        current: next,
                        diff: proposal.diff,
                        base_config: BaseConfig::of(&current.snapshot),
                        created,
                    });
                }
                Err(StoreError::VersionConflict {
                    current: actual, ..
                }) => {
                    contention.met_others();
                    // Someone else committed first: the cache is behind.
                    // It is brought forward, never emptied, so readers
                    // keep being served from memory meanwhile (and never
                    // see an older version than before).
                    self.refresh(ring).await?;
                    // With a key, the winner may have been an earlier
                    // attempt of this very change: look again first.
                    // A ring still at `version` refused the commit only
                    // because writers queued for the turn go first.
                    if let (Some(expected), None, true) = (
                        request.expected_version,
                        &request.idempotency_key,
                        actual != version,
                    ) {
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

    /// Commits `next`, behind `fence` when the change is the
    /// decision-maker's.
    async fn commit_in_term(
        &self,
        next: &Snapshot,
        fence: Option<&Fence>,
    ) -> Result<(), StoreError> {
        match fence {
            Some(fence) => self.store.commit_fenced(next, fence).await,
            None => self.store.commit(next).await,
        }
    }

    /// Ends the leases of nodes a committed change removed: a node added
    /// again later by an operator is `unmanaged`, not its old lease's. The
    /// change is committed whatever happens here; a lease the store could
    /// not forget now is refused at its next renewal instead (see
    /// `service/leases/mod.rs`).
    async fn forget_removed_leases(&self, ring: &RingName, ops: &[ChangeOp]) {
        let removed: Vec<NodeId> = ops
            .iter()
            .filter_map(|op| match op {
                ChangeOp::Remove { id } => Some(id.clone()),
                _ => None,
            })
            .collect();
        if removed.is_empty() {
            return;
        }
        if let Err(e) = self.store.forget_leases(ring, &removed).await {
            tracing::warn!(%ring, error = %e, "could not end the leases of removed nodes");
        }
    }
}

/// The nodes `next` upserts that `base`, the version it was computed
/// against, lacks. Both hold their nodes sorted by id.
fn created_nodes(base: &Snapshot, next: &Snapshot) -> Vec<NodeId> {
    let holds = |s: &Snapshot, id: &NodeId| s.nodes.binary_search_by(|n| n.id.cmp(id)).is_ok();
    let mut created: Vec<NodeId> = next
        .change
        .ops
        .iter()
        .filter_map(|op| match op {
            ChangeOp::Upsert { node } => Some(&node.id),
            _ => None,
        })
        .filter(|id| !holds(base, id) && holds(next, id))
        .cloned()
        .collect();
    created.sort();
    created.dedup();
    created
}

/// A random pause of up to `attempt` × 5 ms (at most 50 ms).
fn retry_pause(attempt: usize) -> Duration {
    crate::jitter::random_below(Duration::from_millis(5 * attempt.min(10) as u64))
}
