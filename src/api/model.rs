//! Wire types shared by several resources.
//!
//! Responses are built from these rather than by serializing domain types
//! directly, so the OpenAPI schemas (derived from these same types) always
//! describe the bytes actually sent. 64-bit hash positions and 128-bit
//! units are decimal strings: JSON numbers lose precision past 2^53 in
//! many clients.

use std::collections::BTreeMap;

use serde::Serialize;
use time::OffsetDateTime;
use utoipa::ToSchema;

use crate::placement::{Algorithm, HashFunction, NodeState, RingConfig};
use crate::ring::{BucketOrder, ChangeOp, ChangeRecord, NodeRecord, Role, Snapshot};

/// A placement algorithm.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum AlgorithmName {
    /// Virtual-node ring with 64-bit positions (the default).
    Ring,
    /// libketama-compatible ring (md5, 32-bit points).
    Ketama,
    /// Maglev lookup table.
    Maglev,
    /// Jump consistent hash over a persisted bucket order.
    Jump,
    /// Weighted rendezvous (highest random weight).
    Rendezvous,
}

impl From<Algorithm> for AlgorithmName {
    fn from(a: Algorithm) -> Self {
        match a {
            Algorithm::Ring => Self::Ring,
            Algorithm::Ketama => Self::Ketama,
            Algorithm::Maglev => Self::Maglev,
            Algorithm::Jump => Self::Jump,
            Algorithm::Rendezvous => Self::Rendezvous,
        }
    }
}

/// A hash function for keys and node labels.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum HashName {
    /// XXH3-64 (the default except for ketama).
    Xxh3,
    /// MD5 (ketama's only hash).
    Md5,
    /// SHA-256.
    Sha256,
    /// MurmurHash3 x64-128, first half.
    Murmur3,
}

impl From<HashFunction> for HashName {
    fn from(h: HashFunction) -> Self {
        match h {
            HashFunction::Xxh3 => Self::Xxh3,
            HashFunction::Md5 => Self::Md5,
            HashFunction::Sha256 => Self::Sha256,
            HashFunction::Murmur3 => Self::Murmur3,
        }
    }
}

/// A ring's configuration: everything that decides placement apart from
/// the nodes.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RingConfigView {
    /// The placement algorithm.
    pub algorithm: AlgorithmName,
    /// Hash for keys and node labels.
    pub hash: HashName,
    /// `ring`: points per unit of weight (1–10000).
    pub vnodes_per_weight: u32,
    /// `maglev`: lookup table size, a prime up to 16777216.
    pub table_size: u64,
    /// Default length of preference lists (1–64).
    pub replication_factor: u32,
    /// Whether preference lists spread over zones first.
    pub zone_aware: bool,
}

impl From<&RingConfig> for RingConfigView {
    fn from(c: &RingConfig) -> Self {
        Self {
            algorithm: c.algorithm.into(),
            hash: c.hash.into(),
            vnodes_per_weight: c.vnodes_per_weight,
            table_size: c.table_size,
            replication_factor: c.replication_factor,
            zone_aware: c.zone_aware,
        }
    }
}

/// Whether a node owns keys.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum NodeStateName {
    /// Owns keys.
    Active,
    /// Keeps its record but owns no keys.
    Draining,
}

impl From<NodeState> for NodeStateName {
    fn from(s: NodeState) -> Self {
        match s {
            NodeState::Active => Self::Active,
            NodeState::Draining => Self::Draining,
        }
    }
}

/// A node as registered.
#[derive(Debug, Clone, Serialize, ToSchema)]
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
    /// `active` or `draining`.
    pub state: NodeStateName,
    /// Hashed instead of the id, if set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash_key: Option<String>,
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
        }
    }
}

/// One operation of a recorded change.
#[derive(Debug, Clone, Serialize, ToSchema)]
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
            ChangeOp::SetConfig { config } => Self::SetConfig {
                config: config.into(),
            },
        }
    }
}

/// The role of the token that made a change.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RoleName {
    /// The admin token.
    Admin,
    /// No admin token is configured, so mutations are open.
    Anonymous,
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
#[derive(Debug, Clone, Serialize, ToSchema)]
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

/// A ring at its latest (or a would-be) version, without its node list.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RingSummary {
    /// The ring's name.
    pub ring: String,
    /// The version described.
    pub version: u64,
    /// When that version was committed (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// Algorithm, hash and parameters.
    pub config: RingConfigView,
    /// Registered nodes, active or draining.
    pub nodes: usize,
    /// Nodes that own keys.
    pub active_nodes: usize,
    /// SHA-256 of the placement's canonical encoding (64 hex digits).
    pub fingerprint: String,
}

impl From<&Snapshot> for RingSummary {
    fn from(s: &Snapshot) -> Self {
        Self {
            ring: s.ring.to_string(),
            version: s.version,
            created_at: s.created_at,
            config: (&s.config).into(),
            nodes: s.nodes.len(),
            active_nodes: s
                .nodes
                .iter()
                .filter(|n| n.state == NodeState::Active)
                .count(),
            fingerprint: s.fingerprint.to_string(),
        }
    }
}

/// A complete, immutable ring version.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SnapshotView {
    /// The ring's name.
    pub ring: String,
    /// Starts at 1 when the ring is created; +1 per accepted change.
    pub version: u64,
    /// When the version was committed (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// Algorithm, hash and parameters.
    pub config: RingConfigView,
    /// Every node, active or draining, sorted by id.
    pub nodes: Vec<NodeView>,
    /// SHA-256 of the placement's canonical encoding (64 hex digits).
    pub fingerprint: String,
    /// `jump` only: the persisted bucket order (`null` marks a hole).
    // Held as the snapshot's shared runs and written out one id per bucket
    // while the response is serialized, never collected per bucket.
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "per_bucket")]
    #[schema(value_type = Option<Vec<Option<String>>>)]
    pub buckets: Option<BucketOrder>,
    /// What produced this version.
    pub change: ChangeView,
}

fn per_bucket<S: serde::Serializer>(order: &Option<BucketOrder>, s: S) -> Result<S::Ok, S::Error> {
    order.as_ref().map(BucketOrder::per_bucket).serialize(s)
}

impl From<&Snapshot> for SnapshotView {
    fn from(s: &Snapshot) -> Self {
        Self {
            ring: s.ring.to_string(),
            version: s.version,
            created_at: s.created_at,
            config: (&s.config).into(),
            nodes: s.nodes.iter().map(NodeView::from).collect(),
            fingerprint: s.fingerprint.to_string(),
            buckets: s.bucket_runs.clone(),
            change: (&s.change).into(),
        }
    }
}
