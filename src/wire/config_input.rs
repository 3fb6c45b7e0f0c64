//! Schema-only shapes of the two config ops of `POST …/changes`.
//!
//! The server parses both ops with [`crate::placement::RingConfigSpec`];
//! these types only tell the OpenAPI document what each op accepts, which
//! differs from the all-optional body of `PUT /v1/rings/{ring}`:
//! `set_config` needs every field, and `update_config` any non-empty
//! subset, none of them `null`.

use serde::Serialize;

use super::membership::MembershipPolicyInput;
use super::rings::{AlgorithmName, HashName};
#[cfg(feature = "server")]
use super::schema::{
    MaximumRingSizeSchema, MinimumRingSizeSchema, PartitionsSchema, ReplicationFactorSchema,
    TableSizeSchema, VnodesPerWeightSchema,
};

/// A complete configuration, as `set_config` takes it: every field, as
/// the `config` of `GET /v1/rings/{ring}` shows them.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "server", schema(example = json!({
    "algorithm": "ring", "hash": "xxh3", "vnodes_per_weight": 160,
    "replication_factor": 3, "zone_aware": false
})))]
#[serde(deny_unknown_fields)]
pub struct CompleteConfigInput {
    /// The algorithm.
    pub algorithm: AlgorithmName,
    /// The key hash; `ketama` takes only `md5`.
    pub hash: HashName,
    /// `ring`: points per unit of weight.
    #[cfg_attr(feature = "server", schema(value_type = VnodesPerWeightSchema))]
    pub vnodes_per_weight: u64,
    /// `maglev` and `envoy_maglev`: a prime table size, at least the
    /// active node count. Required when `algorithm` is one of them; for
    /// other algorithms optional and unused.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "server", schema(value_type = TableSizeSchema, required = false))]
    pub table_size: Option<u64>,
    /// Default preference-list length.
    #[cfg_attr(feature = "server", schema(value_type = ReplicationFactorSchema))]
    pub replication_factor: u64,
    /// Spread preference lists over zones first.
    pub zone_aware: bool,
    /// `table`: partitions, a power of two. Required when `algorithm` is
    /// `table`; for other algorithms optional and unused.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "server", schema(value_type = PartitionsSchema, required = false))]
    pub partitions: Option<u64>,
    /// `haproxy`: whether key hashes go through HAProxy's avalanche
    /// modifier (HAProxy's own default is true). Required when
    /// `algorithm` is `haproxy`; refused by every other algorithm.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "server", schema(value_type = bool, required = false))]
    pub avalanche: Option<bool>,
    /// `twemproxy` only: two characters around the hashed part of a key
    /// (nutcracker's `hash_tag`, e.g. `{}`); omitted, keys hash whole.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "server",
        schema(pattern = r#"^[!#-&(-\[\]-~]{2}$"#, required = false)
    )]
    pub hash_tag: Option<String>,
    /// `envoy_ring_hash`: the least number of ring entries. Required when
    /// `algorithm` is `envoy_ring_hash`; for other algorithms optional and
    /// unused.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "server", schema(value_type = MinimumRingSizeSchema, required = false))]
    pub minimum_ring_size: Option<u64>,
    /// `envoy_ring_hash`: the most ring entries. Required when `algorithm`
    /// is `envoy_ring_hash`; for other algorithms optional and unused.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "server", schema(value_type = MaximumRingSizeSchema, required = false))]
    pub maximum_ring_size: Option<u64>,
    /// The membership policy: omitted, the ring's stays as it is; given,
    /// it replaces it, with defaults for the fields it omits.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "server", schema(value_type = MembershipPolicyInput, required = false))]
    pub membership: Option<MembershipPolicyInput>,
}

/// The fields `update_config` changes: at least one, none `null`; the
/// others keep the values the ring has.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "server", schema(example = json!({"replication_factor": 2})))]
#[serde(deny_unknown_fields)]
pub struct ConfigPatchInput {
    /// The algorithm.
    #[cfg_attr(feature = "server", schema(value_type = AlgorithmName, required = false))]
    pub algorithm: Option<AlgorithmName>,
    /// The key hash; `ketama` takes only `md5`.
    #[cfg_attr(feature = "server", schema(value_type = HashName, required = false))]
    pub hash: Option<HashName>,
    /// `ring`: points per unit of weight.
    #[cfg_attr(feature = "server", schema(value_type = VnodesPerWeightSchema, required = false))]
    pub vnodes_per_weight: Option<u64>,
    /// `maglev` and `envoy_maglev`: a prime table size, at least the
    /// active node count.
    #[cfg_attr(feature = "server", schema(value_type = TableSizeSchema, required = false))]
    pub table_size: Option<u64>,
    /// Default preference-list length.
    #[cfg_attr(feature = "server", schema(value_type = ReplicationFactorSchema, required = false))]
    pub replication_factor: Option<u64>,
    /// Spread preference lists over zones first.
    #[cfg_attr(feature = "server", schema(value_type = bool, required = false))]
    pub zone_aware: Option<bool>,
    /// `table`: partitions, a power of two.
    #[cfg_attr(feature = "server", schema(value_type = PartitionsSchema, required = false))]
    pub partitions: Option<u64>,
    /// `haproxy`: whether key hashes go through HAProxy's avalanche
    /// modifier (other algorithms refuse it).
    #[cfg_attr(feature = "server", schema(value_type = bool, required = false))]
    pub avalanche: Option<bool>,
    /// `twemproxy` only: the hash tag (two characters, e.g. `{}`); `null`
    /// removes it, the one field that may be `null`.
    #[cfg_attr(
        feature = "server",
        schema(pattern = r#"^[!#-&(-\[\]-~]{2}$"#, required = false)
    )]
    pub hash_tag: Option<String>,
    /// `envoy_ring_hash`: the least number of ring entries.
    #[cfg_attr(feature = "server", schema(value_type = MinimumRingSizeSchema, required = false))]
    pub minimum_ring_size: Option<u64>,
    /// `envoy_ring_hash`: the most ring entries.
    #[cfg_attr(feature = "server", schema(value_type = MaximumRingSizeSchema, required = false))]
    pub maximum_ring_size: Option<u64>,
    /// Policy fields to change; the others keep the ring's values.
    #[cfg_attr(feature = "server", schema(value_type = MembershipPolicyInput, required = false))]
    pub membership: Option<MembershipPolicyInput>,
}

/// The body of `PUT /v1/rings/{ring}`: every field optional, unknown
/// fields refused.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "server", schema(example = json!({"algorithm": "ring", "replication_factor": 3})))]
#[serde(deny_unknown_fields)]
pub struct RingConfigInput {
    /// Defaults to `ring`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub algorithm: Option<AlgorithmName>,
    /// Defaults to `md5` for `ketama` (its only hash), `xxh3` otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash: Option<HashName>,
    /// `ring`: points per unit of weight, 1–10000; defaults to 160.
    #[cfg_attr(feature = "server", schema(value_type = Option<VnodesPerWeightSchema>))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vnodes_per_weight: Option<u64>,
    /// `maglev` and `envoy_maglev`: a prime table size, at least the
    /// active node count and at most 16777216 (5000011 for
    /// `envoy_maglev`); defaults to 65537.
    #[cfg_attr(feature = "server", schema(value_type = Option<TableSizeSchema>))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table_size: Option<u64>,
    /// Default preference-list length, 1–64; defaults to 3.
    #[cfg_attr(feature = "server", schema(value_type = Option<ReplicationFactorSchema>))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replication_factor: Option<u64>,
    /// Spread preference lists over zones first (every active node then
    /// needs a zone); defaults to false.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zone_aware: Option<bool>,
    /// `table`: partitions, a power of two from 256 to 1048576; defaults
    /// to 65536.
    #[cfg_attr(feature = "server", schema(value_type = Option<PartitionsSchema>))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partitions: Option<u64>,
    /// `haproxy`: whether key hashes go through HAProxy's avalanche
    /// modifier; defaults to true for `haproxy`, and other algorithms
    /// refuse it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub avalanche: Option<bool>,
    /// `twemproxy` only: two characters around the hashed part of a key
    /// (nutcracker's `hash_tag`, e.g. `{}`); defaults to none.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "server", schema(pattern = r#"^[!#-&(-\[\]-~]{2}$"#))]
    pub hash_tag: Option<String>,
    /// `envoy_ring_hash`: the least number of ring entries, at most
    /// `maximum_ring_size`; defaults to 1024.
    #[cfg_attr(feature = "server", schema(value_type = Option<MinimumRingSizeSchema>))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub minimum_ring_size: Option<u64>,
    /// `envoy_ring_hash`: the most ring entries; defaults to 4096.
    #[cfg_attr(feature = "server", schema(value_type = Option<MaximumRingSizeSchema>))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub maximum_ring_size: Option<u64>,
    /// The membership policy; omitted fields take their defaults.
    #[cfg_attr(feature = "server", schema(value_type = Option<MembershipPolicyInput>))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub membership: Option<MembershipPolicyInput>,
}
