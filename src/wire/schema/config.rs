//! The named schemas of a ring's config (the placement's sizes and
//! defaults) and of its membership policy's limits; the policy's delays
//! are durations, in `durations.rs`.

use utoipa::openapi::schema::{ObjectBuilder, Type};

use super::{integer, named_schema};
use crate::placement::config::{
    DEFAULT_MAXIMUM_RING_SIZE, DEFAULT_MINIMUM_RING_SIZE, DEFAULT_PARTITIONS,
    DEFAULT_REPLICATION_FACTOR, DEFAULT_TABLE_SIZE, DEFAULT_VNODES_PER_WEIGHT,
    MAX_ENVOY_TABLE_SIZE, MAX_PARTITIONS, MAX_REPLICATION_FACTOR, MAX_RING_SIZE, MAX_TABLE_SIZE,
    MAX_VNODES_PER_WEIGHT, MIN_PARTITIONS,
};
use crate::ring::membership_policy::MAX_AUTO_CHANGES_PER_MINUTE;

named_schema!(
    /// `ring`'s points per unit of weight.
    VnodesPerWeightSchema = "VnodesPerWeight",
    integer(
        1,
        MAX_VNODES_PER_WEIGHT.into(),
        format!("`ring`: points per unit of weight, 1–{MAX_VNODES_PER_WEIGHT}; defaults to {DEFAULT_VNODES_PER_WEIGHT}.")
    )
);

named_schema!(
    /// Maglev's table size.
    TableSizeSchema = "TableSize",
    integer(
        2,
        MAX_TABLE_SIZE,
        format!("`maglev` and `envoy_maglev`: the lookup table size, a prime of at least the active node count and at most {MAX_TABLE_SIZE} ({MAX_ENVOY_TABLE_SIZE}, Envoy's bound, for `envoy_maglev`; checked only for those two); defaults to {DEFAULT_TABLE_SIZE}.")
    )
);

named_schema!(
    /// `envoy_ring_hash`'s least number of ring entries.
    MinimumRingSizeSchema = "MinimumRingSize",
    integer(
        1,
        MAX_RING_SIZE,
        format!("`envoy_ring_hash`: Envoy's and gRPC's `minimum_ring_size`, 1–{MAX_RING_SIZE} and at most `maximum_ring_size`; defaults to {DEFAULT_MINIMUM_RING_SIZE}.")
    )
);

named_schema!(
    /// `envoy_ring_hash`'s largest number of ring entries.
    MaximumRingSizeSchema = "MaximumRingSize",
    integer(
        1,
        MAX_RING_SIZE,
        format!("`envoy_ring_hash`: Envoy's and gRPC's `maximum_ring_size`, 1–{MAX_RING_SIZE}; defaults to {DEFAULT_MAXIMUM_RING_SIZE}, gRPC's own cap (`GRPC_RING_HASH_CAP`), above which gRPC clients would build a smaller ring than Envoy.")
    )
);

named_schema!(
    /// `table`'s partition count.
    PartitionsSchema = "Partitions",
    integer(
        MIN_PARTITIONS.into(),
        MAX_PARTITIONS.into(),
        format!("`table`: the number of partitions, a power of two from {MIN_PARTITIONS} to {MAX_PARTITIONS}; defaults to {DEFAULT_PARTITIONS}.")
    )
    .enum_values(Some(
        (MIN_PARTITIONS.trailing_zeros()..=MAX_PARTITIONS.trailing_zeros()).map(|b| 1u64 << b)
    ))
);

named_schema!(
    /// A default preference-list length.
    ReplicationFactorSchema = "ReplicationFactor",
    integer(
        1,
        MAX_REPLICATION_FACTOR.into(),
        format!("Default preference-list length, 1–{MAX_REPLICATION_FACTOR}; defaults to {DEFAULT_REPLICATION_FACTOR}.")
    )
);

named_schema!(
    /// `max_unhealthy_fraction`.
    UnhealthyFractionSchema = "UnhealthyFraction",
    ObjectBuilder::new()
        .schema_type(Type::Number)
        .exclusive_minimum(Some(0.0))
        .maximum(Some(1.0))
        .description(Some(
            "No automatic drain or removal while more than this share of the ring's leased nodes is unhealthy: above 0, at most 1; default 0.5."
        ))
);

named_schema!(
    /// `max_auto_changes_per_minute`.
    ChangeRateSchema = "ChangeRate",
    integer(
        1,
        MAX_AUTO_CHANGES_PER_MINUTE as u64,
        format!("At most this many automatic changes a minute: 1 to {MAX_AUTO_CHANGES_PER_MINUTE}; default 10.")
    )
);
