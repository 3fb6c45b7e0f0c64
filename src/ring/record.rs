//! What a ring stores about each node.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::text::{escape_refused, RefusedChar};
use super::RingError;
pub use crate::placement::node::MAX_ADDRESS_LEN;
use crate::placement::{Address, HashKey, Node, NodeId, NodeState, Ramp, Weight, Zone};

/// Most labels a node may carry.
pub const MAX_LABELS: usize = 32;
/// Longest accepted label key, in bytes.
pub const MAX_LABEL_KEY_LEN: usize = 63;
/// Longest accepted label value, in bytes.
pub const MAX_LABEL_VALUE_LEN: usize = 255;

/// A node as registered by an operator: the placement inputs plus the
/// address clients connect to and free-form labels.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "NodeRecordSpec")]
pub struct NodeRecord {
    /// Identity within the ring.
    pub id: NodeId,
    /// Where clients reach the node (`host:port`, URL …); not interpreted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// Relative capacity.
    pub weight: Weight,
    /// Failure domain.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zone: Option<Zone>,
    /// Free-form metadata, not used by placement.
    pub labels: BTreeMap<String, String>,
    /// `active` nodes own keys; `draining` nodes keep their record only.
    pub state: NodeState,
    /// Hashed instead of the id, so a replacement can take over positions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash_key: Option<HashKey>,
    /// How much of its weight the node takes: below full only while a
    /// rollout brings it in or out. Not written when full, so versions
    /// without ramps read and write as they always did.
    #[serde(default, skip_serializing_if = "Ramp::is_full")]
    pub ramp: Ramp,
}

impl NodeRecord {
    /// A node with defaults: weight 1, active, no address, zone or labels.
    pub fn new(id: NodeId) -> Self {
        Self {
            id,
            address: None,
            weight: Weight::ONE,
            zone: None,
            labels: BTreeMap::new(),
            state: NodeState::Active,
            hash_key: None,
            ramp: Ramp::FULL,
        }
    }

    /// The placement core's view of this node.
    pub fn to_node(&self) -> Node {
        Node {
            id: self.id.clone(),
            hash_key: self.hash_key.clone(),
            weight: self.weight,
            zone: self.zone.clone(),
            state: self.state,
            ramp: self.ramp,
            // Every record is made by `into_record`, which checks its
            // address with the same rule.
            address: self.address.as_deref().and_then(|a| Address::new(a).ok()),
        }
    }
}

/// The wire form of a node: the body of `PUT …/nodes/{node}` (where `id`
/// comes from the path) and of an `upsert` op.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeRecordSpec {
    /// Required in an `upsert` op; taken from the path otherwise.
    pub id: Option<NodeId>,
    /// Defaults to none.
    pub address: Option<String>,
    /// Defaults to 1.
    pub weight: Option<Weight>,
    /// Defaults to none.
    pub zone: Option<Zone>,
    /// Defaults to none.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// Defaults to `active`.
    pub state: Option<NodeState>,
    /// Defaults to none (the id is hashed).
    pub hash_key: Option<HashKey>,
    /// Defaults to full (65,536).
    pub ramp: Option<Ramp>,
}

impl NodeRecordSpec {
    /// Validates the spec into a record, with `id` if the spec has none.
    pub fn into_record(self, id: Option<NodeId>) -> Result<NodeRecord, RingError> {
        let id = match (self.id, id) {
            (Some(body), Some(path)) if body != path => {
                return Err(RingError::IdMismatch { body, path });
            }
            (Some(id), _) | (None, Some(id)) => id,
            (None, None) => return Err(RingError::MissingNodeId),
        };
        if let Some(a) = &self.address {
            if Address::new(a.as_str()).is_err() {
                return Err(RingError::InvalidAddress(excerpt(a)));
            }
        }
        if self.labels.len() > MAX_LABELS {
            return Err(RingError::TooManyLabels(self.labels.len()));
        }
        for (k, v) in &self.labels {
            let key_ok = !k.is_empty()
                && k.len() <= MAX_LABEL_KEY_LEN
                && k.starts_with(|c: char| c.is_ascii_alphanumeric())
                && k.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/'));
            if !key_ok {
                return Err(RingError::InvalidLabelKey(excerpt(k)));
            }
            if v.len() > MAX_LABEL_VALUE_LEN || v.chars().any(char::is_control) {
                return Err(RingError::InvalidLabelValue(k.clone()));
            }
        }
        Ok(NodeRecord {
            id,
            address: self.address,
            weight: self.weight.unwrap_or(Weight::ONE),
            zone: self.zone,
            labels: self.labels,
            state: self.state.unwrap_or_default(),
            hash_key: self.hash_key,
            ramp: self.ramp.unwrap_or_default(),
        })
    }
}

impl NodeRecordSpec {
    /// Refuses characters that terminals and viewers act on (see
    /// [`is_refused_char`](super::text::is_refused_char)) in the node's
    /// free text: address, label values and hash key. Kept out of
    /// [`NodeRecordSpec::into_record`], which also decodes stored versions
    /// and snapshots sent to clients, so that versions stored before this
    /// rule still load; the CLI escapes what they hold.
    pub fn check_text(&self) -> Result<(), RingError> {
        let fields = self
            .address
            .as_deref()
            .map(|a| ("address".to_owned(), a))
            .into_iter()
            .chain(
                self.labels
                    .iter()
                    .map(|(k, v)| (format!("labels.{k}"), v.as_str())),
            )
            .chain(
                self.hash_key
                    .as_ref()
                    .map(|h| ("hash_key".to_owned(), h.as_str())),
            );
        for (field, text) in fields {
            if let Some(found) = RefusedChar::find(text) {
                return Err(RingError::RefusedChar { field, found });
            }
        }
        Ok(())
    }

    /// [`NodeRecordSpec::check_text`], then [`NodeRecordSpec::into_record`]:
    /// the rules for a node an operator sends.
    pub fn into_new_record(self, id: Option<NodeId>) -> Result<NodeRecord, RingError> {
        let text = self.check_text();
        // The other rules are reported first: label keys are ASCII by
        // rule, so a refused character in a value is then reported under
        // a key that is safe to name.
        let record = self.into_record(id)?;
        text.map(|()| record)
    }
}

/// At most 100 characters of `text`, with refused characters escaped, for
/// echoing it in an error message.
fn excerpt(text: &str) -> String {
    escape_refused(&text.chars().take(100).collect::<String>())
}

impl TryFrom<NodeRecordSpec> for NodeRecord {
    type Error = RingError;
    fn try_from(spec: NodeRecordSpec) -> Result<Self, Self::Error> {
        spec.into_record(None)
    }
}
