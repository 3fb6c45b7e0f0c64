//! Ring configuration: which algorithm, which hash, and their parameters.

use serde::{Deserialize, Serialize};

pub use super::algorithm::{Algorithm, HashFunction};
use super::error::PlacementError;
use super::hash_tag::HashTag;

mod spec;
pub use spec::RingConfigSpec;

/// Default points per unit of weight for the `ring` algorithm.
pub const DEFAULT_VNODES_PER_WEIGHT: u32 = 160;
/// Largest accepted points per unit of weight.
pub const MAX_VNODES_PER_WEIGHT: u32 = 10_000;
/// Default Maglev table size (prime).
pub const DEFAULT_TABLE_SIZE: u64 = 65_537;
/// Largest accepted Maglev table size.
pub const MAX_TABLE_SIZE: u64 = 1 << 24;
/// Largest `envoy_maglev` table size: Envoy's bound on
/// `maglev_lb_config.table_size` (a prime).
pub const MAX_ENVOY_TABLE_SIZE: u64 = 5_000_011;
/// `envoy_ring_hash`'s fewest ring entries unless configured (Envoy's and
/// gRPC's `minimum_ring_size` default).
pub const DEFAULT_MINIMUM_RING_SIZE: u64 = 1024;
/// `envoy_ring_hash`'s most ring entries unless configured: gRPC's cap
/// (`GRPC_RING_HASH_CAP`, 4096), which a gRPC client applies to whatever
/// the control plane sends, so a larger ring would not be the one gRPC
/// builds. Envoy's own default is 8M.
pub const DEFAULT_MAXIMUM_RING_SIZE: u64 = 4096;
/// Largest `minimum_ring_size` and `maximum_ring_size`: Envoy's bound on
/// both (8M entries).
pub const MAX_RING_SIZE: u64 = 1 << 23;
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
    /// `twemproxy`: the two characters around the part of a key that is
    /// hashed (nutcracker's `hash_tag`); none hashes whole keys, and other
    /// algorithms have none.
    pub hash_tag: Option<HashTag>,
    /// `envoy_ring_hash`: Envoy's `minimum_ring_size`, 1 to 2^23.
    pub minimum_ring_size: u64,
    /// `envoy_ring_hash`: Envoy's `maximum_ring_size`, from
    /// `minimum_ring_size` to 2^23.
    pub maximum_ring_size: u64,
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
    #[serde(skip_serializing_if = "Option::is_none")]
    hash_tag: Option<HashTag>,
    #[serde(skip_serializing_if = "Option::is_none")]
    minimum_ring_size: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    maximum_ring_size: Option<u64>,
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
            hash_tag: self.hash_tag,
            minimum_ring_size: self.ring_sizes_written().then_some(self.minimum_ring_size),
            maximum_ring_size: self.ring_sizes_written().then_some(self.maximum_ring_size),
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
            hash_tag: None,
            minimum_ring_size: DEFAULT_MINIMUM_RING_SIZE,
            maximum_ring_size: DEFAULT_MAXIMUM_RING_SIZE,
        }
    }

    /// Whether `minimum_ring_size` and `maximum_ring_size` are shown and
    /// stored: for `envoy_ring_hash`, and for any other algorithm only
    /// when set to something else than the defaults (so that they read
    /// back as they were).
    pub fn ring_sizes_written(&self) -> bool {
        self.algorithm == Algorithm::EnvoyRingHash
            || self.minimum_ring_size != DEFAULT_MINIMUM_RING_SIZE
            || self.maximum_ring_size != DEFAULT_MAXIMUM_RING_SIZE
    }

    /// Whether `table_size` is shown and stored: for the Maglev
    /// algorithms, and for any
    /// other algorithm only when it was set to something else than the
    /// default (so that it reads back as it was).
    pub fn table_size_written(&self) -> bool {
        self.algorithm.uses_table_size() || self.table_size != DEFAULT_TABLE_SIZE
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
        if self.hash_tag.is_some() && self.algorithm != Algorithm::Twemproxy {
            return Err(PlacementError::HashTagNotSupported {
                algorithm: self.algorithm.name(),
            });
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
        spec::partitions(self.partitions.into())?;
        spec::ring_size("minimum_ring_size", self.minimum_ring_size)?;
        spec::ring_size("maximum_ring_size", self.maximum_ring_size)?;
        if self.algorithm == Algorithm::EnvoyRingHash
            && self.minimum_ring_size > self.maximum_ring_size
        {
            return Err(PlacementError::RingSizesInverted {
                minimum: self.minimum_ring_size,
                maximum: self.maximum_ring_size,
            });
        }
        if !self.algorithm.uses_table_size() {
            return Ok(());
        }
        let max = match self.algorithm {
            Algorithm::EnvoyMaglev => MAX_ENVOY_TABLE_SIZE,
            _ => MAX_TABLE_SIZE,
        };
        if self.table_size < 2 || self.table_size > max {
            return Err(PlacementError::TableSizeOutOfRange {
                size: self.table_size,
                nodes: 0,
                max,
            });
        }
        if !is_prime(self.table_size) {
            return Err(PlacementError::TableSizeNotPrime(self.table_size));
        }
        Ok(())
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
mod tests;
