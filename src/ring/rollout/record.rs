//! A rollout as a store keeps it, and how it records what its driver did
//! (the rule for what it does next is `next.rs`).

use std::fmt;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::policy::RolloutPolicy;
use crate::placement::Fingerprint;
use crate::ring::{ChangeOp, RingName, Role};

/// A rollout's number within its ring: 1, 2, 3 …
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RolloutId(pub u64);

impl fmt::Display for RolloutId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Where a rollout is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RolloutState {
    /// Stored, no step committed yet.
    Planned,
    /// A step is being committed.
    Running,
    /// A step is committed; waiting for its clients (and its dwell).
    WaitingForGate,
    /// Stopped until an operator resumes (or aborts) it.
    Paused,
    /// Every step committed and gated.
    Done,
    /// Walked back to where it started.
    Aborted,
}

impl RolloutState {
    /// Every state, in the order of a rollout's life.
    pub const ALL: [RolloutState; 6] = [
        Self::Planned,
        Self::Running,
        Self::WaitingForGate,
        Self::Paused,
        Self::Done,
        Self::Aborted,
    ];

    /// Whether the rollout still holds its ring.
    pub fn is_active(self) -> bool {
        !matches!(self, Self::Done | Self::Aborted)
    }

    /// The name in the API.
    pub fn name(self) -> &'static str {
        match self {
            Self::Planned => "planned",
            Self::Running => "running",
            Self::WaitingForGate => "waiting_for_gate",
            Self::Paused => "paused",
            Self::Done => "done",
            Self::Aborted => "aborted",
        }
    }
}

/// Which way a rollout is walking.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Towards the change.
    #[default]
    Forward,
    /// Back to where it started (an abort).
    Back,
}

/// One step as planned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedStep {
    /// What it does: "cache-k at 40.0% of weight 1".
    pub summary: String,
    /// Its ops (none for a `table` wave between computed tables).
    pub ops: Vec<ChangeOp>,
    /// The fingerprint its version has, from the one before.
    pub fingerprint: Fingerprint,
    /// Share of the keyspace it moves.
    pub moved_fraction: f64,
}

/// A version the rollout committed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AppliedStep {
    /// The step whose state the version holds (0: the base, for a walk back).
    pub position: u32,
    /// Forward or back.
    pub direction: Direction,
    /// The version.
    pub version: u64,
    /// Its fingerprint.
    pub fingerprint: Fingerprint,
    /// When it was committed.
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
}

/// Something that happened to a rollout, for its log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RolloutEvent {
    /// When.
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
    /// What: `created`, `step`, `paused`, `resumed`, `advanced`,
    /// `abort`, `done`, `aborted`.
    pub kind: String,
    /// Details a person reads.
    pub detail: String,
    /// The operator's role, for what an operator did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
}

/// Longest reason a step's version records, in bytes: the API's limit on
/// reasons (`wire::limits::MAX_REASON_LEN`), which this layer cannot name.
const MAX_STEP_REASON: usize = 1_024;

/// Most events a record keeps (the oldest go first).
const MAX_EVENTS: usize = 200;

/// A rollout, as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RolloutRecord {
    /// Its number in the ring.
    pub id: RolloutId,
    /// The ring.
    pub ring: RingName,
    /// When it was created.
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// Who created it.
    pub role: Role,
    /// The operator's reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The change, as its direct version would record it.
    pub ops: Vec<ChangeOp>,
    /// The pacing.
    pub policy: RolloutPolicy,
    /// The version it started from.
    pub base_version: u64,
    /// That version's fingerprint, which an abort returns to.
    pub base_fingerprint: Fingerprint,
    /// The fingerprint the change gives.
    pub target_fingerprint: Fingerprint,
    /// The change's moved fraction at once.
    pub direct_moved_fraction: f64,
    /// The steps.
    pub steps: Vec<PlannedStep>,
    /// What the plan says about this algorithm's steps.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Where it is.
    pub state: RolloutState,
    /// Which way it walks.
    pub direction: Direction,
    /// The step whose state the ring holds (0: none yet, or walked back).
    pub position: u32,
    /// Whether the last committed version still waits for its gate.
    pub gate_pending: bool,
    /// Skip the pending gate once (`advance`).
    pub skip_gate: bool,
    /// An abort with one revert, no gates.
    pub immediate: bool,
    /// Take the next step from the ring's current version: set by a
    /// resume after the ring moved outside the rollout.
    #[serde(default)]
    pub rebase: bool,
    /// Every version it committed, in order.
    pub applied: Vec<AppliedStep>,
    /// Why it is paused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pause_reason: Option<String>,
    /// When it finished.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "time::serde::rfc3339::option"
    )]
    pub finished_at: Option<OffsetDateTime>,
    /// What happened, oldest first.
    pub events: Vec<RolloutEvent>,
    /// Bumped by every write; a write names the one it read.
    pub revision: u64,
}

/// What a new rollout is made of: everything its record holds before its
/// driver has done anything.
#[derive(Debug, Clone)]
pub struct PlannedRollout {
    /// The ring.
    pub ring: RingName,
    /// When it is created.
    pub created_at: OffsetDateTime,
    /// Who creates it.
    pub role: Role,
    /// The operator's reason.
    pub reason: Option<String>,
    /// The change, as its direct version would record it.
    pub ops: Vec<ChangeOp>,
    /// The pacing.
    pub policy: RolloutPolicy,
    /// The version it starts from.
    pub base_version: u64,
    /// That version's fingerprint.
    pub base_fingerprint: Fingerprint,
    /// The fingerprint the change gives.
    pub target_fingerprint: Fingerprint,
    /// The change's moved fraction at once.
    pub direct_moved_fraction: f64,
    /// The steps.
    pub steps: Vec<PlannedStep>,
    /// What the plan says about this algorithm's steps.
    pub notes: Vec<String>,
}

impl RolloutRecord {
    /// The record of a rollout that has not started: not yet numbered (the
    /// store numbers it), at no step, walking forward, with nothing applied
    /// or logged.
    pub fn planned(p: PlannedRollout) -> Self {
        Self {
            id: RolloutId(0),
            ring: p.ring,
            created_at: p.created_at,
            role: p.role,
            reason: p.reason,
            ops: p.ops,
            policy: p.policy,
            base_version: p.base_version,
            base_fingerprint: p.base_fingerprint,
            target_fingerprint: p.target_fingerprint,
            direct_moved_fraction: p.direct_moved_fraction,
            steps: p.steps,
            notes: p.notes,
            state: RolloutState::Planned,
            direction: Direction::Forward,
            position: 0,
            gate_pending: false,
            skip_gate: false,
            immediate: false,
            rebase: false,
            applied: Vec::new(),
            pause_reason: None,
            finished_at: None,
            events: Vec::new(),
            revision: 0,
        }
    }

    /// The number of steps.
    pub fn step_count(&self) -> u32 {
        self.steps.len() as u32
    }

    /// The last version the rollout committed.
    pub fn last_applied(&self) -> Option<&AppliedStep> {
        self.applied.last()
    }

    /// The version that holds step `position`'s state, for a walk back:
    /// the base for 0, else the latest forward commit of that step.
    pub fn version_of(&self, position: u32) -> Option<u64> {
        if position == 0 {
            return Some(self.base_version);
        }
        self.applied
            .iter()
            .rev()
            .find(|a| a.direction == Direction::Forward && a.position == position)
            .map(|a| a.version)
    }

    /// Records a committed step: `position`'s state is now version
    /// `version`, committed at `at`.
    pub fn committed(
        &mut self,
        position: u32,
        direction: Direction,
        version: u64,
        fingerprint: Fingerprint,
        at: OffsetDateTime,
    ) {
        self.applied.push(AppliedStep {
            position,
            direction,
            version,
            fingerprint,
            at,
        });
        self.position = position;
        self.gate_pending = true;
        self.skip_gate = false;
        self.rebase = false;
        self.state = RolloutState::WaitingForGate;
        let k = self.step_count();
        let detail = match direction {
            Direction::Forward => format!("step {position} of {k}: version {version}"),
            Direction::Back if position == 0 => {
                format!("walked back to the base: version {version}")
            }
            Direction::Back => format!("walked back to step {position} of {k}: version {version}"),
        };
        self.log(at, "step", detail, None);
    }

    /// Ends the rollout in `state`.
    pub fn finish(&mut self, state: RolloutState, at: OffsetDateTime) {
        self.state = state;
        self.gate_pending = false;
        self.finished_at = Some(at);
        self.log(at, state.name(), String::new(), None);
    }

    /// Pauses it, for `reason`.
    pub fn pause(&mut self, reason: String, at: OffsetDateTime, role: Option<Role>) {
        self.state = RolloutState::Paused;
        self.log(at, "paused", reason.clone(), role);
        self.pause_reason = Some(reason);
    }

    /// Appends to the log, dropping the oldest beyond the cap.
    pub fn log(&mut self, at: OffsetDateTime, kind: &str, detail: String, role: Option<Role>) {
        self.events.push(RolloutEvent {
            at,
            kind: kind.to_owned(),
            detail,
            role,
        });
        if self.events.len() > MAX_EVENTS {
            let extra = self.events.len() - MAX_EVENTS;
            self.events.drain(..extra);
        }
    }

    /// The reason a version of this rollout records.
    pub fn step_reason(&self, position: u32) -> String {
        let k = self.step_count();
        let what = match self.direction {
            Direction::Forward => {
                let summary = &self.steps[position as usize - 1].summary;
                format!("step {position} of {k} ({summary})")
            }
            Direction::Back if position == 0 => format!(
                "abort, back to version {} (before the rollout)",
                self.base_version
            ),
            Direction::Back => format!("abort, back to step {position} of {k}"),
        };
        let mut reason = format!("rollout {}: {what}", self.id);
        if let Some(r) = &self.reason {
            reason.push_str(": ");
            reason.push_str(r);
        }
        // As long as a reason the API takes, at most: cut at a character.
        if reason.len() > MAX_STEP_REASON {
            let mut end = MAX_STEP_REASON;
            while !reason.is_char_boundary(end) {
                end -= 1;
            }
            reason.truncate(end);
        }
        reason
    }
}

#[cfg(test)]
mod tests;
