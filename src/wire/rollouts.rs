//! Rollouts on the wire: the requests and the plan a dry run answers with
//! (a rollout's view is `rollout_view.rs`).

use serde::{Deserialize, Serialize};

use super::changes::{OpInput, OpView};
#[cfg(feature = "server")]
use super::schema::{ChangeOpsSchema, ReasonSchema, VersionSchema};
use crate::ring::rollout::{OnGateTimeout, RolloutPolicy};

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
