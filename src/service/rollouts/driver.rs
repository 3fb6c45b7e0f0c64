//! The decision-maker's rollout task: every [`TICK`] (and at once when a
//! rollout is started or controlled) it reads every active rollout from
//! the store and does what the record's rule says: commit a step, wait,
//! pause or finish. Only the decision-maker drives, with its term's
//! fence, so a deposed instance's late step is refused by the store.

use std::sync::Arc;
use std::time::Duration;

use super::Rollouts;
use crate::ring::rollout::{AppliedStep, Direction, NextAction, Plan, RolloutRecord, RolloutState};
use crate::ring::{ChangeOp, ExactLayout, IdempotencyKey, RequestedOp, Snapshot};
use crate::service::background::{Stop, Ticks};
use crate::service::rings::{ChangeOutcome, ChangeRequest};
use crate::service::ServiceError;
use crate::store::leadership::Term;
use crate::store::StoreError;

/// How often the decision-maker looks at every active rollout.
pub const TICK: Duration = Duration::from_millis(250);

/// Most actions one rollout takes in one tick (a commit, then the look at
/// its gate): the rest wait for the next tick.
const ACTIONS_PER_TICK: usize = 4;

/// A committed step: its version, fingerprint and time.
struct Committed {
    /// Committed now, rather than found committed before (a retry).
    new: bool,
    version: u64,
    fingerprint: crate::placement::Fingerprint,
    at: time::OffsetDateTime,
}

impl Rollouts {
    /// Drives rollouts until `stop`; one loop per service (see
    /// `service/background.rs`).
    pub(crate) async fn drive_all(self: Arc<Self>, stop: Stop) {
        let mut ticks = Ticks::every(TICK, stop);
        while ticks.next_or(&self.wake).await {
            self.tick().await;
        }
    }

    async fn tick(&self) {
        let Some(term) = self.leader_term() else {
            return;
        };
        let active = match self.store.active_rollouts().await {
            Ok(a) => a,
            Err(e) => {
                tracing::debug!(error = %e, "rollouts not read; the next tick retries");
                return;
            }
        };
        for r in active {
            let (ring, id) = (r.ring.clone(), r.id);
            if let Err(e) = self.drive(r, term).await {
                tracing::debug!(ring = %ring, rollout = %id, error = %e, "rollout not driven; the next tick retries");
            }
        }
    }

    async fn drive(&self, mut r: RolloutRecord, term: Term) -> Result<(), ServiceError> {
        for _ in 0..ACTIONS_PER_TICK {
            let gate = if r.gate_pending && !r.skip_gate {
                Some(self.gate_reading(&r).await?)
            } else {
                None
            };
            let now = self.clock.now();
            match r.next(now, gate.as_ref()) {
                NextAction::Wait => return Ok(()),
                NextAction::Pause(reason) => {
                    tracing::warn!(ring = %r.ring, rollout = %r.id, %reason, "rollout paused");
                    r.pause(reason, now, None);
                    return self.save(&mut r).await;
                }
                NextAction::Finish(state) => {
                    tracing::info!(ring = %r.ring, rollout = %r.id, state = state.name(), "rollout finished");
                    r.finish(state, now);
                    return self.save(&mut r).await;
                }
                NextAction::Apply { position } => {
                    match self.commit_step(&r, position, term).await {
                        Ok(c) => {
                            if c.new {
                                self.count_commit(&r.ring);
                            }
                            tracing::info!(ring = %r.ring, rollout = %r.id, position, version = c.version, "rollout step committed");
                            self.record_commit(&mut r, position, c).await?;
                        }
                        Err(ServiceError::Store(
                            e @ (StoreError::Deposed(_) | StoreError::Unavailable { .. }),
                        )) => return Err(e.into()),
                        Err(ServiceError::PreconditionFailed { current, .. }) => {
                            let reason = format!(
                                "the ring moved to version {current} outside the rollout (a forced change); resume to go on from that version, or abort"
                            );
                            r.pause(reason, now, None);
                            return self.save(&mut r).await;
                        }
                        Err(e) => {
                            r.pause(
                                format!("step {position} could not be committed: {e}"),
                                now,
                                None,
                            );
                            return self.save(&mut r).await;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Writes `r`, one revision on, and announces it to its watchers.
    async fn save(&self, r: &mut RolloutRecord) -> Result<(), ServiceError> {
        r.revision += 1;
        Ok(self.write_rollout(r).await?)
    }

    /// Records a committed step in `r`, reading the record again if an
    /// operator wrote it meanwhile: the commit is recorded either way,
    /// and the operator's pause or abort is kept.
    async fn record_commit(
        &self,
        r: &mut RolloutRecord,
        position: u32,
        c: Committed,
    ) -> Result<(), ServiceError> {
        let direction = r.direction;
        for _ in 0..10 {
            if !r.applied.iter().any(|a| a.version == c.version) {
                if r.direction == direction {
                    let paused = r.state == RolloutState::Paused;
                    r.committed(position, direction, c.version, c.fingerprint, c.at);
                    if paused {
                        r.state = RolloutState::Paused;
                    }
                } else {
                    // An abort came in meanwhile: note the step, and let
                    // the walk back start from it.
                    r.applied.push(AppliedStep {
                        position,
                        direction,
                        version: c.version,
                        fingerprint: c.fingerprint,
                        at: c.at,
                    });
                    r.position = position;
                }
            }
            match self.save(r).await {
                Ok(()) => return Ok(()),
                Err(ServiceError::Store(StoreError::RolloutConflict { .. })) => {
                    *r = self.store.rollout(&r.ring, r.id).await?;
                }
                Err(e) => return Err(e),
            }
        }
        Err(ServiceError::TooMuchContention(10))
    }

    /// Commits the state of step `position` of `r`.
    async fn commit_step(
        &self,
        r: &RolloutRecord,
        position: u32,
        term: Term,
    ) -> Result<Committed, ServiceError> {
        let current = self.rings.current(&r.ring).await?;
        let expected = if r.rebase {
            current.snapshot.version
        } else {
            r.last_applied().map_or(r.base_version, |a| a.version)
        };
        let (ops, layout) = match r.direction {
            Direction::Forward => {
                let plan = self.plan_of(r).await?;
                let step = &plan.steps[position as usize - 1];
                (step.ops.clone(), step.layout.clone())
            }
            Direction::Back => {
                let version = r.version_of(position).ok_or_else(|| {
                    crate::ring::RingError::from(crate::placement::PlacementError::InvalidTable(
                        format!("rollout {} has no version for step {position}", r.id),
                    ))
                })?;
                let target = self.rings.snapshot(&r.ring, version).await?;
                // From the version the step starts from, not from what the
                // ring holds now: a retry after a failover then sends the
                // same ops under the same key, and finds its version.
                let from = if expected == current.snapshot.version {
                    current.snapshot.clone()
                } else {
                    self.rings.snapshot(&r.ring, expected).await?
                };
                (restore_ops(&from, &target), ExactLayout::of(&target))
            }
        };
        let key =
            IdempotencyKey::try_from(format!("rollout-{}-commit-{}", r.id, r.applied.len() + 1))?;
        let request = ChangeRequest {
            expected_version: Some(expected),
            reason: Some(r.step_reason(position)),
            idempotency_key: Some(key),
            force: true,
            layout,
            ..ChangeRequest::of(ops.into_iter().map(RequestedOp::Op).collect())
        };
        let (snapshot, new) = match self.rings.apply_as_leader(&r.ring, request, term).await? {
            ChangeOutcome::Committed { current, .. } => (current.snapshot.clone(), true),
            ChangeOutcome::Replayed { snapshot, .. } => (snapshot, false),
            // Already there (a walk back to a state the ring holds).
            ChangeOutcome::Unchanged { current } => (current.snapshot.clone(), false),
            ChangeOutcome::Preview { .. } => unreachable!("not a dry run"),
        };
        Ok(Committed {
            new,
            version: snapshot.version,
            fingerprint: snapshot.fingerprint,
            at: snapshot.created_at,
        })
    }

    /// The plan of `r`, recomputed from its base version after a restart
    /// or on another instance, and checked against the fingerprints the
    /// record stored when it was made.
    async fn plan_of(&self, r: &RolloutRecord) -> Result<Arc<Plan>, ServiceError> {
        let key = (r.ring.clone(), r.id);
        let same = |plan: &Plan| {
            plan.steps.len() == r.steps.len()
                && plan
                    .steps
                    .iter()
                    .zip(&r.steps)
                    .all(|(a, b)| a.proposal.snapshot.fingerprint == b.fingerprint)
        };
        let cached = self.plans.lock().expect("plans lock").get(&key).cloned();
        // A ring deleted and created again numbers its rollouts afresh:
        // a cached plan counts only if it is this record's.
        if let Some(p) = cached.filter(|p| same(p)) {
            return Ok(p);
        }
        let base = self.rings.snapshot(&r.ring, r.base_version).await?;
        let placement = base.placement()?;
        let ops = r.ops.iter().cloned().map(RequestedOp::Op).collect();
        let plan = Plan::compute(&base, &placement, ops, &r.policy, r.role, r.created_at)?;
        if !same(&plan) {
            return Err(ServiceError::PlanChanged(r.id));
        }
        let plan = Arc::new(plan);
        self.plans
            .lock()
            .expect("plans lock")
            .insert(key, plan.clone());
        Ok(plan)
    }
}

/// The ops that take `current` back to `target`'s nodes and config.
fn restore_ops(current: &Snapshot, target: &Snapshot) -> Vec<ChangeOp> {
    let mut ops = Vec::new();
    if current.config != target.config || current.membership != target.membership {
        ops.push(ChangeOp::SetConfig {
            config: target.config.clone(),
            membership: Some(target.membership),
        });
    }
    for n in &current.nodes {
        if !target.nodes.iter().any(|t| t.id == n.id) {
            ops.push(ChangeOp::Remove { id: n.id.clone() });
        }
    }
    for t in &target.nodes {
        if current.nodes.iter().find(|n| n.id == t.id) != Some(t) {
            ops.push(ChangeOp::Upsert { node: t.clone() });
        }
    }
    ops
}
