//! Rings: configuration and summaries.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::membership::{MembershipPolicyView, MembershipStatusView};
#[cfg(feature = "server")]
use super::schema::{PartitionsSchema, VersionSchema};
use std::collections::BTreeMap;

use crate::placement::{Algorithm, HashFunction, NodeState, RingConfig};
use crate::ring::{MembershipPolicy, NodeHealth, Snapshot};

/// A placement algorithm.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
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
    /// A stored partition table with exact quotas.
    Table,
    /// nginx's `hash $key consistent`, bit for bit (crc32; nodes placed by
    /// address).
    Nginx,
    /// HAProxy 2.6's `hash-type consistent`, by stable server ids.
    Haproxy,
    /// twemproxy's (nutcracker's) `distribution: ketama`, by server name.
    Twemproxy,
    /// Envoy's and gRPC's `ring_hash`, endpoints placed by hash key.
    #[serde(rename = "envoy_ring_hash")]
    EnvoyRingHash,
    /// Envoy's `MAGLEV` on the EDS weights ringd sends, endpoints placed
    /// by hash key.
    #[serde(rename = "envoy_maglev")]
    EnvoyMaglev,
}

impl AlgorithmName {
    /// The name as sent on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ring => "ring",
            Self::Ketama => "ketama",
            Self::Maglev => "maglev",
            Self::Jump => "jump",
            Self::Rendezvous => "rendezvous",
            Self::Table => "table",
            Self::Nginx => "nginx",
            Self::Haproxy => "haproxy",
            Self::Twemproxy => "twemproxy",
            Self::EnvoyRingHash => "envoy_ring_hash",
            Self::EnvoyMaglev => "envoy_maglev",
        }
    }
}

impl From<Algorithm> for AlgorithmName {
    fn from(a: Algorithm) -> Self {
        match a {
            Algorithm::Ring => Self::Ring,
            Algorithm::Ketama => Self::Ketama,
            Algorithm::Maglev => Self::Maglev,
            Algorithm::Jump => Self::Jump,
            Algorithm::Rendezvous => Self::Rendezvous,
            Algorithm::Table => Self::Table,
            Algorithm::Nginx => Self::Nginx,
            Algorithm::Haproxy => Self::Haproxy,
            Algorithm::Twemproxy => Self::Twemproxy,
            Algorithm::EnvoyRingHash => Self::EnvoyRingHash,
            Algorithm::EnvoyMaglev => Self::EnvoyMaglev,
        }
    }
}

/// A hash function for keys and node labels.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
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
    /// twemproxy's fnv1a_64 (its default).
    #[serde(rename = "fnv1a_64")]
    Fnv1a64,
    /// twemproxy's fnv1_64.
    #[serde(rename = "fnv1_64")]
    Fnv164,
    /// twemproxy's fnv1a_32.
    #[serde(rename = "fnv1a_32")]
    Fnv1a32,
    /// twemproxy's fnv1_32.
    #[serde(rename = "fnv1_32")]
    Fnv132,
    /// twemproxy's crc32a (CRC-32).
    #[serde(rename = "crc32a")]
    Crc32a,
    /// twemproxy's one_at_a_time.
    #[serde(rename = "one_at_a_time")]
    OneAtATime,
    /// twemproxy's murmur (MurmurHash2).
    #[serde(rename = "murmur")]
    Murmur,
    /// twemproxy's jenkins (lookup3).
    #[serde(rename = "jenkins")]
    Jenkins,
    /// twemproxy's hsieh (SuperFastHash).
    #[serde(rename = "hsieh")]
    Hsieh,
    /// The standard CRC-32 (nginx's only hash; also haproxy's).
    Crc32,
    /// sdbm (haproxy's default).
    Sdbm,
    /// djb2 (haproxy).
    Djb2,
    /// wt6 (haproxy).
    Wt6,
    /// XXH64, seed 0 (`envoy_ring_hash`'s only hash).
    Xxh64,
}

impl HashName {
    /// The name as sent on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Xxh3 => "xxh3",
            Self::Md5 => "md5",
            Self::Sha256 => "sha256",
            Self::Murmur3 => "murmur3",
            Self::Fnv1a64 => "fnv1a_64",
            Self::Fnv164 => "fnv1_64",
            Self::Fnv1a32 => "fnv1a_32",
            Self::Fnv132 => "fnv1_32",
            Self::Crc32a => "crc32a",
            Self::OneAtATime => "one_at_a_time",
            Self::Murmur => "murmur",
            Self::Jenkins => "jenkins",
            Self::Hsieh => "hsieh",
            Self::Crc32 => "crc32",
            Self::Sdbm => "sdbm",
            Self::Djb2 => "djb2",
            Self::Wt6 => "wt6",
            Self::Xxh64 => "xxh64",
        }
    }
}

impl From<HashFunction> for HashName {
    fn from(h: HashFunction) -> Self {
        match h {
            HashFunction::Xxh3 => Self::Xxh3,
            HashFunction::Md5 => Self::Md5,
            HashFunction::Sha256 => Self::Sha256,
            HashFunction::Murmur3 => Self::Murmur3,
            HashFunction::Fnv1a64 => Self::Fnv1a64,
            HashFunction::Fnv164 => Self::Fnv164,
            HashFunction::Fnv1a32 => Self::Fnv1a32,
            HashFunction::Fnv132 => Self::Fnv132,
            HashFunction::Crc32a => Self::Crc32a,
            HashFunction::OneAtATime => Self::OneAtATime,
            HashFunction::Murmur => Self::Murmur,
            HashFunction::Jenkins => Self::Jenkins,
            HashFunction::Hsieh => Self::Hsieh,
            HashFunction::Crc32 => Self::Crc32,
            HashFunction::Sdbm => Self::Sdbm,
            HashFunction::Djb2 => Self::Djb2,
            HashFunction::Wt6 => Self::Wt6,
            HashFunction::Xxh64 => Self::Xxh64,
        }
    }
}

/// A ring's configuration: everything that decides placement apart from
/// the nodes.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct RingConfigView {
    /// The placement algorithm.
    pub algorithm: AlgorithmName,
    /// Hash for keys and node labels.
    pub hash: HashName,
    /// `ring`: points per unit of weight (1–10000).
    pub vnodes_per_weight: u32,
    /// `maglev`: lookup table size, a prime up to 16777216. Shown for
    /// `maglev` rings (and for others only if set to other than 65537).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_size: Option<u64>,
    /// Default length of preference lists (1–64).
    pub replication_factor: u32,
    /// Whether preference lists spread over zones first (`table`: whether
    /// a partition's replicas sit in distinct zones).
    pub zone_aware: bool,
    /// `table`: partitions, a power of two from 256 to 1048576. Shown for
    /// `table` rings (and for others only if set to other than 65536).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "server", schema(value_type = Option<PartitionsSchema>))]
    pub partitions: Option<u32>,
    /// `haproxy`: whether key hashes go through HAProxy's avalanche
    /// modifier. Shown for `haproxy` rings only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub avalanche: Option<bool>,
    /// `twemproxy`: the two characters around the hashed part of a key
    /// (nutcracker's `hash_tag`). Shown only when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash_tag: Option<String>,
    /// `envoy_ring_hash`: Envoy's `minimum_ring_size` (1–8388608). Shown
    /// for `envoy_ring_hash` rings (and for others only if set to other
    /// than 1024).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum_ring_size: Option<u64>,
    /// `envoy_ring_hash`: Envoy's `maximum_ring_size` (1–8388608). Shown
    /// for `envoy_ring_hash` rings (and for others only if set to other
    /// than 4096).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximum_ring_size: Option<u64>,
    /// The membership policy (not placement: it never enters the
    /// fingerprint). Always present in a ring's or a snapshot's config; in
    /// a recorded `set_config` op, present only if the op set it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub membership: Option<MembershipPolicyView>,
}

impl From<&RingConfig> for RingConfigView {
    /// The placement config alone, without a policy.
    fn from(c: &RingConfig) -> Self {
        Self {
            algorithm: c.algorithm.into(),
            hash: c.hash.into(),
            vnodes_per_weight: c.vnodes_per_weight,
            table_size: c.table_size_written().then_some(c.table_size),
            replication_factor: c.replication_factor,
            zone_aware: c.zone_aware,
            partitions: c.partitions_written().then_some(c.partitions),
            avalanche: (c.algorithm == Algorithm::Haproxy).then_some(c.avalanche),
            hash_tag: c.hash_tag.map(|t| t.to_string()),
            minimum_ring_size: c.ring_sizes_written().then_some(c.minimum_ring_size),
            maximum_ring_size: c.ring_sizes_written().then_some(c.maximum_ring_size),
            membership: None,
        }
    }
}

impl RingConfigView {
    /// The whole config: placement and membership policy.
    pub fn of(config: &RingConfig, membership: &MembershipPolicy) -> Self {
        Self {
            membership: Some(membership.into()),
            ..config.into()
        }
    }
}
/// A ring at its latest (or a would-be) version, without its node list.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct RingSummary {
    /// The ring's name.
    pub ring: String,
    /// The version described.
    pub version: u64,
    /// When that version was committed (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[cfg_attr(feature = "server", schema(value_type = String, format = DateTime))]
    pub created_at: OffsetDateTime,
    /// Algorithm, hash and parameters.
    pub config: RingConfigView,
    /// Registered nodes, active or draining.
    pub nodes: usize,
    /// Nodes that own keys.
    pub active_nodes: usize,
    /// SHA-256 of the placement's canonical encoding (64 hex digits).
    pub fingerprint: String,
    /// The automatic transitions: the partition guard and what it holds
    /// back. Present in `GET /v1/rings` and `GET /v1/rings/{ring}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub membership: Option<MembershipStatusView>,
    /// How many of the nodes have each health now. In the ring's own
    /// views (`GET /v1/rings`, `GET` and `PUT /v1/rings/{ring}`); absent
    /// from a change's summary, which describes a version, and health is
    /// not part of a version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<HealthCounts>,
}

/// How many of a ring's nodes have each health.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct HealthCounts {
    /// Leased nodes whose lease is live.
    pub healthy: u64,
    /// Leased nodes whose lease expired.
    pub unhealthy: u64,
    /// Leased nodes that released their lease.
    pub left: u64,
    /// Nodes registered by an operator, without a lease.
    pub unmanaged: u64,
}

impl From<&BTreeMap<NodeHealth, u64>> for HealthCounts {
    fn from(counts: &BTreeMap<NodeHealth, u64>) -> Self {
        let of = |h| counts.get(&h).copied().unwrap_or(0);
        Self {
            healthy: of(NodeHealth::Healthy),
            unhealthy: of(NodeHealth::Unhealthy),
            left: of(NodeHealth::Left),
            unmanaged: of(NodeHealth::Unmanaged),
        }
    }
}

impl From<&Snapshot> for RingSummary {
    fn from(s: &Snapshot) -> Self {
        Self {
            ring: s.ring.to_string(),
            version: s.version,
            created_at: s.created_at,
            config: RingConfigView::of(&s.config, &s.membership),
            nodes: s.nodes.len(),
            active_nodes: s
                .nodes
                .iter()
                .filter(|n| n.state == NodeState::Active)
                .count(),
            fingerprint: s.fingerprint.to_string(),
            health: None,
            membership: None,
        }
    }
}

/// Every ring.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct RingList {
    /// Latest version of each ring, by name.
    pub rings: Vec<RingSummary>,
}

/// Conditions a mutation may carry in its query string.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::IntoParams))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "server", into_params(parameter_in = Query))]
pub struct PreconditionQuery {
    /// Apply only if the ring is at this version (same as `If-Match: "<version>"`).
    #[cfg_attr(feature = "server", param(value_type = Option<VersionSchema>))]
    pub expected_version: Option<u64>,
}
