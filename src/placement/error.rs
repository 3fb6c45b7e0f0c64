//! Typed errors for everything the placement core refuses.

use std::borrow::Cow;

use thiserror::Error;

/// Why a ring configuration, a node or a node set was rejected.
///
/// Every message names the offending value so that an operator can fix the
/// input without reading the source.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PlacementError {
    /// A node id was empty.
    #[error("node id must not be empty")]
    EmptyNodeId,
    /// A node id was too long or used a character outside the allowed set.
    #[error("node id `{id}` is invalid: {reason}")]
    InvalidNodeId {
        /// The rejected id (truncated to 200 characters).
        id: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// Two nodes in one set share an id.
    #[error("node id `{0}` appears more than once")]
    DuplicateNodeId(String),
    /// A `hash_key` was empty, too long or contained control characters.
    #[error("hash_key `{key}` is invalid: {reason}")]
    InvalidHashKey {
        /// The rejected key (truncated to 200 characters).
        key: String,
        /// What is wrong with it (owned when it states the length limit).
        reason: Cow<'static, str>,
    },
    /// A zone name was empty, too long or used a disallowed character.
    #[error("zone `{zone}` is invalid: {reason}")]
    InvalidZone {
        /// The rejected zone (truncated to 200 characters).
        zone: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A node address was empty, too long or held whitespace or control
    /// characters.
    #[error("address `{address}` is invalid: {reason}")]
    InvalidAddress {
        /// The rejected address (truncated to 200 characters).
        address: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// An active node has no address under an algorithm that places by
    /// address.
    #[error("active node `{node}` has no address, but {algorithm} rings place nodes by their address (`host:port`): give it one")]
    MissingAddress {
        /// The first such node in id order.
        node: String,
        /// The ring's algorithm.
        algorithm: &'static str,
    },
    /// An active node's address is not one the ring's proxy can take as a
    /// server, or would change the configuration it is written into.
    #[error("address `{address}` of node `{node}` cannot be a server for {algorithm}: {reason}")]
    AddressNotServer {
        /// The first such node in id order.
        node: String,
        /// Its address (truncated to 200 characters).
        address: String,
        /// What is wrong with it.
        reason: &'static str,
        /// The ring's algorithm.
        algorithm: &'static str,
    },
    /// Two active nodes share an address under an algorithm whose proxy
    /// would take them for one server (or, for gRPC, one endpoint).
    #[error("nodes `{first}` and `{second}` share the address `{address}`, but an {algorithm} ring's proxies would take them for one server: give each its own")]
    DuplicateAddress {
        /// The ring's algorithm.
        algorithm: &'static str,
        /// The address.
        address: String,
        /// The first node with it, in id order.
        first: String,
        /// The second.
        second: String,
    },
    /// A weight was zero or above the maximum.
    #[error("weight {weight} is out of range: weights are integers from 1 to {max}")]
    WeightOutOfRange {
        /// The rejected weight.
        weight: u64,
        /// The largest accepted weight.
        max: u32,
    },
    /// The algorithm name is not one ringd implements.
    #[error(
        "unknown algorithm `{0}`: expected one of ring, ketama, maglev, jump, rendezvous, table, nginx, haproxy"
    )]
    UnknownAlgorithm(String),
    /// The hash function name is not one ringd implements.
    #[error("unknown hash function `{0}`: expected one of xxh3, md5, sha256, murmur3, crc32, sdbm, djb2, wt6, fnv1a_64, fnv1_64, fnv1a_32, fnv1_32, crc32a, one_at_a_time, murmur, jenkins, hsieh")]
    UnknownHash(String),
    /// The algorithm fixes its own hash function and another one was asked for.
    #[error("algorithm `{algorithm}` only supports hash `{required}`, not `{requested}`")]
    HashNotSupported {
        /// The algorithm.
        algorithm: &'static str,
        /// The hash it requires.
        required: &'static str,
        /// The hash that was requested.
        requested: &'static str,
    },
    /// The algorithm takes a set of hash functions and another one was
    /// asked for.
    #[error("algorithm `{algorithm}` supports the hashes {accepted}, not `{requested}`")]
    HashNotAccepted {
        /// The algorithm.
        algorithm: &'static str,
        /// The names of the hashes it accepts, its default first.
        accepted: String,
        /// The hash that was requested.
        requested: &'static str,
    },
    /// `avalanche` was set on a ring whose algorithm has no such modifier.
    #[error("avalanche applies to haproxy rings only, not to {0}: leave it out")]
    AvalancheNotSupported(&'static str),
    /// A `hash_tag` that is not two characters nutcracker can be given.
    #[error("hash_tag `{tag}` is invalid: {reason}")]
    InvalidHashTag {
        /// The rejected tag (truncated to 200 characters).
        tag: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A `hash_tag` in a ring of another algorithm than `twemproxy`.
    #[error("hash_tag applies to twemproxy rings only, not to {algorithm} rings: leave it out (or send \"hash_tag\": null to remove it)")]
    HashTagNotSupported {
        /// The ring's algorithm.
        algorithm: &'static str,
    },
    /// A node's twemproxy server name (its `hash_key`) that nutcracker
    /// could not read back as written.
    #[error("node `{node}` has hash_key `{name}`, which a twemproxy ring writes as the server name: it must be printable ASCII without spaces, `#`, quotes or backslashes")]
    InvalidServerName {
        /// The node.
        node: String,
        /// Its hash_key (truncated to 200 characters).
        name: String,
    },
    /// Two active nodes of a `twemproxy` ring would have one server name,
    /// which nutcracker refuses.
    #[error("nodes `{first}` and `{second}` would both be the twemproxy server `{name}` (a server is named by its hash_key, else by its host on port 11211, else by host:port): give one a distinct {field}")]
    ServerNameTaken {
        /// The shared name.
        name: String,
        /// The first node, in name order then id order.
        first: String,
        /// The second node.
        second: String,
        /// The field to change: `hash_key` if either node has one, else
        /// `address`.
        field: &'static str,
    },
    /// Two active nodes of an `envoy_ring_hash` ring have one label, so
    /// Envoy and gRPC would hash both endpoints alike.
    #[error("nodes `{first}` and `{second}` would both be hashed as `{key}` by Envoy and gRPC (an endpoint is hashed by its hash_key, else its id): give one a distinct {field}")]
    EndpointKeyTaken {
        /// The shared hash key.
        key: String,
        /// The first node, in key order then id order.
        first: String,
        /// The second node.
        second: String,
        /// The field to change: always `hash_key`, since ids are unique.
        field: &'static str,
    },
    /// An active node's weight is above what the ring's proxy accepts.
    #[error("node `{node}` has weight {weight}, but {algorithm} takes weights from 1 to {max}")]
    WeightTooHighForProxy {
        /// The first such node in id order.
        node: String,
        /// Its weight.
        weight: u32,
        /// The proxy's largest weight.
        max: u32,
        /// The ring's algorithm.
        algorithm: &'static str,
    },
    /// A `haproxy` placement's server ids do not fit its active nodes.
    #[error("haproxy server ids do not match the active nodes: {0}")]
    InvalidServerIds(String),
    /// The Maglev table size is not a prime number.
    #[error("table_size {0} is not prime: Maglev needs a prime table size such as 65537")]
    TableSizeNotPrime(u64),
    /// The Maglev table size is below the node count or above the maximum.
    #[error("table_size {size} is out of range: it must be at least the active node count ({nodes}) and at most {max}")]
    TableSizeOutOfRange {
        /// The rejected size.
        size: u64,
        /// Active nodes that need at least one entry each.
        nodes: usize,
        /// The largest accepted size.
        max: u64,
    },
    /// An `envoy_ring_hash` ring size outside Envoy's range.
    #[error("{field} {value} is out of range: it must be from 1 to {max}")]
    RingSizeOutOfRange {
        /// `minimum_ring_size` or `maximum_ring_size`.
        field: &'static str,
        /// The rejected value.
        value: u64,
        /// The largest accepted value.
        max: u64,
    },
    /// `minimum_ring_size` above `maximum_ring_size`, which Envoy and gRPC
    /// refuse.
    #[error("minimum_ring_size {minimum} is above maximum_ring_size {maximum}: Envoy and gRPC refuse such a cluster")]
    RingSizesInverted {
        /// The minimum given.
        minimum: u64,
        /// The maximum given.
        maximum: u64,
    },
    /// An active node's share of an `envoy_ring_hash` ring is below one
    /// part in 2^31, the unit of the weights its xDS endpoints carry.
    #[error("node `{node}` has {weight} of the {total} total weight (weight × ramp), less than one part in 2^31, the smallest share an envoy_ring_hash endpoint can have: raise its weight or ramp, or lower the others'")]
    WeightShareTooSmall {
        /// The first such node in id order.
        node: String,
        /// Its weight × ramp.
        weight: u64,
        /// The active nodes' weight × ramp.
        total: u64,
    },
    /// Points per weight unit outside the accepted range.
    #[error("vnodes_per_weight {value} is out of range: it must be from 1 to {max}")]
    VnodesOutOfRange {
        /// The rejected value.
        value: u64,
        /// The largest accepted value.
        max: u32,
    },
    /// Replication factor outside the accepted range.
    #[error("replication_factor {value} is out of range: it must be from 1 to {max}")]
    ReplicationOutOfRange {
        /// The rejected value.
        value: u64,
        /// The largest accepted value.
        max: u32,
    },
    /// The node set would materialize more points, buckets or entries than allowed.
    #[error("the ring would hold {total} points, over the cap of {cap}: lower vnodes_per_weight or the weights")]
    TooManyPoints {
        /// What the node set asks for.
        total: u64,
        /// The documented cap.
        cap: u64,
    },
    /// `table` partitions that are not a power of two in range.
    #[error("partitions {value} is out of range: it must be a power of two from {min} to {max}")]
    PartitionsOutOfRange {
        /// The rejected value.
        value: u64,
        /// The fewest accepted.
        min: u32,
        /// The most accepted.
        max: u32,
    },
    /// A `table` ring's zone rule cannot be met at the zones' weights: a
    /// zone that must hold a replica of every partition would hold more
    /// than its weighted share, so its nodes would be loaded beyond their
    /// weight.
    #[error("zone `{zone}` has {weight} of the {total_weight} total weight, too little to hold one replica of every partition ({replicas} replicas per partition over {zones} zones need each zone to have at least 1/{replicas} of the weight, less 10%): give its nodes more weight, add nodes to it, or lower replication_factor below the number of zones")]
    ZoneTooLight {
        /// The zone.
        zone: String,
        /// Its active nodes' weight.
        weight: u64,
        /// All active nodes' weight.
        total_weight: u64,
        /// Replicas per partition.
        replicas: usize,
        /// Distinct zones.
        zones: usize,
    },
    /// A stored `table` does not fit the ring's nodes and config.
    #[error("partition table does not match the ring: {0}")]
    InvalidTable(String),
    /// A partition table would hold more cells than allowed.
    #[error("the table would hold {cells} replica slots (partitions × replicas), over the cap of {cap}: lower partitions or replication_factor")]
    TableTooLarge {
        /// What the config and node set ask for.
        cells: u64,
        /// The documented cap.
        cap: u64,
    },
    /// A ramp outside 1 ..= 65,536.
    #[error("ramp {ramp} is out of range: a ramp is parts per 65536, from 1 to 65536 (all in)")]
    RampOutOfRange {
        /// The rejected ramp.
        ramp: u64,
    },
    /// An active node has a ramp below full under an algorithm that has
    /// no ramps.
    #[error("node `{node}` has ramp {ramp}, but {algorithm} rings take no ramp (only ring, rendezvous and maglev do): leave it out")]
    RampNotSupported {
        /// The first such node in id order.
        node: String,
        /// Its ramp.
        ramp: u32,
        /// The ring's algorithm.
        algorithm: &'static str,
    },
    /// Zone awareness is on and an active node has no zone.
    #[error("zone_aware is on but active node `{0}` has no zone")]
    MissingZone(String),
    /// A persisted jump bucket order does not match the active node set.
    #[error("jump bucket order does not match the active nodes: {0}")]
    InvalidBucketOrder(String),
    /// A canonical encoding could not be decoded.
    #[error("placement encoding is invalid: {0}")]
    InvalidEncoding(&'static str),
}

/// Cuts user-supplied text down to a size that is safe to echo in a message.
pub(crate) fn excerpt(s: &str) -> String {
    s.chars().take(200).collect()
}
