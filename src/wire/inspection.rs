//! Inspection: lookups, ownership and diffs.

use serde::{Deserialize, Serialize};

use super::movement::DiffView;

/// Where one key lives.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct KeyPlacement {
    /// The key, when it was sent as text (`keys`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The key in standard base64, when it was sent so (`keys_b64`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_b64: Option<String>,
    /// The key's position in the algorithm's hash space, as a decimal string.
    pub hash: String,
    /// The owning node; `null` when no node is active.
    pub owner: Option<String>,
    /// Up to `replicas` distinct nodes, owner first.
    pub replicas: Vec<String>,
}

/// The answer to `GET …/lookup`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct LookupResult {
    /// The version looked up in.
    pub version: u64,
    /// The key, when it was sent as text (`key`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The key in standard base64, when it was sent so (`key_b64`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_b64: Option<String>,
    /// The key's position in the algorithm's hash space, as a decimal string.
    pub hash: String,
    /// The owning node; `null` when no node is active.
    pub owner: Option<String>,
    /// Up to `replicas` distinct nodes, owner first.
    pub replicas: Vec<String>,
}

/// The answer to `POST …/lookup`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct LookupBatchResult {
    /// The version looked up in.
    pub version: u64,
    /// Replicas listed per key.
    pub replicas: u32,
    /// One entry per key, in the order the keys were given.
    pub results: Vec<KeyPlacement>,
}

/// What ownership units count.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum OwnershipBasisName {
    /// Arc lengths on the hash circle (`ring`: 2^64 positions, `ketama`: 2^32).
    Arcs,
    /// Maglev table entries.
    TableEntries,
    /// Live jump buckets.
    Buckets,
    /// Weights (rendezvous).
    Weights,
}

impl OwnershipBasisName {
    /// The name as sent on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Arcs => "arcs",
            Self::TableEntries => "table_entries",
            Self::Buckets => "buckets",
            Self::Weights => "weights",
        }
    }
}

/// One node's share of the keyspace.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct NodeShare {
    /// The node.
    pub id: String,
    /// Units owned, as a decimal string (it can exceed 2^64).
    pub units: String,
    /// Share of the keyspace owned.
    pub share: f64,
    /// The node's weight over the total weight.
    pub expected_share: f64,
    /// `share / expected_share`; 1.0 is perfect balance.
    pub ratio: f64,
}

/// Exact ownership of a version.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct OwnershipView {
    /// The ring.
    pub ring: String,
    /// The version described.
    pub version: u64,
    /// What the units count.
    pub basis: OwnershipBasisName,
    /// Size of the keyspace in units, as a decimal string.
    pub total_units: String,
    /// Per active node, in id order.
    pub nodes: Vec<NodeShare>,
    /// The largest `ratio`: the most loaded node against its fair share
    /// (with equal weights, max share over mean share); 0 with no nodes.
    pub max_over_mean: f64,
}

/// The movement between two versions.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct DiffResult {
    /// The ring.
    pub ring: String,
    /// The version compared from.
    pub from: u64,
    /// The version compared to.
    pub to: u64,
    /// What moves from `from` to `to`.
    pub diff: DiffView,
}
