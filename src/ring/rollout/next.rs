//! The rule a rollout's driver follows: from the record, the time and
//! the gate's reading, what to do next. Pure, so a driver that takes over
//! after a restart or a failover does exactly what the one before would
//! have.

use time::OffsetDateTime;

use super::policy::OnGateTimeout;
use super::record::{Direction, RolloutRecord, RolloutState};
use crate::ring::ClientId;

/// How a step's clients stand: of the live clients, who applied the
/// step's version (or a later one) with the fingerprint the server has,
/// who has not yet, and who computed a different placement.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GateReading {
    /// Live clients.
    pub live: usize,
    /// Live clients at or past the step's version, fingerprints matching.
    pub acked: usize,
    /// Live clients still behind it, by id.
    pub lagging: Vec<ClientId>,
    /// Live clients whose fingerprint differs from the server's, with the
    /// version they acked.
    pub divergent: Vec<(ClientId, u64)>,
}

impl GateReading {
    /// The acked share; 1 with no live client (nobody to wait for).
    pub fn share(&self) -> f64 {
        if self.live == 0 {
            1.0
        } else {
            self.acked as f64 / self.live as f64
        }
    }
}

/// What a driver does next.
#[derive(Debug, Clone, PartialEq)]
pub enum NextAction {
    /// Nothing yet.
    Wait,
    /// Commit the state of step `position` (0: the base version).
    Apply {
        /// The step.
        position: u32,
    },
    /// The rollout is over, in this state.
    Finish(RolloutState),
    /// Stop, for this reason.
    Pause(String),
}

impl RolloutRecord {
    /// What to do now, with `gate` read for the last committed version.
    pub fn next(&self, now: OffsetDateTime, gate: Option<&GateReading>) -> NextAction {
        if !matches!(
            self.state,
            RolloutState::Planned | RolloutState::Running | RolloutState::WaitingForGate
        ) {
            return NextAction::Wait;
        }
        let k = self.step_count();
        let forward = self.direction == Direction::Forward;
        if !self.gate_pending {
            return match (forward, self.immediate) {
                (true, _) if self.position < k => NextAction::Apply {
                    position: self.position + 1,
                },
                (true, _) => NextAction::Finish(RolloutState::Done),
                (false, true) => NextAction::Apply { position: 0 },
                (false, false) if self.position > 0 => NextAction::Apply {
                    position: self.position - 1,
                },
                (false, false) => NextAction::Finish(RolloutState::Aborted),
            };
        }
        let Some(last) = self.last_applied() else {
            return NextAction::Wait;
        };
        if self.direction == Direction::Back && self.immediate {
            return NextAction::Finish(RolloutState::Aborted);
        }
        let since = now - last.at;
        let done_here = |s: &Self| -> NextAction {
            match s.direction {
                Direction::Forward if s.position >= k => NextAction::Finish(RolloutState::Done),
                Direction::Forward => NextAction::Apply {
                    position: s.position + 1,
                },
                Direction::Back if s.position == 0 => NextAction::Finish(RolloutState::Aborted),
                Direction::Back => NextAction::Apply {
                    position: s.position - 1,
                },
            }
        };
        if self.skip_gate {
            return done_here(self);
        }
        let Some(gate) = gate else {
            return NextAction::Wait;
        };
        if let Some((client, version)) = gate.divergent.first() {
            return NextAction::Pause(format!(
                "client `{client}` acked version {version} with a fingerprint other than the server's: it computes a different placement; find out why before resuming"
            ));
        }
        let met = gate.share() >= self.policy.gate;
        let dwelt = since >= self.policy.min_dwell;
        if met && dwelt {
            return done_here(self);
        }
        if !met && since >= self.policy.gate_timeout {
            return match self.policy.on_gate_timeout {
                OnGateTimeout::Pause => NextAction::Pause(format!(
                    "the gate timed out after {}: {} of {} live clients applied version {} (needed {:.0}%); lagging: {}",
                    crate::ring::durations::format_duration(self.policy.gate_timeout),
                    gate.acked,
                    gate.live,
                    last.version,
                    self.policy.gate * 100.0,
                    lagging_list(&gate.lagging)
                )),
                OnGateTimeout::Proceed if dwelt => done_here(self),
                OnGateTimeout::Proceed => NextAction::Wait,
            };
        }
        NextAction::Wait
    }
}

fn lagging_list(ids: &[ClientId]) -> String {
    if ids.is_empty() {
        return "none".into();
    }
    let mut s: Vec<String> = ids.iter().take(10).map(|c| format!("`{c}`")).collect();
    if ids.len() > 10 {
        s.push(format!("{} more", ids.len() - 10));
    }
    s.join(", ")
}
