//! Schema-only shapes of the two config ops of `POST …/changes`.
//!
//! The server parses both ops with [`crate::placement::RingConfigSpec`];
//! these types only tell the OpenAPI document what each op accepts, which
//! differs from the all-optional body of `PUT /v1/rings/{ring}`:
//! `set_config` needs every field, and `update_config` any non-empty
//! subset, none of them `null`.

use utoipa::ToSchema;

use super::schemas::{ReplicationFactorSchema, TableSizeSchema, VnodesPerWeightSchema};
use crate::wire::{AlgorithmName, HashName};

/// A complete configuration, as `set_config` takes it: every field, as
/// the `config` of `GET /v1/rings/{ring}` shows them.
#[derive(Debug, Clone, ToSchema)]
#[schema(example = json!({
    "algorithm": "ring", "hash": "xxh3", "vnodes_per_weight": 160,
    "table_size": 65537, "replication_factor": 3, "zone_aware": false
}))]
#[serde(deny_unknown_fields)]
pub struct CompleteConfigInput {
    /// The algorithm.
    pub algorithm: AlgorithmName,
    /// The key hash; `ketama` takes only `md5`.
    pub hash: HashName,
    /// `ring`: points per unit of weight.
    #[schema(value_type = VnodesPerWeightSchema)]
    pub vnodes_per_weight: u64,
    /// `maglev`: a prime table size, at least the active node count.
    #[schema(value_type = TableSizeSchema)]
    pub table_size: u64,
    /// Default preference-list length.
    #[schema(value_type = ReplicationFactorSchema)]
    pub replication_factor: u64,
    /// Spread preference lists over zones first.
    pub zone_aware: bool,
}

/// The fields `update_config` changes: at least one, none `null`; the
/// others keep the values the ring has.
#[derive(Debug, Clone, ToSchema)]
#[schema(example = json!({"replication_factor": 2}))]
#[serde(deny_unknown_fields)]
pub struct ConfigPatchInput {
    /// The algorithm.
    #[schema(value_type = AlgorithmName, required = false)]
    pub algorithm: Option<AlgorithmName>,
    /// The key hash; `ketama` takes only `md5`.
    #[schema(value_type = HashName, required = false)]
    pub hash: Option<HashName>,
    /// `ring`: points per unit of weight.
    #[schema(value_type = VnodesPerWeightSchema, required = false)]
    pub vnodes_per_weight: Option<u64>,
    /// `maglev`: a prime table size, at least the active node count.
    #[schema(value_type = TableSizeSchema, required = false)]
    pub table_size: Option<u64>,
    /// Default preference-list length.
    #[schema(value_type = ReplicationFactorSchema, required = false)]
    pub replication_factor: Option<u64>,
    /// Spread preference lists over zones first.
    #[schema(value_type = bool, required = false)]
    pub zone_aware: Option<bool>,
}
