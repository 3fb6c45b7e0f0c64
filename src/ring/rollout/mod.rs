//! Rollouts: one change applied in paced steps, each an ordinary version,
//! each waiting until the ring's clients have applied the one before.
//!
//! Pure data and rules: the policy (`policy.rs`), the planner that turns
//! a change into steps (`plan.rs`, with `waves.rs` for `table` rings), the
//! record a store keeps and the state machine a driver follows
//! (`record.rs`). The service runs it; `docs/rollouts.md` explains it.

mod next;
mod plan;
mod policy;
mod record;
mod step;
mod waves;

pub use next::{GateReading, NextAction};
pub use policy::{
    OnGateTimeout, RolloutPolicy, RolloutPolicySpec, DEFAULT_GATE, DEFAULT_GATE_TIMEOUT,
    GATE_TIMEOUT, MAX_STEPS, MIN_DWELL,
};
pub use record::{
    AppliedStep, Direction, PlannedRollout, PlannedStep, RolloutEvent, RolloutId, RolloutRecord,
    RolloutState,
};
pub use step::{Plan, PlanStep};

use thiserror::Error;

use super::RingError;

/// Why a rollout could not be planned.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum RolloutError {
    /// The change itself is invalid.
    #[error(transparent)]
    Ring(#[from] RingError),
    /// A policy field is out of range.
    #[error("{detail}")]
    Policy {
        /// The field.
        field: &'static str,
        /// What is wrong and what to send.
        detail: String,
    },
    /// The change would leave the ring as it is.
    #[error("the change leaves the ring as it is, so there is nothing to roll out")]
    NoChange,
    /// More than one step asked of a change that takes one.
    #[error("this change takes a single step: {0}; ask for steps 1, or leave steps out")]
    SingleStepOnly(String),
    /// More steps asked than the change has.
    #[error("{asked} steps asked, but this change has at most {most}{}", if why.is_empty() { String::new() } else { format!(": {why}") })]
    TooManySteps {
        /// Asked (or needed).
        asked: u32,
        /// The most there can be.
        most: u32,
        /// Why, if more than the cap.
        why: String,
    },
    /// No step count up to the cap keeps every step within the fraction.
    #[error("no plan of up to {most} steps keeps every step's moved fraction at most {fraction} (the change moves {direct:.4} at once): raise max_moved_fraction_per_step")]
    FractionUnreachable {
        /// The policy's fraction.
        fraction: f64,
        /// The step cap.
        most: u32,
        /// The direct change's moved fraction.
        direct: f64,
    },
    /// A step of the plan would change nothing (a planner bug, reported
    /// rather than committed).
    #[error("step {0} of the plan changes nothing")]
    EmptyStep(u32),
}

impl From<crate::placement::PlacementError> for RolloutError {
    fn from(e: crate::placement::PlacementError) -> Self {
        Self::Ring(e.into())
    }
}
