//! Nodes as registered.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

#[cfg(feature = "server")]
use super::schema::{ReasonSchema, VersionSchema};
use crate::placement::NodeState;
use crate::ring::{NodeHealth, NodeRecord};

/// Whether a node owns keys.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum NodeStateName {
    /// Owns keys.
    Active,
    /// Keeps its record but owns no keys.
    Draining,
    /// Registered but owns nothing until activated.
    Joining,
}

impl NodeStateName {
    /// The name as sent on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::Draining => "draining",
            Self::Joining => "joining",
        }
    }
}

impl From<NodeState> for NodeStateName {
    fn from(s: NodeState) -> Self {
        match s {
            NodeState::Active => Self::Active,
            NodeState::Draining => Self::Draining,
            NodeState::Joining => Self::Joining,
        }
    }
}

/// A node's health, derived from its lease; never part of a version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum NodeHealthName {
    /// Its lease is live.
    Healthy,
    /// Its lease's deadline passed without a renewal.
    Unhealthy,
    /// It released its lease.
    Left,
    /// Registered by an operator, without a lease.
    Unmanaged,
}

impl NodeHealthName {
    /// The name as sent on the wire.
    pub fn as_str(self) -> &'static str {
        NodeHealth::from(self).as_str()
    }
}

impl From<NodeHealthName> for NodeHealth {
    fn from(h: NodeHealthName) -> Self {
        match h {
            NodeHealthName::Healthy => Self::Healthy,
            NodeHealthName::Unhealthy => Self::Unhealthy,
            NodeHealthName::Left => Self::Left,
            NodeHealthName::Unmanaged => Self::Unmanaged,
        }
    }
}

impl From<NodeHealth> for NodeHealthName {
    fn from(h: NodeHealth) -> Self {
        match h {
            NodeHealth::Healthy => Self::Healthy,
            NodeHealth::Unhealthy => Self::Unhealthy,
            NodeHealth::Left => Self::Left,
            NodeHealth::Unmanaged => Self::Unmanaged,
        }
    }
}

/// A node as registered.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct NodeView {
    /// Identity within the ring: 1–128 bytes of `[A-Za-z0-9._:-]`,
    /// starting with a letter or digit.
    pub id: String,
    /// Where clients reach the node; not interpreted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// Relative capacity, 1–1000000.
    pub weight: u32,
    /// Failure domain.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
    /// Free-form metadata, not used by placement.
    pub labels: BTreeMap<String, String>,
    /// `active`, `draining` or `joining`; only active nodes place keys.
    pub state: NodeStateName,
    /// Hashed instead of the id, if set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash_key: Option<String>,
    /// Parts of 65,536 of its weight the node takes; omitted when full
    /// (65,536). Below full only while a rollout brings the node in or out.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    #[cfg_attr(feature = "server", schema(value_type = Option<super::schema::RampSchema>))]
    pub ramp: Option<u32>,
    /// Whether the node is known to be alive: `healthy`, `unhealthy`,
    /// `left` or `unmanaged` (no lease). Sent in the node list only, never
    /// in snapshots (health is not part of a version) nor in a single
    /// node's read (which is fit to be sent back as a `PUT` body).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub health: Option<NodeHealthName>,
    /// The node's last registration or renewal, for leased nodes.
    #[serde(
        skip_serializing_if = "Option::is_none",
        default,
        with = "time::serde::rfc3339::option"
    )]
    #[cfg_attr(feature = "server", schema(value_type = Option<String>, format = DateTime))]
    pub last_heartbeat: Option<time::OffsetDateTime>,
    /// When the node's lease expires unless renewed (for a released
    /// lease, when it was released), for leased nodes; node list only.
    #[serde(
        skip_serializing_if = "Option::is_none",
        default,
        with = "time::serde::rfc3339::option"
    )]
    #[cfg_attr(feature = "server", schema(value_type = Option<String>, format = DateTime))]
    pub lease_deadline: Option<time::OffsetDateTime>,
}

impl From<&NodeRecord> for NodeView {
    fn from(n: &NodeRecord) -> Self {
        Self {
            id: n.id.to_string(),
            address: n.address.clone(),
            weight: n.weight.get(),
            zone: n.zone.as_ref().map(|z| z.as_str().to_owned()),
            labels: n.labels.clone(),
            state: n.state.into(),
            hash_key: n.hash_key.as_ref().map(|k| k.as_str().to_owned()),
            ramp: (!n.ramp.is_full()).then(|| n.ramp.get()),
            health: None,
            last_heartbeat: None,
            lease_deadline: None,
        }
    }
}

/// A ring's nodes at its latest version.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct NodeList {
    /// The ring.
    pub ring: String,
    /// The version listed.
    pub version: u64,
    /// Every node, active or draining, sorted by id.
    pub nodes: Vec<NodeView>,
}

/// Conditions and a reason a node mutation may carry in its query string.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::IntoParams))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "server", into_params(parameter_in = Query))]
pub struct NodeChangeQuery {
    /// Apply only if the ring is at this version (same as `If-Match: "<version>"`).
    #[cfg_attr(feature = "server", param(value_type = Option<VersionSchema>))]
    pub expected_version: Option<u64>,
    /// Free-text reason recorded in the version, at most 1024 bytes,
    /// without control characters, line separators or bidirectional
    /// formatting characters.
    #[cfg_attr(feature = "server", param(value_type = Option<ReasonSchema>))]
    pub reason: Option<String>,
}
