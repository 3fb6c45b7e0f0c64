//! Nodes and the validated domain types they are built from.

use super::json_integer::JsonU64;
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::error::{excerpt, PlacementError};
pub use super::ramp::{Ramp, RAMP_FULL};

/// Longest accepted node id, in bytes.
pub const MAX_NODE_ID_LEN: usize = 128;
/// Longest accepted `hash_key`, in bytes.
pub const MAX_HASH_KEY_LEN: usize = 255;
/// Longest accepted zone name, in bytes.
pub const MAX_ZONE_LEN: usize = 64;
/// Largest accepted weight.
pub const MAX_WEIGHT: u32 = 1_000_000;
/// Longest accepted node address, in bytes.
pub const MAX_ADDRESS_LEN: usize = 255;

/// Checks the id/zone character set: ASCII letters and digits, then also
/// `.`, `_`, `-` and `:` after the first character.
fn check_name(s: &str, max: usize) -> Result<(), &'static str> {
    if s.len() > max {
        return Err("too long");
    }
    let mut chars = s.chars();
    match chars.next() {
        None => return Err("must not be empty"),
        Some(c) if !c.is_ascii_alphanumeric() => {
            return Err("must start with an ASCII letter or digit")
        }
        Some(_) => {}
    }
    if chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | ':')) {
        Ok(())
    } else {
        Err("only ASCII letters, digits, '.', '_', '-' and ':' are allowed")
    }
}

/// A node's identity within a ring: 1–128 bytes of `[A-Za-z0-9._:-]`,
/// starting with a letter or digit.
///
/// Shared, not owned: a `jump` bucket order names a node once per bucket
/// (millions of times at high weights), so a copy is a reference count,
/// not an allocation.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(try_from = "String")]
pub struct NodeId(Arc<str>);

impl Serialize for NodeId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl NodeId {
    /// Validates `id`.
    pub fn new(id: impl Into<String>) -> Result<Self, PlacementError> {
        let id = id.into();
        if id.is_empty() {
            return Err(PlacementError::EmptyNodeId);
        }
        check_name(&id, MAX_NODE_ID_LEN).map_err(|reason| PlacementError::InvalidNodeId {
            id: excerpt(&id),
            reason,
        })?;
        Ok(Self(id.into()))
    }

    /// The id as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for NodeId {
    type Error = PlacementError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        Self::new(s)
    }
}

impl From<NodeId> for String {
    fn from(id: NodeId) -> Self {
        id.0.to_string()
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The bytes hashed to place a node: 1–255 bytes of UTF-8 without control
/// characters. Defaults to the node id; setting it lets a replacement
/// machine take over a dead one's exact positions.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct HashKey(String);

impl HashKey {
    /// Validates `key`.
    pub fn new(key: impl Into<String>) -> Result<Self, PlacementError> {
        let key = key.into();
        let reason: Option<Cow<'static, str>> = if key.is_empty() {
            Some("must not be empty".into())
        } else if key.len() > MAX_HASH_KEY_LEN {
            Some(format!("longer than {MAX_HASH_KEY_LEN} bytes").into())
        } else if key.chars().any(char::is_control) {
            Some("must not contain control characters".into())
        } else {
            None
        };
        match reason {
            Some(reason) => Err(PlacementError::InvalidHashKey {
                key: excerpt(&key),
                reason,
            }),
            None => Ok(Self(key)),
        }
    }

    /// The key as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for HashKey {
    type Error = PlacementError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        Self::new(s)
    }
}

impl From<HashKey> for String {
    fn from(k: HashKey) -> Self {
        k.0
    }
}

/// Where clients reach a node (`host:port`, a URL …): 1–255 bytes without
/// whitespace or control characters. Most algorithms never read it; those
/// that place a node by its address (as a proxy does, which knows its
/// servers only by address) hash it, and check there that it has the form
/// they need ([`Algorithm::places_by_address`](super::Algorithm::places_by_address)).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Address(Arc<str>);

impl Address {
    /// Validates `address`.
    pub fn new(address: impl Into<String>) -> Result<Self, PlacementError> {
        let address = address.into();
        if address.is_empty()
            || address.len() > MAX_ADDRESS_LEN
            || address.chars().any(|c| c.is_control() || c.is_whitespace())
        {
            return Err(PlacementError::InvalidAddress {
                address: excerpt(&address),
                reason: "1–255 bytes without spaces or control characters",
            });
        }
        Ok(Self(address.into()))
    }

    /// The address as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A failure domain (rack, availability zone): same character set as
/// [`NodeId`], 1–64 bytes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Zone(String);

impl Zone {
    /// Validates `zone`.
    pub fn new(zone: impl Into<String>) -> Result<Self, PlacementError> {
        let zone = zone.into();
        check_name(&zone, MAX_ZONE_LEN).map_err(|reason| PlacementError::InvalidZone {
            zone: excerpt(&zone),
            reason,
        })?;
        Ok(Self(zone))
    }

    /// The zone as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for Zone {
    type Error = PlacementError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        Self::new(s)
    }
}

impl From<Zone> for String {
    fn from(z: Zone) -> Self {
        z.0
    }
}

/// A node's relative capacity: an integer from 1 to [`MAX_WEIGHT`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "JsonU64", into = "u32")]
pub struct Weight(u32);

impl Weight {
    /// Weight 1.
    pub const ONE: Weight = Weight(1);

    /// Validates `w`.
    pub fn new(w: u64) -> Result<Self, PlacementError> {
        if w == 0 || w > u64::from(MAX_WEIGHT) {
            return Err(PlacementError::WeightOutOfRange {
                weight: w,
                max: MAX_WEIGHT,
            });
        }
        Ok(Self(w as u32))
    }

    /// The weight as an integer.
    pub fn get(self) -> u32 {
        self.0
    }
}

impl TryFrom<JsonU64> for Weight {
    type Error = PlacementError;
    fn try_from(w: JsonU64) -> Result<Self, Self::Error> {
        Self::new(w.0)
    }
}

impl TryFrom<u64> for Weight {
    type Error = PlacementError;
    fn try_from(w: u64) -> Result<Self, Self::Error> {
        Self::new(w)
    }
}

impl From<Weight> for u32 {
    fn from(w: Weight) -> Self {
        w.0
    }
}

impl Default for Weight {
    fn default() -> Self {
        Self::ONE
    }
}

/// Whether a node takes keys. Only active nodes own keys; a draining node
/// keeps its record so it can be re-activated or removed later, and a
/// joining node is in the record before it is activated. Placement sees
/// only active nodes, so a ring whose other nodes are draining or joining
/// places (and encodes) exactly as one without them.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum NodeState {
    /// Owns keys.
    #[default]
    Active,
    /// Owns no keys.
    Draining,
    /// Owns no keys yet: registered, waiting to be activated.
    Joining,
}

/// One member of a ring, as the placement core sees it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Node {
    /// Identity.
    pub id: NodeId,
    /// What is hashed instead of the id, if set.
    pub hash_key: Option<HashKey>,
    /// Relative capacity.
    pub weight: Weight,
    /// Failure domain, required when zone awareness is on.
    pub zone: Option<Zone>,
    /// Only active nodes own keys.
    pub state: NodeState,
    /// How much of its weight the node takes ([`Ramp::FULL`] unless a
    /// rollout is bringing it in or out).
    pub ramp: Ramp,
    /// Where clients reach the node; placed by only under the algorithms
    /// that place by address, and encoded only for them.
    pub address: Option<Address>,
}

impl Node {
    /// An active node of weight 1 with no zone and no hash key.
    pub fn new(id: NodeId) -> Self {
        Self {
            id,
            hash_key: None,
            weight: Weight::ONE,
            zone: None,
            state: NodeState::Active,
            ramp: Ramp::FULL,
            address: None,
        }
    }

    /// Sets the weight.
    pub fn with_weight(mut self, weight: Weight) -> Self {
        self.weight = weight;
        self
    }

    /// Sets the zone.
    pub fn with_zone(mut self, zone: Zone) -> Self {
        self.zone = Some(zone);
        self
    }

    /// Sets the hash key.
    pub fn with_hash_key(mut self, key: HashKey) -> Self {
        self.hash_key = Some(key);
        self
    }

    /// Sets the address.
    pub fn with_address(mut self, address: Address) -> Self {
        self.address = Some(address);
        self
    }

    /// Sets the state.
    pub fn with_state(mut self, state: NodeState) -> Self {
        self.state = state;
        self
    }

    /// Sets the ramp.
    pub fn with_ramp(mut self, ramp: Ramp) -> Self {
        self.ramp = ramp;
        self
    }

    /// `weight × ramp` (see [`Ramp::scale`]).
    pub fn scaled_weight(&self) -> u64 {
        self.ramp.scale(self.weight.get())
    }

    /// Whether this node owns keys.
    pub fn is_active(&self) -> bool {
        self.state == NodeState::Active
    }

    /// The bytes hashed to place this node: the hash key, else the id.
    pub fn label(&self) -> &str {
        self.hash_key
            .as_ref()
            .map_or(self.id.as_str(), HashKey::as_str)
    }
}

/// The smallest string in byte order that two of `keyed` share, with its
/// first two nodes in id order: how a node set names two nodes a proxy
/// would take for one (a shared address, a shared hash key).
pub(crate) fn first_shared<'a>(
    mut keyed: Vec<(&'a str, &'a Node)>,
) -> Option<(&'a str, &'a Node, &'a Node)> {
    keyed.sort_by(|a, b| a.0.cmp(b.0).then(a.1.id.cmp(&b.1.id)));
    keyed
        .windows(2)
        .find(|w| w[0].0 == w[1].0)
        .map(|w| (w[0].0, w[0].1, w[1].1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_key_refusals_say_what_is_wrong() {
        let long = "k".repeat(MAX_HASH_KEY_LEN + 1);
        let reason = |key: &str| match HashKey::new(key) {
            Err(PlacementError::InvalidHashKey { reason, .. }) => reason.into_owned(),
            other => panic!("expected InvalidHashKey, got {other:?}"),
        };
        assert_eq!(reason(""), "must not be empty");
        assert_eq!(reason(&long), "longer than 255 bytes");
        assert_eq!(reason("a\u{7}"), "must not contain control characters");
        assert!(HashKey::new("k".repeat(MAX_HASH_KEY_LEN)).is_ok());
    }
}
