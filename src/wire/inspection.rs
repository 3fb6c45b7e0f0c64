//! Inspection: lookups, ownership and diffs.

use serde::{Deserialize, Serialize};

use super::movement::DiffView;
#[cfg(feature = "server")]
use super::schema::{KeyB64Schema, ReplicasSchema, VersionSchema};

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
    /// Partitions a node is primary for (`table`).
    Partitions,
}

impl OwnershipBasisName {
    /// The name as sent on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Arcs => "arcs",
            Self::TableEntries => "table_entries",
            Self::Buckets => "buckets",
            Self::Weights => "weights",
            Self::Partitions => "partitions",
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
    /// `table` only: the partition replicas the node holds, primary or
    /// not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<u64>,
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

/// Query of `GET …/lookup`: the key as `key` or as `key_b64`, exactly one.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::IntoParams))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "server", into_params(parameter_in = Query))]
pub struct LookupQuery {
    /// The key as text; its UTF-8 bytes are hashed. Percent-encoded bytes
    /// that do not decode to UTF-8 are refused: send such a key as
    /// `key_b64`.
    pub key: Option<String>,
    /// The key's bytes in standard base64 (RFC 4648 §4, `+` and `/`,
    /// padded with `=`; write `+` as `%2B` in the query string). Instead
    /// of `key`, for keys that are not UTF-8 text.
    #[cfg_attr(feature = "server", param(value_type = Option<KeyB64Schema>))]
    pub key_b64: Option<String>,
    /// How many distinct nodes to list, 1–64; defaults to the ring's
    /// `replication_factor`.
    #[cfg_attr(feature = "server", param(value_type = Option<ReplicasSchema>))]
    pub replicas: Option<u32>,
    /// Look up in this retained version; defaults to the latest.
    #[cfg_attr(feature = "server", param(value_type = Option<VersionSchema>))]
    pub version: Option<u64>,
}

/// Query of `GET …/ownership`.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::IntoParams))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "server", into_params(parameter_in = Query))]
pub struct VersionQuery {
    /// A retained version; defaults to the latest.
    #[cfg_attr(feature = "server", param(value_type = Option<VersionSchema>))]
    pub version: Option<u64>,
}

/// Query of `GET …/diff`.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::IntoParams))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "server", into_params(parameter_in = Query))]
pub struct DiffQuery {
    /// The older version.
    #[cfg_attr(feature = "server", param(value_type = VersionSchema))]
    pub from: u64,
    /// The newer version; defaults to the latest.
    #[cfg_attr(feature = "server", param(value_type = Option<VersionSchema>))]
    pub to: Option<u64>,
}
