//! The wire form of a ring config, and what a patch of it does.

use serde::{Deserialize, Deserializer};

use super::{
    Algorithm, HashFunction, HashTag, PlacementError, RingConfig, MAX_PARTITIONS,
    MAX_REPLICATION_FACTOR, MAX_RING_SIZE, MAX_VNODES_PER_WEIGHT, MIN_PARTITIONS,
};

/// The wire form of a config: every parameter optional, unknown fields
/// refused. Three uses, never mixed up: a new ring takes defaults for the
/// omitted fields ([`TryFrom`]); `set_config` needs every field
/// ([`RingConfigSpec::missing_fields`] is empty); `update_config` is a
/// patch that keeps the omitted fields as the ring has them
/// ([`RingConfigSpec::apply_to`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RingConfigSpec {
    /// Defaults to `ring`.
    pub algorithm: Option<Algorithm>,
    /// Defaults to the algorithm's hash.
    pub hash: Option<HashFunction>,
    /// Defaults to 160.
    #[serde(default, deserialize_with = "crate::placement::json_integer::option")]
    pub vnodes_per_weight: Option<u64>,
    /// Defaults to 65537.
    #[serde(default, deserialize_with = "crate::placement::json_integer::option")]
    pub table_size: Option<u64>,
    /// Defaults to 3.
    #[serde(default, deserialize_with = "crate::placement::json_integer::option")]
    pub replication_factor: Option<u64>,
    /// Defaults to false.
    pub zone_aware: Option<bool>,
    /// Defaults to 65536.
    #[serde(default, deserialize_with = "crate::placement::json_integer::option")]
    pub partitions: Option<u64>,
    /// `haproxy` only; defaults to true for `haproxy`.
    pub avalanche: Option<bool>,
    /// `twemproxy` only; defaults to none. `null` is a value here: in a
    /// patch it removes the ring's tag, where a missing field keeps it.
    #[serde(default, deserialize_with = "given")]
    pub hash_tag: Option<Option<HashTag>>,
    /// `envoy_ring_hash`; defaults to 1024.
    #[serde(default, deserialize_with = "crate::placement::json_integer::option")]
    pub minimum_ring_size: Option<u64>,
    /// `envoy_ring_hash`; defaults to 4096.
    #[serde(default, deserialize_with = "crate::placement::json_integer::option")]
    pub maximum_ring_size: Option<u64>,
}

/// A field that may be `null`: `Some(None)`, where a missing field is
/// `None` (by `#[serde(default)]`).
fn given<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

impl RingConfigSpec {
    /// The fields of a complete config that this spec leaves out, in the
    /// order they are listed in [`RingConfig`]. `table_size` belongs to a
    /// complete config only for `maglev`, and `partitions` only for
    /// `table` (others show them only when set to other than the default).
    pub fn missing_fields(&self) -> Vec<&'static str> {
        let maglev = self.algorithm.is_some_and(Algorithm::uses_table_size);
        let table = self.algorithm == Some(Algorithm::Table);
        let haproxy = self.algorithm == Some(Algorithm::Haproxy);
        let envoy = self.algorithm == Some(Algorithm::EnvoyRingHash);
        [
            ("algorithm", self.algorithm.is_none()),
            ("hash", self.hash.is_none()),
            ("vnodes_per_weight", self.vnodes_per_weight.is_none()),
            ("table_size", maglev && self.table_size.is_none()),
            ("replication_factor", self.replication_factor.is_none()),
            ("zone_aware", self.zone_aware.is_none()),
            ("partitions", table && self.partitions.is_none()),
            ("avalanche", haproxy && self.avalanche.is_none()),
            (
                "minimum_ring_size",
                envoy && self.minimum_ring_size.is_none(),
            ),
            (
                "maximum_ring_size",
                envoy && self.maximum_ring_size.is_none(),
            ),
        ]
        .into_iter()
        .filter_map(|(name, missing)| missing.then_some(name))
        .collect()
    }

    /// Whether the spec gives no field at all.
    pub fn is_empty(&self) -> bool {
        let Self {
            algorithm,
            hash,
            vnodes_per_weight,
            table_size,
            replication_factor,
            zone_aware,
            partitions,
            avalanche,
            hash_tag,
            minimum_ring_size,
            maximum_ring_size,
        } = self;
        algorithm.is_none()
            && hash.is_none()
            && vnodes_per_weight.is_none()
            && table_size.is_none()
            && replication_factor.is_none()
            && zone_aware.is_none()
            && partitions.is_none()
            && avalanche.is_none()
            && hash_tag.is_none()
            && minimum_ring_size.is_none()
            && maximum_ring_size.is_none()
    }

    /// Checks the ranges of the given fields that hold whatever the rest
    /// of the config is, so a patch is refused as it arrives rather than
    /// when it is applied. Rules across fields (ketama hashes with md5, a
    /// maglev table size is prime) wait for [`RingConfigSpec::apply_to`].
    pub fn check_ranges(&self) -> Result<(), PlacementError> {
        if let Some(v) = self.vnodes_per_weight {
            vnodes(v)?;
        }
        if let Some(r) = self.replication_factor {
            replication(r)?;
        }
        if let Some(p) = self.partitions {
            partitions(p)?;
        }
        if let Some(v) = self.minimum_ring_size {
            ring_size("minimum_ring_size", v)?;
        }
        if let Some(v) = self.maximum_ring_size {
            ring_size("maximum_ring_size", v)?;
        }
        Ok(())
    }

    /// `base` with every field this spec gives replaced, validated as a
    /// whole. Omitted fields keep their value in `base`; none is reset to
    /// a default (changing `algorithm` to `ketama` on an `xxh3` ring needs
    /// `"hash": "md5"` too, and says so), except `avalanche`, which only
    /// `haproxy` has: a change of algorithm without it takes the new
    /// algorithm's default (on for `haproxy`, off for the others), and
    /// `hash_tag`, which only `twemproxy` has: a change of algorithm
    /// without it takes none.
    pub fn apply_to(&self, base: &RingConfig) -> Result<RingConfig, PlacementError> {
        let algorithm = self.algorithm.unwrap_or(base.algorithm);
        let config = RingConfig {
            algorithm,
            hash: self.hash.unwrap_or(base.hash),
            vnodes_per_weight: match self.vnodes_per_weight {
                Some(v) => vnodes(v)?,
                None => base.vnodes_per_weight,
            },
            table_size: self.table_size.unwrap_or(base.table_size),
            replication_factor: match self.replication_factor {
                Some(r) => replication(r)?,
                None => base.replication_factor,
            },
            zone_aware: self.zone_aware.unwrap_or(base.zone_aware),
            partitions: match self.partitions {
                Some(p) => partitions(p)?,
                None => base.partitions,
            },
            // Only `haproxy` has the modifier, so a change of algorithm
            // takes the new algorithm's default unless one is given.
            avalanche: match self.avalanche {
                Some(a) => a,
                None if algorithm == base.algorithm => base.avalanche,
                None => RingConfig::new(algorithm).avalanche,
            },
            hash_tag: match self.hash_tag {
                Some(t) => t,
                None if algorithm == base.algorithm => base.hash_tag,
                None => None,
            },
            minimum_ring_size: self.minimum_ring_size.unwrap_or(base.minimum_ring_size),
            maximum_ring_size: self.maximum_ring_size.unwrap_or(base.maximum_ring_size),
        };
        config.validate()?;
        Ok(config)
    }

    /// Whether every field this spec gives has that value in `config`.
    pub fn agrees_with(&self, config: &RingConfig) -> bool {
        self.apply_to(config).is_ok_and(|c| c == *config)
    }
}

fn vnodes(v: u64) -> Result<u32, PlacementError> {
    match u32::try_from(v) {
        Ok(n) if (1..=MAX_VNODES_PER_WEIGHT).contains(&n) => Ok(n),
        _ => Err(PlacementError::VnodesOutOfRange {
            value: v,
            max: MAX_VNODES_PER_WEIGHT,
        }),
    }
}

fn replication(r: u64) -> Result<u32, PlacementError> {
    match u32::try_from(r) {
        Ok(n) if (1..=MAX_REPLICATION_FACTOR).contains(&n) => Ok(n),
        _ => Err(PlacementError::ReplicationOutOfRange {
            value: r,
            max: MAX_REPLICATION_FACTOR,
        }),
    }
}

pub(super) fn partitions(p: u64) -> Result<u32, PlacementError> {
    match u32::try_from(p) {
        Ok(n) if (MIN_PARTITIONS..=MAX_PARTITIONS).contains(&n) && n.is_power_of_two() => Ok(n),
        _ => Err(PlacementError::PartitionsOutOfRange {
            value: p,
            min: MIN_PARTITIONS,
            max: MAX_PARTITIONS,
        }),
    }
}

/// An `envoy_ring_hash` ring size: 1 to Envoy's bound of 2^23.
pub(super) fn ring_size(field: &'static str, v: u64) -> Result<u64, PlacementError> {
    if (1..=MAX_RING_SIZE).contains(&v) {
        return Ok(v);
    }
    Err(PlacementError::RingSizeOutOfRange {
        field,
        value: v,
        max: MAX_RING_SIZE,
    })
}

/// A new ring's config: the given fields, and for the others the defaults
/// of the chosen algorithm (`ring` if none is given).
impl TryFrom<RingConfigSpec> for RingConfig {
    type Error = PlacementError;
    fn try_from(spec: RingConfigSpec) -> Result<Self, Self::Error> {
        let algorithm = spec.algorithm.unwrap_or(Algorithm::Ring);
        spec.apply_to(&RingConfig::new(algorithm))
    }
}
