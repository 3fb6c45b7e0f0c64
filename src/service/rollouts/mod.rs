//! The rollouts part of the service: planning and starting one, the
//! operator's controls, (`driver.rs`) the decision-maker's task that
//! commits each step once the ring's clients have applied the one before,
//! (`gate.rs`) the reading of a step's gate, and (`observe.rs`) the
//! watch's rollout events and the metrics' reads.
//!
//! The record lives in the store, so whichever instance decides next
//! picks a rollout up where it stands; each step is committed with an
//! idempotency key naming the rollout and the commit's number, so a
//! driver that committed a step but died before recording it finds the
//! version, instead of committing the step again.

mod driver;
mod gate;
mod observe;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use super::clients::Clients;
use super::rings::{Current, Rings};
use super::ServiceError;
use crate::hub::Hub;
use crate::ring::rollout::{
    Direction, Plan, PlannedRollout, PlannedStep, RolloutId, RolloutPolicy, RolloutPolicySpec,
    RolloutRecord, RolloutState,
};
use crate::ring::{Clock, RequestedOp, RingName, Role};
use crate::store::leadership::{Leadership, Term};
use crate::store::{Store, StoreError};

pub use driver::TICK;
pub use gate::gate_of;

/// A request to roll a change out.
#[derive(Debug, Clone)]
pub struct RolloutRequest {
    /// The change, as `POST …/changes` takes it.
    pub ops: Vec<RequestedOp>,
    /// The operator's reason, recorded in every step.
    pub reason: Option<String>,
    /// Start only if the ring is at this version.
    pub expected_version: Option<u64>,
    /// The pacing, as sent.
    pub policy: RolloutPolicySpec,
    /// Plan it and commit nothing.
    pub dry_run: bool,
}

/// What a rollout request did.
#[derive(Debug)]
pub enum RolloutOutcome {
    /// A dry run: the plan, from `base`.
    Planned {
        /// The steps.
        plan: Box<Plan>,
        /// The version planned from.
        base: Arc<Current>,
        /// The checked policy.
        policy: RolloutPolicy,
    },
    /// The rollout was stored; the driver takes its first step.
    Started(Box<RolloutRecord>),
}

/// An operator's control of a running rollout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RolloutControl {
    /// Stop before the next step.
    Pause,
    /// Go on from a pause.
    Resume,
    /// Walk back to the base version: step by step, each gated, or with
    /// `immediate`, in one version without gates.
    Abort {
        /// One revert, no gates.
        immediate: bool,
    },
    /// Take the next step without waiting for the pending gate, once.
    Advance,
}

impl RolloutControl {
    fn name(self) -> &'static str {
        match self {
            Self::Pause => "pause",
            Self::Resume => "resume",
            Self::Abort { .. } => "abort",
            Self::Advance => "advance",
        }
    }
}

/// The rollouts part.
pub struct Rollouts {
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    hub: Arc<Hub>,
    /// Whether this instance drives the rollouts.
    leadership: Arc<dyn Leadership>,
    rings: Arc<Rings>,
    clients: Arc<Clients>,
    /// The plans of the rollouts driven here, by ring and id (a plan is
    /// recomputed from the base version when missing).
    plans: Mutex<HashMap<(RingName, RolloutId), Arc<Plan>>>,
    /// Wakes the driver early: a rollout started or controlled.
    wake: tokio::sync::Notify,
    /// Held while a rollout record is written and announced, and while
    /// one is read to be announced, so that watchers hear them in order
    /// (see `observe.rs`).
    writes: tokio::sync::Mutex<()>,
    /// Rollout versions this instance committed, per ring, for the metrics.
    commits: Mutex<BTreeMap<RingName, u64>>,
}

impl Rollouts {
    /// The rollouts of `rings`, kept in `store`, gated on `clients`' acks
    /// and announced through `hub`.
    pub(crate) fn new(
        store: Arc<dyn Store>,
        clock: Arc<dyn Clock>,
        hub: Arc<Hub>,
        leadership: Arc<dyn Leadership>,
        rings: Arc<Rings>,
        clients: Arc<Clients>,
    ) -> Self {
        Self {
            store,
            clock,
            hub,
            leadership,
            rings,
            clients,
            plans: Mutex::default(),
            wake: tokio::sync::Notify::new(),
            writes: tokio::sync::Mutex::new(()),
            commits: Mutex::default(),
        }
    }

    /// Plans a rollout of `request` on `ring` and, unless it is a dry
    /// run, stores it for the decision-maker to drive.
    pub async fn start(
        &self,
        ring: &RingName,
        request: RolloutRequest,
        role: Role,
    ) -> Result<RolloutOutcome, ServiceError> {
        let current = self.rings.current(ring).await?;
        let version = current.snapshot.version;
        if let Some(expected) = request.expected_version {
            if expected != version {
                return Err(ServiceError::PreconditionFailed {
                    expected,
                    current: version,
                });
            }
        }
        let policy = RolloutPolicy::from_spec(&request.policy, current.snapshot.config.algorithm)?;
        let now = self.clock.now();
        let plan = Plan::compute(
            &current.snapshot,
            &current.placement,
            request.ops,
            &policy,
            role,
            now,
        )?;
        if request.dry_run {
            return Ok(RolloutOutcome::Planned {
                plan: Box::new(plan),
                base: current,
                policy,
            });
        }
        let record = RolloutRecord::planned(PlannedRollout {
            ring: ring.clone(),
            created_at: now,
            role,
            reason: request.reason,
            ops: plan.direct.snapshot.change.ops.clone(),
            policy,
            base_version: version,
            base_fingerprint: current.snapshot.fingerprint,
            target_fingerprint: plan.direct.snapshot.fingerprint,
            direct_moved_fraction: plan.direct.diff.moved_fraction,
            steps: plan
                .steps
                .iter()
                .map(|s| PlannedStep {
                    summary: s.summary.clone(),
                    ops: s.ops.clone(),
                    fingerprint: s.proposal.snapshot.fingerprint,
                    moved_fraction: s.proposal.diff.moved_fraction,
                })
                .collect(),
            notes: plan.notes.clone(),
        });
        let mut record = record;
        let steps = record.step_count();
        record.log(
            now,
            "created",
            format!("{steps} steps from version {version}"),
            Some(role),
        );
        let record = self.create_rollout_announced(record).await?;
        self.remember_plan(ring, record.id, plan);
        self.wake.notify_one();
        tracing::info!(ring = %ring, rollout = %record.id, steps, "rollout started");
        Ok(RolloutOutcome::Started(Box::new(record)))
    }

    /// One rollout of `ring`.
    pub async fn get(&self, ring: &RingName, id: RolloutId) -> Result<RolloutRecord, ServiceError> {
        self.rings.current(ring).await?;
        Ok(self.store.rollout(ring, id).await?)
    }

    /// The rollouts of `ring`, newest first.
    pub async fn list(&self, ring: &RingName) -> Result<Vec<RolloutRecord>, ServiceError> {
        self.rings.current(ring).await?;
        Ok(self.store.rollouts(ring).await?)
    }

    /// Applies an operator's control to a rollout and returns the record
    /// as stored after it.
    pub async fn control(
        &self,
        ring: &RingName,
        id: RolloutId,
        control: RolloutControl,
        role: Role,
    ) -> Result<RolloutRecord, ServiceError> {
        self.rings.current(ring).await?;
        // The driver may write between the read and the write: read again.
        for _ in 0..10 {
            let mut r = self.store.rollout(ring, id).await?;
            let now = self.clock.now();
            let refused = |why: &str| ServiceError::RolloutState {
                ring: ring.clone(),
                id,
                action: control.name(),
                state: r.state.name(),
                why: why.to_owned(),
            };
            if !r.state.is_active() {
                return Err(refused("it has finished"));
            }
            match control {
                RolloutControl::Pause => {
                    if r.state == RolloutState::Paused {
                        return Err(refused("it is paused already"));
                    }
                    r.pause("paused by an operator".into(), now, Some(role));
                }
                RolloutControl::Resume => {
                    if r.state != RolloutState::Paused {
                        return Err(refused("only a paused rollout resumes"));
                    }
                    self.resume(&mut r).await?;
                    r.log(now, "resumed", String::new(), Some(role));
                }
                RolloutControl::Abort { immediate } => {
                    if r.direction == Direction::Back && !immediate {
                        return Err(refused("it is aborting already"));
                    }
                    if r.direction == Direction::Forward || immediate {
                        r.direction = Direction::Back;
                        r.immediate = immediate;
                        r.gate_pending = false;
                        r.skip_gate = false;
                    }
                    self.resume(&mut r).await?;
                    let how = if immediate {
                        "at once, in one version"
                    } else {
                        "step by step, each gated"
                    };
                    r.log(
                        now,
                        "abort",
                        format!("walking back to version {} {how}", r.base_version),
                        Some(role),
                    );
                }
                RolloutControl::Advance => {
                    if !r.gate_pending {
                        return Err(refused("no step is waiting for its gate"));
                    }
                    r.skip_gate = true;
                    if r.state == RolloutState::Paused {
                        self.resume(&mut r).await?;
                    }
                    let version = r.last_applied().map_or(r.base_version, |a| a.version);
                    r.log(
                        now,
                        "advanced",
                        format!("the gate of version {version} skipped by an operator"),
                        Some(role),
                    );
                }
            }
            r.revision += 1;
            match self.write_rollout(&r).await {
                Ok(()) => {
                    self.wake.notify_one();
                    tracing::info!(ring = %ring, rollout = %id, control = control.name(), ?role, "rollout control");
                    return Ok(r);
                }
                Err(StoreError::RolloutConflict { .. }) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(ServiceError::TooMuchContention(10))
    }

    /// Takes `r` out of a pause: it goes on from the ring's current
    /// version if the ring moved meanwhile.
    async fn resume(&self, r: &mut RolloutRecord) -> Result<(), ServiceError> {
        if r.state == RolloutState::Paused {
            r.pause_reason = None;
            r.state = if r.gate_pending {
                RolloutState::WaitingForGate
            } else {
                RolloutState::Running
            };
        }
        let expected = r.last_applied().map_or(r.base_version, |a| a.version);
        let current = self.rings.current(&r.ring).await?.snapshot.version;
        r.rebase = current != expected;
        Ok(())
    }

    fn remember_plan(&self, ring: &RingName, id: RolloutId, plan: Plan) {
        let mut plans = self.plans.lock().expect("plans lock");
        // Only running rollouts need theirs; a few suffice.
        if plans.len() >= 64 {
            plans.clear();
        }
        plans.insert((ring.clone(), id), Arc::new(plan));
    }

    /// Drops a deleted ring's commit count.
    pub(crate) fn forget_ring(&self, ring: &RingName) {
        self.commits.lock().expect("commits lock").remove(ring);
    }

    /// This instance's term while it drives the rollouts.
    fn leader_term(&self) -> Option<Term> {
        self.leadership.fence().map(|f| f.term())
    }
}
