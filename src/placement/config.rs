//! Ring configuration: which algorithm, which hash, and their parameters.

use serde::{Deserialize, Serialize};

pub use super::algorithm::{Algorithm, HashFunction};
use super::error::PlacementError;

/// Default points per unit of weight for the `ring` algorithm.
pub const DEFAULT_VNODES_PER_WEIGHT: u32 = 160;
/// Largest accepted points per unit of weight.
pub const MAX_VNODES_PER_WEIGHT: u32 = 10_000;
/// Default Maglev table size (prime).
pub const DEFAULT_TABLE_SIZE: u64 = 65_537;
/// Largest accepted Maglev table size.
pub const MAX_TABLE_SIZE: u64 = 1 << 24;
/// Default replication factor for preference lists.
pub const DEFAULT_REPLICATION_FACTOR: u32 = 3;
/// Largest accepted replication factor.
pub const MAX_REPLICATION_FACTOR: u32 = 64;
/// Cap on materialized ring points, ketama points or jump buckets.
pub const MAX_POINTS: u64 = 1 << 23;
/// Fewest partitions a `table` may have.
pub const MIN_PARTITIONS: u32 = 1 << 8;
/// Most partitions a `table` may have.
pub const MAX_PARTITIONS: u32 = 1 << 20;
/// Partitions of a `table` unless configured.
pub const DEFAULT_PARTITIONS: u32 = 1 << 16;

/// Everything that decides placement apart from the node set.
///
/// Deserializing validates; after building one by hand call
/// [`RingConfig::validate`] (placement building does so too).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Deserialize)]
#[serde(try_from = "RingConfigSpec")]
pub struct RingConfig {
    /// The placement algorithm.
    pub algorithm: Algorithm,
    /// Hash for keys and labels.
    pub hash: HashFunction,
    /// `ring`: points per unit of weight.
    pub vnodes_per_weight: u32,
    /// `maglev`: lookup table size, prime (checked only for `maglev`).
    pub table_size: u64,
    /// Default length of preference lists.
    pub replication_factor: u32,
    /// Whether preference lists spread over zones first (for `table`:
    /// whether replicas sit in distinct zones).
    pub zone_aware: bool,
    /// `table`: partitions, a power of two from 2^8 to 2^20.
    pub partitions: u32,
    /// `haproxy`: whether key hashes go through HAProxy's avalanche
    /// modifier (`full_hash`); always false for other algorithms.
    pub avalanche: bool,
}

/// The written form: `table_size` and `partitions` only where they
/// matter (see [`RingConfig::table_size_written`] and
/// [`RingConfig::partitions_written`]).
#[derive(Serialize)]
struct ConfigOut<'a> {
    algorithm: Algorithm,
    hash: HashFunction,
    vnodes_per_weight: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    table_size: Option<&'a u64>,
    replication_factor: u32,
    zone_aware: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    partitions: Option<&'a u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    avalanche: Option<bool>,
}

impl Serialize for RingConfig {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        ConfigOut {
            algorithm: self.algorithm,
            hash: self.hash,
            vnodes_per_weight: self.vnodes_per_weight,
            table_size: self.table_size_written().then_some(&self.table_size),
            replication_factor: self.replication_factor,
            zone_aware: self.zone_aware,
            partitions: self.partitions_written().then_some(&self.partitions),
            // Written for `haproxy` only, so other configs read as before.
            avalanche: (self.algorithm == Algorithm::Haproxy).then_some(self.avalanche),
        }
        .serialize(s)
    }
}

impl Default for RingConfig {
    fn default() -> Self {
        Self::new(Algorithm::Ring)
    }
}

impl RingConfig {
    /// A config with every parameter at its default for `algorithm`.
    pub fn new(algorithm: Algorithm) -> Self {
        Self {
            algorithm,
            hash: algorithm.default_hash(),
            vnodes_per_weight: DEFAULT_VNODES_PER_WEIGHT,
            table_size: DEFAULT_TABLE_SIZE,
            replication_factor: DEFAULT_REPLICATION_FACTOR,
            zone_aware: false,
            partitions: DEFAULT_PARTITIONS,
            // Plain `hash-type consistent` is sdbm with avalanche.
            avalanche: algorithm == Algorithm::Haproxy,
        }
    }

    /// Whether `table_size` is shown and stored: for `maglev`, and for any
    /// other algorithm only when it was set to something else than the
    /// default (so that it reads back as it was).
    pub fn table_size_written(&self) -> bool {
        self.algorithm == Algorithm::Maglev || self.table_size != DEFAULT_TABLE_SIZE
    }

    /// Whether `partitions` is shown and stored: for `table`, and for any
    /// other algorithm only when it was set to something else than the
    /// default (so that it reads back as it was).
    pub fn partitions_written(&self) -> bool {
        self.algorithm == Algorithm::Table || self.partitions != DEFAULT_PARTITIONS
    }

    /// Checks every parameter; called by every constructor path.
    pub fn validate(&self) -> Result<(), PlacementError> {
        if self.algorithm == Algorithm::Ketama && self.hash != HashFunction::Md5 {
            return Err(PlacementError::HashNotSupported {
                algorithm: "ketama",
                required: "md5",
                requested: self.hash.name(),
            });
        }
        let accepted = self.algorithm.accepted_hashes();
        if !accepted.contains(&self.hash) {
            let names: Vec<&str> = accepted.iter().map(|h| h.name()).collect();
            return Err(PlacementError::HashNotAccepted {
                algorithm: self.algorithm.name(),
                accepted: names.join(", "),
                requested: self.hash.name(),
            });
        }
        if self.avalanche && self.algorithm != Algorithm::Haproxy {
            return Err(PlacementError::AvalancheNotSupported(self.algorithm.name()));
        }
        if self.vnodes_per_weight == 0 || self.vnodes_per_weight > MAX_VNODES_PER_WEIGHT {
            return Err(PlacementError::VnodesOutOfRange {
                value: self.vnodes_per_weight.into(),
                max: MAX_VNODES_PER_WEIGHT,
            });
        }
        if self.replication_factor == 0 || self.replication_factor > MAX_REPLICATION_FACTOR {
            return Err(PlacementError::ReplicationOutOfRange {
                value: self.replication_factor.into(),
                max: MAX_REPLICATION_FACTOR,
            });
        }
        partitions(self.partitions.into())?;
        if self.algorithm != Algorithm::Maglev {
            return Ok(());
        }
        if self.table_size < 2 || self.table_size > MAX_TABLE_SIZE {
            return Err(PlacementError::TableSizeOutOfRange {
                size: self.table_size,
                nodes: 0,
                max: MAX_TABLE_SIZE,
            });
        }
        if !is_prime(self.table_size) {
            return Err(PlacementError::TableSizeNotPrime(self.table_size));
        }
        Ok(())
    }
}

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
    #[serde(default, deserialize_with = "super::json_integer::option")]
    pub vnodes_per_weight: Option<u64>,
    /// Defaults to 65537.
    #[serde(default, deserialize_with = "super::json_integer::option")]
    pub table_size: Option<u64>,
    /// Defaults to 3.
    #[serde(default, deserialize_with = "super::json_integer::option")]
    pub replication_factor: Option<u64>,
    /// Defaults to false.
    pub zone_aware: Option<bool>,
    /// Defaults to 65536.
    #[serde(default, deserialize_with = "super::json_integer::option")]
    pub partitions: Option<u64>,
    /// `haproxy` only; defaults to true for `haproxy`.
    pub avalanche: Option<bool>,
}

impl RingConfigSpec {
    /// The fields of a complete config that this spec leaves out, in the
    /// order they are listed in [`RingConfig`]. `table_size` belongs to a
    /// complete config only for `maglev`, and `partitions` only for
    /// `table` (others show them only when set to other than the default).
    pub fn missing_fields(&self) -> Vec<&'static str> {
        let maglev = self.algorithm == Some(Algorithm::Maglev);
        let table = self.algorithm == Some(Algorithm::Table);
        let haproxy = self.algorithm == Some(Algorithm::Haproxy);
        [
            ("algorithm", self.algorithm.is_none()),
            ("hash", self.hash.is_none()),
            ("vnodes_per_weight", self.vnodes_per_weight.is_none()),
            ("table_size", maglev && self.table_size.is_none()),
            ("replication_factor", self.replication_factor.is_none()),
            ("zone_aware", self.zone_aware.is_none()),
            ("partitions", table && self.partitions.is_none()),
            ("avalanche", haproxy && self.avalanche.is_none()),
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
        } = self;
        algorithm.is_none()
            && hash.is_none()
            && vnodes_per_weight.is_none()
            && table_size.is_none()
            && replication_factor.is_none()
            && zone_aware.is_none()
            && partitions.is_none()
            && avalanche.is_none()
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
        Ok(())
    }

    /// `base` with every field this spec gives replaced, validated as a
    /// whole. Omitted fields keep their value in `base`; none is reset to
    /// a default (changing `algorithm` to `ketama` on an `xxh3` ring needs
    /// `"hash": "md5"` too, and says so), except `avalanche`, which only
    /// `haproxy` has: a change of algorithm without it takes the new
    /// algorithm's default (on for `haproxy`, off for the others).
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

fn partitions(p: u64) -> Result<u32, PlacementError> {
    match u32::try_from(p) {
        Ok(n) if (MIN_PARTITIONS..=MAX_PARTITIONS).contains(&n) && n.is_power_of_two() => Ok(n),
        _ => Err(PlacementError::PartitionsOutOfRange {
            value: p,
            min: MIN_PARTITIONS,
            max: MAX_PARTITIONS,
        }),
    }
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

/// Deterministic primality test by trial division; table sizes are at most
/// 2^24, so this needs at most ~2,000 divisions.
pub fn is_prime(n: u64) -> bool {
    if n < 2 {
        return false;
    }
    if n.is_multiple_of(2) {
        return n == 2;
    }
    let mut d = 3;
    while d * d <= n {
        if n.is_multiple_of(d) {
            return false;
        }
        d += 2;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(c: &RingConfig) -> serde_json::Value {
        serde_json::to_value(c).unwrap()
    }

    #[test]
    fn table_size_is_written_for_maglev_or_when_not_the_default() {
        let ring = RingConfig::new(Algorithm::Ring);
        assert!(written(&ring).get("table_size").is_none());
        let maglev = RingConfig::new(Algorithm::Maglev);
        assert_eq!(written(&maglev)["table_size"], DEFAULT_TABLE_SIZE);
        let set = RingConfig {
            table_size: 251,
            ..ring
        };
        assert_eq!(written(&set)["table_size"], 251);
        // Each reads back as it was.
        for c in [RingConfig::new(Algorithm::Ring), maglev, set] {
            assert_eq!(
                serde_json::from_value::<RingConfig>(written(&c)).unwrap(),
                c
            );
        }
    }
}
