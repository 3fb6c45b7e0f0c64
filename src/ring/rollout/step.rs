//! What a plan is made of: its steps, each with the version it would make.

use std::collections::BTreeMap;

use crate::placement::NodeId;
use crate::ring::{ChangeOp, ExactLayout, NodeRecord, Proposal};

/// One step: the ops it commits and the version it would make.
#[derive(Debug, Clone)]
pub struct PlanStep {
    /// The step's ops (for a `table` wave between two computed tables,
    /// none: the table is the change).
    pub ops: Vec<ChangeOp>,
    /// The layout the step commits when it is chosen rather than computed.
    pub layout: Option<ExactLayout>,
    /// What the step does, for its reason and the plan: "cache-k at 40%".
    pub summary: String,
    /// The version it would make, from the one before it.
    pub proposal: Proposal,
}

/// A rollout's steps, from the base version to the change's result.
#[derive(Debug, Clone)]
pub struct Plan {
    /// In order; the last one's placement is the direct change's.
    pub steps: Vec<PlanStep>,
    /// The change made at once, for comparison.
    pub direct: Proposal,
    /// What an operator should know about this algorithm's steps.
    pub notes: Vec<String>,
}

impl Plan {
    /// The largest moved fraction of any step.
    pub fn max_step_moved(&self) -> f64 {
        self.steps
            .iter()
            .map(|s| s.proposal.diff.moved_fraction)
            .fold(0.0, f64::max)
    }

    /// The sum of the steps' moved fractions.
    pub fn total_moved(&self) -> f64 {
        self.steps
            .iter()
            .map(|s| s.proposal.diff.moved_fraction)
            .sum()
    }
}

/// The nodes a change touches: their record before and after.
pub(super) type Deltas = BTreeMap<NodeId, (Option<NodeRecord>, Option<NodeRecord>)>;

/// The ops of the change that touch no node: `set_config`s that leave
/// the placement config as it is (a new membership policy).
pub(super) fn policy_ops(direct: &Proposal) -> Vec<ChangeOp> {
    direct
        .snapshot
        .change
        .ops
        .iter()
        .filter(|op| matches!(op, ChangeOp::SetConfig { .. }))
        .cloned()
        .collect()
}
