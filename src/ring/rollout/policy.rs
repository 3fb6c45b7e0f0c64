//! How a rollout paces its steps: the policy an operator gives, checked
//! once, at the boundary, into the form the planner and driver use.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::RolloutError;
use crate::placement::Algorithm;
use crate::ring::durations::{format_duration, parse_duration, DurationBounds};

/// Most steps a rollout may take.
pub const MAX_STEPS: u32 = 100;

/// `min_dwell`: 0 to 24 h between one step's commit and the next.
pub const MIN_DWELL: DurationBounds = DurationBounds {
    min: Duration::ZERO,
    max: Duration::from_secs(24 * 3600),
};

/// `gate_timeout`: 1 s to 7 days of waiting on one step's gate.
pub const GATE_TIMEOUT: DurationBounds = DurationBounds {
    min: Duration::from_secs(1),
    max: Duration::from_secs(7 * 24 * 3600),
};

/// How long a step waits for its gate unless the policy says.
pub const DEFAULT_GATE_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// The share of live clients that must have applied a step unless the
/// policy says: all of them.
pub const DEFAULT_GATE: f64 = 1.0;

/// What a rollout does when a step's gate is not met in time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnGateTimeout {
    /// Stop and wait for an operator (the default).
    #[default]
    Pause,
    /// Take the next step anyway.
    Proceed,
}

/// A policy as a request sends it: every field optional, unknown fields
/// refused. [`RolloutPolicy::from_spec`] checks it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RolloutPolicySpec {
    /// Exactly this many steps.
    pub steps: Option<u64>,
    /// As few steps as keep each one's moved fraction at most this.
    pub max_moved_fraction_per_step: Option<f64>,
    /// Shortest time between a step's commit and the next step.
    pub min_dwell: Option<String>,
    /// Share of live clients that must have acked a step, with a matching
    /// fingerprint, before the next.
    pub gate: Option<f64>,
    /// How long a step waits for its gate.
    pub gate_timeout: Option<String>,
    /// What then.
    pub on_gate_timeout: Option<OnGateTimeout>,
    /// `table` rings: most slot moves onto or off one node in one step.
    pub max_moves_per_node_per_step: Option<u64>,
}

/// A checked policy, as a rollout record stores it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RolloutPolicy {
    /// Exactly this many steps, if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<u32>,
    /// The most a step may move, if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_moved_fraction_per_step: Option<f64>,
    /// Shortest time between steps.
    #[serde(with = "duration_text")]
    pub min_dwell: Duration,
    /// Share of live clients a step waits for, 0 to 1.
    pub gate: f64,
    /// How long a step waits for its gate.
    #[serde(with = "duration_text")]
    pub gate_timeout: Duration,
    /// What then.
    pub on_gate_timeout: OnGateTimeout,
    /// `table` rings: most slot moves per node per step, if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_moves_per_node_per_step: Option<u32>,
}

fn out_of_range(field: &'static str, detail: String) -> RolloutError {
    RolloutError::Policy { field, detail }
}

fn duration(
    field: &'static str,
    bounds: &DurationBounds,
    text: Option<&str>,
    default: Duration,
) -> Result<Duration, RolloutError> {
    let Some(text) = text else {
        return Ok(default);
    };
    let d = parse_duration(text).map_err(|e| out_of_range(field, e))?;
    if !bounds.contains(d) {
        return Err(out_of_range(
            field,
            format!("`{text}` is out of range; use {}", bounds.range()),
        ));
    }
    Ok(d)
}

impl RolloutPolicy {
    /// Checks `spec` for a ring of `algorithm`.
    pub fn from_spec(spec: &RolloutPolicySpec, algorithm: Algorithm) -> Result<Self, RolloutError> {
        let steps = match spec.steps {
            None => None,
            Some(n) if (1..=u64::from(MAX_STEPS)).contains(&n) => Some(n as u32),
            Some(n) => {
                return Err(out_of_range(
                    "steps",
                    format!("{n} is out of range: use 1 to {MAX_STEPS} steps"),
                ))
            }
        };
        let max_moved = match spec.max_moved_fraction_per_step {
            None => None,
            Some(f) if f > 0.0 && f <= 1.0 => Some(f),
            Some(f) => {
                return Err(out_of_range(
                    "max_moved_fraction_per_step",
                    format!("{f} is out of range: use a fraction above 0 and at most 1 (0.05 = 5% of the keyspace per step)"),
                ))
            }
        };
        let per_node = match (spec.max_moves_per_node_per_step, algorithm) {
            (None, _) => None,
            (Some(_), a) if a != Algorithm::Table => {
                return Err(out_of_range(
                    "max_moves_per_node_per_step",
                    format!("only table rings move partitions; this ring is {}: pace it with steps or max_moved_fraction_per_step", a.name()),
                ))
            }
            (Some(n), _) if (1..=u64::from(u32::MAX)).contains(&n) => Some(n as u32),
            (Some(n), _) => {
                return Err(out_of_range(
                    "max_moves_per_node_per_step",
                    format!("{n} is out of range: use at least 1"),
                ))
            }
        };
        if steps.is_some() && max_moved.is_some() {
            return Err(out_of_range(
                "steps",
                "give steps or max_moved_fraction_per_step, not both".into(),
            ));
        }
        if steps.is_none() && max_moved.is_none() && per_node.is_none() {
            return Err(out_of_range(
                "steps",
                "say how to pace the change: steps (how many), max_moved_fraction_per_step (how much each may move) or, for table rings, max_moves_per_node_per_step".into(),
            ));
        }
        let gate = match spec.gate {
            None => DEFAULT_GATE,
            Some(g) if (0.0..=1.0).contains(&g) => g,
            Some(g) => {
                return Err(out_of_range(
                    "gate",
                    format!(
                        "{g} is out of range: use a share of live clients from 0 to 1 (0.95 = 95%)"
                    ),
                ))
            }
        };
        Ok(Self {
            steps,
            max_moved_fraction_per_step: max_moved,
            min_dwell: duration(
                "min_dwell",
                &MIN_DWELL,
                spec.min_dwell.as_deref(),
                Duration::ZERO,
            )?,
            gate,
            gate_timeout: duration(
                "gate_timeout",
                &GATE_TIMEOUT,
                spec.gate_timeout.as_deref(),
                DEFAULT_GATE_TIMEOUT,
            )?,
            on_gate_timeout: spec.on_gate_timeout.unwrap_or_default(),
            max_moves_per_node_per_step: per_node,
        })
    }
}

/// Durations written as ringd writes them everywhere (`30s`, `1500ms`).
mod duration_text {
    use super::*;
    use serde::{Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_duration(*d))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let text = String::deserialize(d)?;
        parse_duration(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(json: &str) -> RolloutPolicySpec {
        serde_json::from_str(json).unwrap()
    }

    fn refused(json: &str, algorithm: Algorithm) -> (&'static str, String) {
        match RolloutPolicy::from_spec(&spec(json), algorithm) {
            Err(RolloutError::Policy { field, detail }) => (field, detail),
            other => panic!("{json}: expected a policy error, got {other:?}"),
        }
    }

    #[test]
    fn a_policy_takes_its_defaults_and_round_trips() {
        let p =
            RolloutPolicy::from_spec(&spec(r#"{"steps": 5, "min_dwell": "2s"}"#), Algorithm::Ring)
                .unwrap();
        assert_eq!(
            p,
            RolloutPolicy {
                steps: Some(5),
                max_moved_fraction_per_step: None,
                min_dwell: Duration::from_secs(2),
                gate: 1.0,
                gate_timeout: Duration::from_secs(600),
                on_gate_timeout: OnGateTimeout::Pause,
                max_moves_per_node_per_step: None,
            }
        );
        let text = serde_json::to_string(&p).unwrap();
        assert_eq!(
            text,
            r#"{"steps":5,"min_dwell":"2s","gate":1.0,"gate_timeout":"10m","on_gate_timeout":"pause"}"#
        );
        assert_eq!(serde_json::from_str::<RolloutPolicy>(&text).unwrap(), p);
    }

    #[test]
    fn out_of_range_policies_name_the_field() {
        let ring = Algorithm::Ring;
        assert_eq!(refused(r#"{"steps": 0}"#, ring).0, "steps");
        assert_eq!(refused(r#"{"steps": 101}"#, ring).0, "steps");
        assert_eq!(refused("{}", ring).0, "steps");
        assert_eq!(
            refused(r#"{"steps": 2, "max_moved_fraction_per_step": 0.1}"#, ring).1,
            "give steps or max_moved_fraction_per_step, not both"
        );
        assert_eq!(
            refused(r#"{"max_moved_fraction_per_step": 0}"#, ring).0,
            "max_moved_fraction_per_step"
        );
        assert_eq!(refused(r#"{"steps": 2, "gate": 1.5}"#, ring).0, "gate");
        assert_eq!(
            refused(r#"{"steps": 2, "gate_timeout": "0s"}"#, ring),
            (
                "gate_timeout",
                "`0s` is out of range; use 1s to 168h".into()
            )
        );
        assert_eq!(
            refused(r#"{"steps": 2, "min_dwell": "soon"}"#, ring).0,
            "min_dwell"
        );
        assert_eq!(
            refused(r#"{"max_moves_per_node_per_step": 10}"#, ring).0,
            "max_moves_per_node_per_step"
        );
        assert!(RolloutPolicy::from_spec(
            &spec(r#"{"max_moves_per_node_per_step": 10}"#),
            Algorithm::Table
        )
        .is_ok());
    }
}
