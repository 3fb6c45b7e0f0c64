//! Rollouts on the wire: the request, the plan a dry run answers with, a
//! rollout's view and the list.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::changes::{OpInput, OpView, RoleName};
#[cfg(feature = "server")]
use super::schema::{ChangeOpsSchema, ReasonSchema, VersionSchema};
use crate::ring::rollout::{
    AppliedStep, Direction, OnGateTimeout, RolloutEvent, RolloutPolicy, RolloutRecord,
};

/// A rollout's pacing, as a request sends it; unknown fields refused.
#[derive(Debug, Clone, Default, Serialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct RolloutPolicyInput {
    /// Exactly this many steps, 1–100. Give this or
    /// `max_moved_fraction_per_step` (or, for `table` rings,
    /// `max_moves_per_node_per_step`).
    #[cfg_attr(feature = "server", schema(minimum = 1, maximum = 100))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<u64>,
    /// As few steps as keep each one's moved fraction at most this, above
    /// 0 and at most 1 (0.05: 5% of the keyspace per step).
    #[cfg_attr(feature = "server", schema(exclusive_minimum = 0.0, maximum = 1.0))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_moved_fraction_per_step: Option<f64>,
    /// Shortest time between a step's commit and the next step, `0s` to
    /// `24h` (`30s`, `5m`); defaults to `0s`.
    #[cfg_attr(feature = "server", schema(value_type = Option<super::schema::MinDwellSchema>))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_dwell: Option<String>,
    /// Share of live clients that must have acked a step's version with
    /// the server's fingerprint before the next step, 0 to 1; defaults
    /// to 1 (all of them). With no live client the gate is open.
    #[cfg_attr(feature = "server", schema(minimum = 0.0, maximum = 1.0))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gate: Option<f64>,
    /// How long a step waits for its gate, `1s` to `168h`; defaults to `10m`.
    #[cfg_attr(feature = "server", schema(value_type = Option<super::schema::GateTimeoutSchema>))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gate_timeout: Option<String>,
    /// What then: `pause` (the default) or `proceed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_gate_timeout: Option<OnGateTimeoutName>,
    /// `table` rings only: most slot moves onto or off one node per step.
    #[cfg_attr(feature = "server", schema(minimum = 1, maximum = 4294967295_u64))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_moves_per_node_per_step: Option<u64>,
}

/// What a rollout does when a gate times out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum OnGateTimeoutName {
    /// Stop and wait for an operator.
    Pause,
    /// Take the next step anyway.
    Proceed,
}

impl From<OnGateTimeout> for OnGateTimeoutName {
    fn from(o: OnGateTimeout) -> Self {
        match o {
            OnGateTimeout::Pause => Self::Pause,
            OnGateTimeout::Proceed => Self::Proceed,
        }
    }
}

/// The body of `POST …/rollouts`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "server", schema(example = json!({
    "ops": [{"op": "upsert", "node": {"id": "cache-e", "address": "10.0.0.6:11211"}}],
    "reason": "add cache-e",
    "expected_version": 12,
    "policy": {"steps": 5, "gate": 0.95, "min_dwell": "30s", "gate_timeout": "10m"}
})))]
#[serde(deny_unknown_fields)]
pub struct RolloutInput {
    /// The change, as `POST …/changes` takes it; 1–10000 ops.
    #[cfg_attr(feature = "server", schema(value_type = ChangeOpsSchema))]
    pub ops: Vec<OpInput>,
    /// Start only if the ring is at this version.
    #[cfg_attr(feature = "server", schema(value_type = Option<VersionSchema>))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_version: Option<u64>,
    /// Free-text reason, recorded in every step's version after
    /// "rollout R: step i of k (…)".
    #[cfg_attr(feature = "server", schema(value_type = Option<ReasonSchema>))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// How to pace it.
    pub policy: RolloutPolicyInput,
    /// Plan it, commit nothing. Not nullable: omit it for false.
    #[cfg_attr(feature = "server", schema(value_type = bool, required = false, default = false))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
}

/// One node's record in a step, for reading ramps at a glance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct StepNodeView {
    /// The node.
    pub id: String,
    /// Its weight in the step; absent when the step removes it.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub weight: Option<u32>,
    /// Its ramp in parts of 65,536 (65,536: all in); absent when removed.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub ramp: Option<u32>,
    /// `active`, `draining`, `joining`, or `removed`.
    pub state: String,
}

/// One step of a plan.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct StepView {
    /// 1-based.
    pub step: u32,
    /// What it does.
    pub summary: String,
    /// The nodes it changes, with their weight and ramp in it.
    pub nodes: Vec<StepNodeView>,
    /// Its ops (none for a `table` wave between computed tables: the
    /// table is the change).
    pub ops: Vec<OpView>,
    /// Share of the keyspace it moves.
    pub moved_fraction: f64,
    /// The fingerprint of the version it makes.
    pub fingerprint: String,
    /// The version it made, once committed (forward).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub version: Option<u64>,
}

impl StepView {
    /// Step `step` (1-based) with `ops`.
    pub fn of(
        step: u32,
        summary: &str,
        ops: &[crate::ring::ChangeOp],
        moved_fraction: f64,
        fingerprint: crate::placement::Fingerprint,
    ) -> Self {
        use crate::ring::ChangeOp;
        let nodes = ops
            .iter()
            .filter_map(|op| match op {
                ChangeOp::Upsert { node } => Some(StepNodeView {
                    id: node.id.to_string(),
                    weight: Some(node.weight.get()),
                    ramp: Some(node.ramp.get()),
                    state: super::nodes::NodeStateName::from(node.state)
                        .as_str()
                        .to_owned(),
                }),
                ChangeOp::Remove { id } => Some(StepNodeView {
                    id: id.to_string(),
                    weight: None,
                    ramp: None,
                    state: "removed".into(),
                }),
                ChangeOp::SetConfig { .. } => None,
            })
            .collect();
        Self {
            step,
            summary: summary.to_owned(),
            nodes,
            ops: ops.iter().map(OpView::from).collect(),
            moved_fraction,
            fingerprint: fingerprint.to_string(),
            version: None,
        }
    }
}

/// A dry run's answer: the steps the rollout would commit.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct RolloutPlanView {
    /// The ring.
    pub ring: String,
    /// Always true: nothing was committed.
    pub dry_run: bool,
    /// The version planned from.
    pub base_version: u64,
    /// Its fingerprint.
    pub base_fingerprint: String,
    /// The fingerprint of the last step, equal to the direct change's.
    pub target_fingerprint: String,
    /// The steps; step `i` would be version `base_version + i`.
    pub steps: Vec<StepView>,
    /// The sum of the steps' moved fractions.
    pub total_moved_fraction: f64,
    /// What the change moves made at once.
    pub direct_moved_fraction: f64,
    /// What to know about this algorithm's steps.
    pub notes: Vec<String>,
    /// The policy as checked, with its defaults.
    pub policy: PolicyView,
}

/// A checked policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct PolicyView {
    /// Steps asked for, if given.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub steps: Option<u32>,
    /// Per-step moved fraction cap, if given.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub max_moved_fraction_per_step: Option<f64>,
    /// Shortest time between steps.
    pub min_dwell: String,
    /// Share of live clients each step waits for.
    pub gate: f64,
    /// How long a step waits for its gate.
    pub gate_timeout: String,
    /// What then.
    pub on_gate_timeout: OnGateTimeoutName,
    /// `table`: per-node move cap, if given.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub max_moves_per_node_per_step: Option<u32>,
}

impl From<&RolloutPolicy> for PolicyView {
    fn from(p: &RolloutPolicy) -> Self {
        use crate::ring::durations::format_duration;
        Self {
            steps: p.steps,
            max_moved_fraction_per_step: p.max_moved_fraction_per_step,
            min_dwell: format_duration(p.min_dwell),
            gate: p.gate,
            gate_timeout: format_duration(p.gate_timeout),
            on_gate_timeout: p.on_gate_timeout.into(),
            max_moves_per_node_per_step: p.max_moves_per_node_per_step,
        }
    }
}

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

/// The body of `POST …/rollouts/{id}/abort`; may be omitted.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct AbortInput {
    /// One revert version at once, without gates; by default the walk back
    /// goes step by step, each gated like the way forward. Not nullable.
    #[cfg_attr(feature = "server", schema(value_type = bool, required = false, default = false))]
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub immediate: bool,
}
