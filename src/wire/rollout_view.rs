//! A rollout on the wire: its state, plan, committed versions, pending
//! gate, pace and log, and the list of a ring's rollouts.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::changes::RoleName;
use super::rollouts::{PolicyView, StepView};
use crate::ring::rollout::{AppliedStep, Direction, GateReading, RolloutEvent, RolloutRecord};

/// How the ring's clients stand against the step waiting for its gate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct GateView {
    /// The version waited on.
    pub version: u64,
    /// Live clients.
    pub live: usize,
    /// Of them, at or past it with the server's fingerprint.
    pub acked: usize,
    /// `acked / live` (1 with no live client).
    pub acked_share: f64,
    /// The share needed.
    pub needed: f64,
    /// Live clients still behind it, by id.
    pub lagging: Vec<String>,
    /// Live clients whose fingerprint differs from the server's.
    pub divergent: Vec<String>,
}

impl GateView {
    /// The pending gate of `r`, as `g` read it.
    pub fn of(r: &RolloutRecord, g: &GateReading) -> Self {
        Self {
            version: r.last_applied().map_or(r.base_version, |a| a.version),
            live: g.live,
            acked: g.acked,
            acked_share: g.share(),
            needed: r.policy.gate,
            lagging: g.lagging.iter().map(ToString::to_string).collect(),
            divergent: g.divergent.iter().map(|(c, _)| c.to_string()).collect(),
        }
    }
}

/// A committed version of a rollout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct AppliedView {
    /// The step whose state it holds (0: the base, after an abort).
    pub step: u32,
    /// `forward` or `back`.
    pub direction: String,
    /// The version.
    pub version: u64,
    /// Its fingerprint.
    pub fingerprint: String,
    /// When it was committed.
    #[serde(with = "time::serde::rfc3339")]
    #[cfg_attr(feature = "server", schema(value_type = String, format = DateTime))]
    pub at: OffsetDateTime,
}

impl From<&AppliedStep> for AppliedView {
    fn from(a: &AppliedStep) -> Self {
        Self {
            step: a.position,
            direction: direction_name(a.direction).into(),
            version: a.version,
            fingerprint: a.fingerprint.to_string(),
            at: a.at,
        }
    }
}

fn direction_name(d: Direction) -> &'static str {
    match d {
        Direction::Forward => "forward",
        Direction::Back => "back",
    }
}

/// Something that happened to a rollout.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct RolloutEventView {
    /// When.
    #[serde(with = "time::serde::rfc3339")]
    #[cfg_attr(feature = "server", schema(value_type = String, format = DateTime))]
    pub at: OffsetDateTime,
    /// `created`, `step`, `paused`, `resumed`, `advanced`, `abort`,
    /// `done` or `aborted`.
    pub kind: String,
    /// Details.
    pub detail: String,
    /// The operator's role, for what an operator did.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub role: Option<RoleName>,
}

impl From<&RolloutEvent> for RolloutEventView {
    fn from(e: &RolloutEvent) -> Self {
        Self {
            at: e.at,
            kind: e.kind.clone(),
            detail: e.detail.clone(),
            role: e.role.map(Into::into),
        }
    }
}

/// A rollout.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct RolloutView {
    /// The ring.
    pub ring: String,
    /// Its number in the ring.
    pub id: u64,
    /// The record's revision: one more at each write (a step, a control,
    /// a pause). Two `rollout` watch events with the same revision differ
    /// only in their gate.
    #[serde(default)]
    #[cfg_attr(feature = "server", schema(required = true))]
    pub revision: u64,
    /// `planned`, `running`, `waiting_for_gate`, `paused`, `done` or
    /// `aborted`.
    pub state: String,
    /// `forward`, or `back` while aborting.
    pub direction: String,
    /// The step whose state the ring holds, 0 before the first (and
    /// after an abort's walk back).
    pub step: u32,
    /// How many steps.
    pub steps: u32,
    /// Why it is paused.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub pause_reason: Option<String>,
    /// The operator's reason.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reason: Option<String>,
    /// Who started it.
    pub role: RoleName,
    /// When it was started.
    #[serde(with = "time::serde::rfc3339")]
    #[cfg_attr(feature = "server", schema(value_type = String, format = DateTime))]
    pub created_at: OffsetDateTime,
    /// When it finished.
    #[serde(
        skip_serializing_if = "Option::is_none",
        default,
        with = "time::serde::rfc3339::option"
    )]
    #[cfg_attr(feature = "server", schema(value_type = Option<String>, format = DateTime))]
    pub finished_at: Option<OffsetDateTime>,
    /// The version it started from, which an abort returns to.
    pub base_version: u64,
    /// That version's fingerprint.
    pub base_fingerprint: String,
    /// The fingerprint the change gives.
    pub target_fingerprint: String,
    /// What the change moves made at once.
    pub direct_moved_fraction: f64,
    /// The pacing.
    pub policy: PolicyView,
    /// The planned steps, each with its version once committed.
    pub plan: Vec<StepView>,
    /// Every version it committed, in order.
    pub applied: Vec<AppliedView>,
    /// The pending gate, while a step waits for it.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub gate: Option<GateView>,
    /// Seconds since the last committed step (or since the start).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub seconds_in_step: Option<f64>,
    /// Estimated seconds to finish, from the pace so far and the dwell.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub eta_seconds: Option<f64>,
    /// What to know about this algorithm's steps.
    pub notes: Vec<String>,
    /// What happened, oldest first.
    pub events: Vec<RolloutEventView>,
}

impl RolloutView {
    /// The record's view, with `gate` read now, at `now`.
    pub fn of(r: &RolloutRecord, gate: Option<GateView>, now: OffsetDateTime) -> Self {
        let plan = r
            .steps
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let mut v = StepView::of(
                    i as u32 + 1,
                    &s.summary,
                    &s.ops,
                    s.moved_fraction,
                    s.fingerprint,
                );
                v.version = r
                    .applied
                    .iter()
                    .rev()
                    .find(|a| a.direction == Direction::Forward && a.position == i as u32 + 1)
                    .map(|a| a.version);
                v
            })
            .collect();
        let active = r.state.is_active();
        let since = r.last_applied().map_or(r.created_at, |a| a.at);
        let seconds_in_step = active.then(|| (now - since).as_seconds_f64().max(0.0));
        let eta_seconds = active.then(|| eta(r, now)).flatten();
        Self {
            ring: r.ring.to_string(),
            id: r.id.0,
            revision: r.revision,
            state: r.state.name().into(),
            direction: direction_name(r.direction).into(),
            step: r.position,
            steps: r.step_count(),
            pause_reason: r.pause_reason.clone(),
            reason: r.reason.clone(),
            role: r.role.into(),
            created_at: r.created_at,
            finished_at: r.finished_at,
            base_version: r.base_version,
            base_fingerprint: r.base_fingerprint.to_string(),
            target_fingerprint: r.target_fingerprint.to_string(),
            direct_moved_fraction: r.direct_moved_fraction,
            policy: (&r.policy).into(),
            plan,
            applied: r.applied.iter().map(AppliedView::from).collect(),
            gate,
            seconds_in_step,
            eta_seconds,
            notes: r.notes.clone(),
            events: r.events.iter().map(RolloutEventView::from).collect(),
        }
    }
}

/// Seconds left at the pace so far (each step at least the dwell): the
/// steps still to commit, plus the gate of the last one.
fn eta(r: &RolloutRecord, now: OffsetDateTime) -> Option<f64> {
    let left = match r.direction {
        Direction::Forward => r.step_count() - r.position,
        Direction::Back if r.immediate => 0,
        Direction::Back => r.position,
    };
    let done = r.applied.len().max(1) as f64;
    let per_step =
        ((now - r.created_at).as_seconds_f64() / done).max(r.policy.min_dwell.as_secs_f64());
    Some(per_step * f64::from(left))
}

/// `GET …/rollouts`: newest first.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct RolloutList {
    /// The ring.
    pub ring: String,
    /// Its rollouts, newest first (the newest 100).
    pub rollouts: Vec<RolloutView>,
}
