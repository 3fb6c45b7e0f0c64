//! The placement algorithms and hash functions, by name and by code.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::error::{excerpt, PlacementError};

/// A placement algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "&'static str")]
pub enum Algorithm {
    /// Virtual-node ring with 64-bit positions (the default).
    Ring,
    /// libketama-compatible ring (md5, 32-bit points).
    Ketama,
    /// Maglev lookup table.
    Maglev,
    /// Jump consistent hash over a persisted bucket order.
    Jump,
    /// Weighted highest-random-weight.
    Rendezvous,
    /// A stored partition table with exact quotas (`placement::table`).
    Table,
    /// nginx's `hash $key consistent`, bit for bit (`placement::nginx`).
    Nginx,
    /// HAProxy 2.6's `hash-type consistent`, servers placed by stable
    /// numeric ids (`placement::haproxy`).
    Haproxy,
    /// twemproxy's (nutcracker's) `distribution: ketama`, servers placed
    /// by name (`placement::twemproxy`).
    Twemproxy,
    /// Envoy's and gRPC's `ring_hash` load balancer, endpoints placed by
    /// their xDS hash key (`placement::envoy_ring_hash`).
    EnvoyRingHash,
    /// Envoy's `MAGLEV` load balancer over the EDS weights ringd sends,
    /// endpoints placed by their xDS hash key (`placement::envoy_maglev`).
    EnvoyMaglev,
}

impl Algorithm {
    /// All algorithms, in their canonical code order.
    pub const ALL: [Algorithm; 11] = [
        Algorithm::Ring,
        Algorithm::Ketama,
        Algorithm::Maglev,
        Algorithm::Jump,
        Algorithm::Rendezvous,
        Algorithm::Table,
        Algorithm::Nginx,
        Algorithm::Haproxy,
        Algorithm::Twemproxy,
        Algorithm::EnvoyRingHash,
        Algorithm::EnvoyMaglev,
    ];

    /// The name used in JSON and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Ring => "ring",
            Algorithm::Ketama => "ketama",
            Algorithm::Maglev => "maglev",
            Algorithm::Jump => "jump",
            Algorithm::Rendezvous => "rendezvous",
            Algorithm::Table => "table",
            Algorithm::Nginx => "nginx",
            Algorithm::Haproxy => "haproxy",
            Algorithm::Twemproxy => "twemproxy",
            Algorithm::EnvoyRingHash => "envoy_ring_hash",
            Algorithm::EnvoyMaglev => "envoy_maglev",
        }
    }

    /// The byte that stands for this algorithm in the canonical encoding.
    pub fn code(self) -> u8 {
        match self {
            Algorithm::Ring => 1,
            Algorithm::Ketama => 2,
            Algorithm::Maglev => 3,
            Algorithm::Jump => 4,
            Algorithm::Rendezvous => 5,
            Algorithm::Table => 6,
            Algorithm::Nginx => 7,
            Algorithm::Haproxy => 8,
            Algorithm::Twemproxy => 9,
            Algorithm::EnvoyRingHash => 10,
            Algorithm::EnvoyMaglev => 11,
        }
    }

    /// Whether a node is placed by its `address` (as a proxy places the
    /// servers it knows only by address) rather than by its label. Such an
    /// algorithm needs an address on every active node, and only its
    /// encoding carries the addresses, so every other algorithm's
    /// fingerprints stay what they were before nodes had one.
    pub fn places_by_address(self) -> bool {
        match self {
            Algorithm::Ring
            | Algorithm::Ketama
            | Algorithm::Maglev
            | Algorithm::Jump
            | Algorithm::Rendezvous
            | Algorithm::Table
            // HAProxy places a server by its numeric id (5.8).
            | Algorithm::Haproxy
            // ringd gives every endpoint its label as EDS metadata
            // `envoy.lb` `hash_key`, which Envoy and gRPC hash instead of
            // the address.
            | Algorithm::EnvoyRingHash
            | Algorithm::EnvoyMaglev => false,
            // nutcracker connects to each server's `host:port` and, unless
            // a name is given (the node's `hash_key`), places it by it.
            Algorithm::Nginx | Algorithm::Twemproxy => true,
        }
    }

    /// Whether every active node needs an `address`: those placed by it,
    /// and the xDS modes, whose nodes are endpoints (an address to connect
    /// to) placed by their label.
    pub fn needs_address(self) -> bool {
        self.places_by_address() || self.is_xds()
    }

    /// Whether a ring of this algorithm fills a Maglev table of
    /// `table_size` slots: `maglev` and `envoy_maglev`.
    pub fn uses_table_size(self) -> bool {
        matches!(self, Algorithm::Maglev | Algorithm::EnvoyMaglev)
    }

    /// Whether a ring of this algorithm is served over xDS, its nodes
    /// sent as EDS endpoints with ringd's weights (spec 5.10.1):
    /// `envoy_ring_hash` and `envoy_maglev`.
    pub fn is_xds(self) -> bool {
        matches!(self, Algorithm::EnvoyRingHash | Algorithm::EnvoyMaglev)
    }

    /// The hash an algorithm uses when none is given.
    pub fn default_hash(self) -> HashFunction {
        match self {
            Algorithm::Ketama => HashFunction::Md5,
            Algorithm::Nginx => HashFunction::Crc32,
            Algorithm::Haproxy => HashFunction::Sdbm,
            Algorithm::Twemproxy => HashFunction::Fnv1a64,
            Algorithm::EnvoyRingHash | Algorithm::EnvoyMaglev => HashFunction::Xxh64,
            _ => HashFunction::Xxh3,
        }
    }

    /// The hashes a ring of this algorithm accepts: a proxy's mode takes
    /// only its proxy's key hashes, the others only the 64-bit ones.
    pub fn accepted_hashes(self) -> &'static [HashFunction] {
        match self {
            Algorithm::Ketama => &[HashFunction::Md5],
            Algorithm::Nginx => &[HashFunction::Crc32],
            Algorithm::Haproxy => &HashFunction::HAPROXY,
            Algorithm::Twemproxy => &HashFunction::TWEMPROXY,
            // A header hash policy is xxHash64 in Envoy, and the only
            // hash gRPC has.
            Algorithm::EnvoyRingHash | Algorithm::EnvoyMaglev => &[HashFunction::Xxh64],
            _ => &HashFunction::GENERAL,
        }
    }
}

impl FromStr for Algorithm {
    type Err = PlacementError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Algorithm::ALL
            .into_iter()
            .find(|a| a.name() == s)
            .ok_or_else(|| PlacementError::UnknownAlgorithm(excerpt(s)))
    }
}

impl TryFrom<String> for Algorithm {
    type Error = PlacementError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<Algorithm> for &'static str {
    fn from(a: Algorithm) -> Self {
        a.name()
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A 64-bit hash function for keys and point labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "&'static str")]
pub enum HashFunction {
    /// XXH3-64, seed 0, default secret.
    Xxh3,
    /// MD5; first 8 digest bytes as a little-endian u64.
    Md5,
    /// SHA-256; first 8 digest bytes as a little-endian u64.
    Sha256,
    /// MurmurHash3 x64-128, seed 0; the first 64-bit half (h1).
    Murmur3,
    /// twemproxy's `fnv1a_64` (spec 3.7): 32 bits, sign-extended bytes.
    Fnv1a64,
    /// twemproxy's `fnv1_64`: the low 32 bits of 64-bit FNV-1.
    Fnv164,
    /// twemproxy's `fnv1a_32`.
    Fnv1a32,
    /// twemproxy's `fnv1_32`.
    Fnv132,
    /// twemproxy's `crc32a`: the standard CRC-32.
    Crc32a,
    /// twemproxy's `one_at_a_time`.
    OneAtATime,
    /// twemproxy's `murmur` (MurmurHash2, length-derived seed).
    Murmur,
    /// twemproxy's `jenkins` (lookup3, initial value 13).
    Jenkins,
    /// twemproxy's `hsieh` (SuperFastHash).
    Hsieh,
    /// The standard CRC-32 (IEEE): nginx's only hash (`ngx_crc32`) and
    /// HAProxy's `crc32`, 32 bits.
    Crc32,
    /// HAProxy's `sdbm` (32 bits).
    Sdbm,
    /// HAProxy's `djb2` (32 bits).
    Djb2,
    /// HAProxy's `wt6` (32 bits).
    Wt6,
    /// XXH64 with seed 0: Envoy's and gRPC's hash of request headers and
    /// ring entries.
    Xxh64,
}

impl HashFunction {
    /// All hash functions, in their canonical code order.
    pub const ALL: [HashFunction; 18] = [
        HashFunction::Xxh3,
        HashFunction::Md5,
        HashFunction::Sha256,
        HashFunction::Murmur3,
        HashFunction::Crc32,
        HashFunction::Sdbm,
        HashFunction::Djb2,
        HashFunction::Wt6,
        HashFunction::Fnv1a64,
        HashFunction::Fnv164,
        HashFunction::Fnv1a32,
        HashFunction::Fnv132,
        HashFunction::Crc32a,
        HashFunction::OneAtATime,
        HashFunction::Murmur,
        HashFunction::Jenkins,
        HashFunction::Hsieh,
        HashFunction::Xxh64,
    ];

    /// The hashes of the general algorithms (`ring`, `maglev`, `jump`,
    /// `rendezvous`, `table`), which place by 64-bit hashes.
    pub const GENERAL: [HashFunction; 4] = [
        HashFunction::Xxh3,
        HashFunction::Md5,
        HashFunction::Sha256,
        HashFunction::Murmur3,
    ];

    /// The key hashes of `twemproxy` rings: nutcracker's names (its `crc16`
    /// and `crc32`, which keep 16 and 15 bits, are left out).
    pub const TWEMPROXY: [HashFunction; 10] = [
        HashFunction::Fnv1a64,
        HashFunction::Md5,
        HashFunction::Crc32a,
        HashFunction::OneAtATime,
        HashFunction::Murmur,
        HashFunction::Jenkins,
        HashFunction::Hsieh,
        HashFunction::Fnv164,
        HashFunction::Fnv1a32,
        HashFunction::Fnv132,
    ];

    /// The key hashes of `haproxy` rings: HAProxy 2.6's `hash-type`
    /// functions (its `none` is left out), default first.
    pub const HAPROXY: [HashFunction; 4] = [
        HashFunction::Sdbm,
        HashFunction::Djb2,
        HashFunction::Wt6,
        HashFunction::Crc32,
    ];

    /// The name used in JSON and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            HashFunction::Xxh3 => "xxh3",
            HashFunction::Md5 => "md5",
            HashFunction::Sha256 => "sha256",
            HashFunction::Murmur3 => "murmur3",
            HashFunction::Fnv1a64 => "fnv1a_64",
            HashFunction::Fnv164 => "fnv1_64",
            HashFunction::Fnv1a32 => "fnv1a_32",
            HashFunction::Fnv132 => "fnv1_32",
            HashFunction::Crc32a => "crc32a",
            HashFunction::OneAtATime => "one_at_a_time",
            HashFunction::Murmur => "murmur",
            HashFunction::Jenkins => "jenkins",
            HashFunction::Hsieh => "hsieh",
            HashFunction::Crc32 => "crc32",
            HashFunction::Sdbm => "sdbm",
            HashFunction::Djb2 => "djb2",
            HashFunction::Wt6 => "wt6",
            HashFunction::Xxh64 => "xxh64",
        }
    }

    /// The byte that stands for this hash in the canonical encoding.
    pub fn code(self) -> u8 {
        match self {
            HashFunction::Xxh3 => 1,
            HashFunction::Md5 => 2,
            HashFunction::Sha256 => 3,
            HashFunction::Murmur3 => 4,
            HashFunction::Fnv1a64 => 9,
            HashFunction::Fnv164 => 10,
            HashFunction::Fnv1a32 => 11,
            HashFunction::Fnv132 => 12,
            HashFunction::Crc32a => 13,
            HashFunction::OneAtATime => 14,
            HashFunction::Murmur => 15,
            HashFunction::Jenkins => 16,
            HashFunction::Hsieh => 17,
            HashFunction::Crc32 => 5,
            HashFunction::Sdbm => 6,
            HashFunction::Djb2 => 7,
            HashFunction::Wt6 => 8,
            HashFunction::Xxh64 => 18,
        }
    }
}

impl FromStr for HashFunction {
    type Err = PlacementError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        HashFunction::ALL
            .into_iter()
            .find(|h| h.name() == s)
            .ok_or_else(|| PlacementError::UnknownHash(excerpt(s)))
    }
}

impl TryFrom<String> for HashFunction {
    type Error = PlacementError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<HashFunction> for &'static str {
    fn from(h: HashFunction) -> Self {
        h.name()
    }
}

impl fmt::Display for HashFunction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
