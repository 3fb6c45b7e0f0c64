//! Changes: recorded ops and what a change did.

use serde::{Deserialize, Serialize};

use super::config_input::{CompleteConfigInput, ConfigPatchInput};
use super::movement::DiffView;
use super::node_input::UpsertNodeInput;
use super::nodes::NodeView;
use super::rings::{RingConfigView, RingSummary};
#[cfg(feature = "server")]
use super::schema::{ChangeOpsSchema, NodeIdSchema, ReasonSchema, VersionSchema};
use crate::ring::{ChangeOp, ChangeRecord, Role};

/// One operation of a recorded change.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum OpView {
    /// Registered or replaced a node.
    Upsert {
        /// The full record.
        node: NodeView,
    },
    /// Removed a node.
    Remove {
        /// The removed node.
        id: String,
    },
    /// Replaced the configuration.
    SetConfig {
        /// The new configuration.
        config: RingConfigView,
    },
}

impl From<&ChangeOp> for OpView {
    fn from(op: &ChangeOp) -> Self {
        match op {
            ChangeOp::Upsert { node } => Self::Upsert { node: node.into() },
            ChangeOp::Remove { id } => Self::Remove { id: id.to_string() },
            ChangeOp::SetConfig { config, membership } => Self::SetConfig {
                config: match membership {
                    Some(m) => RingConfigView::of(config, m),
                    None => config.into(),
                },
            },
        }
    }
}

/// The role of the token that made a change.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum RoleName {
    /// The admin token.
    Admin,
    /// No admin token is configured, so mutations are open.
    Anonymous,
}

impl RoleName {
    /// The name as sent on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Admin => "admin",
            Self::Anonymous => "anonymous",
        }
    }
}

impl From<Role> for RoleName {
    fn from(r: Role) -> Self {
        match r {
            Role::Admin => Self::Admin,
            Role::Anonymous => Self::Anonymous,
        }
    }
}

/// What produced a version.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct ChangeView {
    /// The operations, in the order applied.
    pub ops: Vec<OpView>,
    /// The operator's free-text reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The acting token's role.
    pub role: RoleName,
    /// Share of the keyspace that changed owner against the previous version.
    pub moved_fraction: f64,
    /// The `Idempotency-Key` the change was sent with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
}

impl From<&ChangeRecord> for ChangeView {
    fn from(c: &ChangeRecord) -> Self {
        Self {
            ops: c.ops.iter().map(OpView::from).collect(),
            reason: c.reason.clone(),
            role: c.role.into(),
            moved_fraction: c.moved_fraction,
            idempotency_key: c.idempotency_key.clone().map(String::from),
        }
    }
}

/// What a change did (or, for a dry run, would do).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct ChangeResult {
    /// The ring.
    pub ring: String,
    /// True when nothing was committed because the request was a dry run.
    pub dry_run: bool,
    /// False when the change alters nothing: no version was created.
    pub changed: bool,
    /// The version the change was computed against.
    pub base_version: u64,
    /// The new version; for a dry run the would-be version; for a no-op
    /// the current one.
    pub version: u64,
    /// Summary of `version`.
    pub summary: RingSummary,
    /// Movement from `base_version` to `version`; absent for a no-op, and
    /// for a replay whose base version has been pruned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<DiffView>,
    /// Present when the change alters the configuration: the config of
    /// `base_version` and the config of `version`, every field of both.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config_change: Option<ConfigChange>,
    /// Present and true when this answer repeats the commit of an earlier
    /// request with the same `Idempotency-Key`: nothing new was committed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[cfg_attr(feature = "server", schema(default = false))]
    pub replayed: bool,
}

/// A configuration before and after a change.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct ConfigChange {
    /// The config of `base_version`.
    pub from: RingConfigView,
    /// The config of `version`.
    pub to: RingConfigView,
}

/// One operation of a change.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum OpInput {
    /// `{"op":"upsert","node":{…}}`: register a node or replace its
    /// record; `node.id` is required.
    Upsert {
        /// The full record; omitted fields take their defaults.
        node: UpsertNodeInput,
    },
    /// `{"op":"remove","id":"…"}`: remove a node; it must exist.
    Remove {
        /// The node to remove.
        #[cfg_attr(feature = "server", schema(value_type = NodeIdSchema))]
        id: String,
    },
    /// `{"op":"set_config","config":{…}}`: replace the configuration.
    /// Every field is required (the `config` of `GET /v1/rings/{ring}`
    /// has them all); to change some fields only, use `update_config`.
    SetConfig {
        /// The complete new configuration.
        config: CompleteConfigInput,
    },
    /// `{"op":"update_config","config":{…}}`: change the given fields
    /// and keep every other one as the ring has it (a patch; at least one
    /// field). The version records the resulting complete configuration
    /// as a `set_config` op.
    UpdateConfig {
        /// The fields to change.
        config: ConfigPatchInput,
    },
}

/// The body of `POST …/changes`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "server", schema(example = json!({
    "ops": [{"op": "upsert", "node": {"id": "cache-d", "weight": 1}}],
    "expected_version": 4,
    "reason": "add cache-d",
    "dry_run": true
})))]
#[serde(deny_unknown_fields)]
pub struct ChangeInput {
    /// Applied in order as one new version; 1–10000 ops. Each op is an
    /// object with `"op"` set to `upsert`, `remove`, `set_config` or
    /// `update_config`.
    #[cfg_attr(feature = "server", schema(value_type = ChangeOpsSchema))]
    pub ops: Vec<OpInput>,
    /// Apply only if the ring is at this version (or send `If-Match`).
    #[cfg_attr(feature = "server", schema(value_type = Option<VersionSchema>))]
    pub expected_version: Option<u64>,
    /// Free-text reason recorded in the version, at most 1024 bytes,
    /// without control characters, line separators or bidirectional
    /// formatting characters.
    #[cfg_attr(feature = "server", schema(value_type = Option<ReasonSchema>))]
    pub reason: Option<String>,
    /// Compute the result and the movement but commit nothing. Not
    /// nullable: omit it for false.
    #[cfg_attr(feature = "server", schema(value_type = bool, required = false, default = false))]
    pub dry_run: Option<bool>,
    /// Apply the change even while the ring is in a rollout, which then
    /// pauses (the ring moved under it). Not nullable: omit it for false.
    #[cfg_attr(feature = "server", schema(value_type = bool, required = false, default = false))]
    pub force: Option<bool>,
}
