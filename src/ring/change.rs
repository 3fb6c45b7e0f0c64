//! Changes: the operations that turn one ring version into the next.

use serde::{Deserialize, Serialize};

use super::membership_policy::{MembershipPolicy, MembershipPolicySpec};
use super::record::NodeRecord;
use crate::placement::{NodeId, RingConfig, RingConfigSpec};

/// Most operations one change may carry.
pub const MAX_OPS: usize = 10_000;

/// One operation of a change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum ChangeOp {
    /// Register a node or replace its record.
    Upsert {
        /// The full record.
        node: NodeRecord,
    },
    /// Remove a node.
    Remove {
        /// The node to remove; it must exist.
        id: NodeId,
    },
    /// Replace the ring's configuration.
    SetConfig {
        /// The new configuration.
        config: RingConfig,
        /// The new membership policy; `None` when the op left the policy
        /// as it was (every op recorded before policies existed).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        membership: Option<MembershipPolicy>,
    },
}

/// One operation as a change request carries it. Applying a change turns
/// each into the [`ChangeOp`] its version records.
#[derive(Debug, Clone, PartialEq)]
pub enum RequestedOp {
    /// An op recorded as it is.
    Op(ChangeOp),
    /// Change some fields of the ring's configuration, keeping the others
    /// as they are at that point of the change (`update_config`). The
    /// version records the resulting complete configuration as a
    /// [`ChangeOp::SetConfig`], so stored versions and watch events only
    /// ever hold the three recorded kinds.
    UpdateConfig(RingConfigSpec, Option<MembershipPolicySpec>),
}

impl From<ChangeOp> for RequestedOp {
    fn from(op: ChangeOp) -> Self {
        RequestedOp::Op(op)
    }
}

impl RequestedOp {
    /// Whether this requested op is the one `recorded` in a version: the
    /// same op, or an `update_config` whose fields all have their values
    /// in the recorded `set_config` (which is what applying it recorded).
    pub fn matches_recorded(&self, recorded: &ChangeOp) -> bool {
        match (self, recorded) {
            (
                RequestedOp::UpdateConfig(patch, policy),
                ChangeOp::SetConfig { config, membership },
            ) => {
                patch.agrees_with(config)
                    && match (policy, membership) {
                        (None, None) => true,
                        (Some(p), Some(m)) => p.agrees_with(m),
                        _ => false,
                    }
            }
            (RequestedOp::UpdateConfig(..), _) => false,
            (RequestedOp::Op(op), recorded) => op == recorded,
        }
    }
}

/// Whether `requested` are the ops `recorded` in a version, op by op (see
/// [`RequestedOp::matches_recorded`]).
pub fn ops_match(requested: &[RequestedOp], recorded: &[ChangeOp]) -> bool {
    requested.len() == recorded.len()
        && requested
            .iter()
            .zip(recorded)
            .all(|(r, s)| r.matches_recorded(s))
}

/// Who made a change, by the token they presented.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Presented the admin token.
    Admin,
    /// No admin token is configured, so mutations are open.
    Anonymous,
}

/// What produced a version, as recorded in its snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangeRecord {
    /// The operations, in the order applied.
    pub ops: Vec<ChangeOp>,
    /// Free-text reason given by the operator.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reason: Option<String>,
    /// The acting token's role.
    pub role: Role,
    /// Share of the keyspace that changed owner against the previous version.
    pub moved_fraction: f64,
    /// The `Idempotency-Key` the change was sent with, so a retry of it is
    /// recognised instead of applied twice.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub idempotency_key: Option<IdempotencyKey>,
}

/// A client-chosen name for one intended change (the `Idempotency-Key`
/// header): 1–255 visible ASCII characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct IdempotencyKey(String);

/// Longest accepted idempotency key.
pub const MAX_IDEMPOTENCY_KEY_LEN: usize = 255;

impl IdempotencyKey {
    /// The key as sent.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for IdempotencyKey {
    type Error = super::RingError;

    fn try_from(key: String) -> Result<Self, Self::Error> {
        let visible = key.bytes().all(|b| b.is_ascii_graphic());
        if key.is_empty() || key.len() > MAX_IDEMPOTENCY_KEY_LEN || !visible {
            return Err(super::RingError::InvalidIdempotencyKey(
                key.chars().take(64).collect(),
            ));
        }
        Ok(Self(key))
    }
}

impl From<IdempotencyKey> for String {
    fn from(k: IdempotencyKey) -> String {
        k.0
    }
}

impl std::fmt::Display for IdempotencyKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::{Algorithm, HashFunction};

    fn patch(json: &str) -> RingConfigSpec {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn a_patch_keeps_every_field_it_does_not_name() {
        let ketama = RingConfig::new(Algorithm::Ketama);
        let merged = patch(r#"{"replication_factor": 2}"#)
            .apply_to(&ketama)
            .unwrap();
        assert_eq!(
            merged,
            RingConfig {
                replication_factor: 2,
                ..ketama.clone()
            }
        );
        assert_eq!(merged.hash, HashFunction::Md5);
        // Switching to ketama does not pick md5 silently: it is refused.
        let ring = RingConfig::new(Algorithm::Ring);
        assert!(patch(r#"{"algorithm": "ketama"}"#).apply_to(&ring).is_err());
        assert_eq!(
            patch(r#"{"zone_aware": true, "hash": "md5"}"#).missing_fields(),
            ["algorithm", "vnodes_per_weight", "replication_factor"]
        );
        assert_eq!(
            patch(r#"{"algorithm": "maglev", "hash": "xxh3"}"#).missing_fields(),
            [
                "vnodes_per_weight",
                "table_size",
                "replication_factor",
                "zone_aware"
            ]
        );
        assert!(!patch(r#"{"table_size": 7}"#).is_empty());
        assert!(!patch(r#"{"partitions": 256}"#).is_empty());
        assert!(patch("{}").is_empty());
        assert!(patch(r#"{"vnodes_per_weight": 0}"#).check_ranges().is_err());
        assert!(patch(r#"{"replication_factor": 64}"#)
            .check_ranges()
            .is_ok());
    }

    #[test]
    fn a_patch_matches_the_set_config_it_recorded() {
        let recorded = |c: RingConfig| ChangeOp::SetConfig {
            config: c,
            membership: None,
        };
        let two = RingConfig {
            replication_factor: 2,
            ..RingConfig::new(Algorithm::Ketama)
        };
        let requested = [RequestedOp::UpdateConfig(
            patch(r#"{"replication_factor": 2}"#),
            None,
        )];
        assert!(ops_match(&requested, &[recorded(two.clone())]));
        let three = RingConfig::new(Algorithm::Ketama);
        assert!(!ops_match(&requested, &[recorded(three)]));
        let remove = ChangeOp::Remove {
            id: NodeId::new("a").unwrap(),
        };
        assert!(!ops_match(&requested, std::slice::from_ref(&remove)));
        assert!(!ops_match(
            &requested,
            &[recorded(two.clone()), remove.clone()]
        ));
        assert!(ops_match(&[remove.clone().into()], &[remove]));
    }
}
