//! The `node` of an `upsert` op, as the OpenAPI document describes it.
//! Schema-only: `NodeRecordSpec` is what parses it. It lives apart from
//! both resources that name it (changes and nodes), so neither imports
//! the other.

use std::collections::BTreeMap;

use serde::Serialize;

use super::nodes::NodeStateName;
#[cfg(feature = "server")]
use super::schema::{
    HashKeySchema, LabelsSchema, NodeAddressSchema, NodeIdSchema, RampSchema, WeightSchema,
    ZoneSchema,
};

/// The `node` of an `upsert` op: the id and, optionally, every field of
/// [`NodeInput`]; unknown fields refused.
// The fields are written out again rather than `#[serde(flatten)]`ed from
// `NodeInput`: utoipa renders a flatten as `allOf`, and with each part
// closed to unknown fields (`additionalProperties: false`) JSON Schema
// would then refuse every body, since `id` is unknown to one part and the
// node's fields to the other.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "server", schema(example = json!({"id": "cache-d", "address": "10.0.0.5:11211", "weight": 1})))]
#[serde(deny_unknown_fields)]
pub struct UpsertNodeInput {
    /// The node: 1–128 characters of `[A-Za-z0-9._:-]`, starting with a
    /// letter or digit.
    #[cfg_attr(feature = "server", schema(value_type = NodeIdSchema))]
    pub id: String,
    /// Where clients reach the node: 1–255 characters, no spaces or
    /// control characters.
    #[cfg_attr(feature = "server", schema(value_type = Option<NodeAddressSchema>))]
    pub address: Option<String>,
    /// Relative capacity, an integer from 1 to 1000000; defaults to 1.
    #[cfg_attr(feature = "server", schema(value_type = Option<WeightSchema>))]
    pub weight: Option<u64>,
    /// Failure domain: 1–64 characters of `[A-Za-z0-9._:-]`, starting with a
    /// letter or digit.
    #[cfg_attr(feature = "server", schema(value_type = Option<ZoneSchema>))]
    pub zone: Option<String>,
    /// Up to 32 labels; keys are 1–63 characters of letters, digits, `.`,
    /// `_`, `-` and `/` starting with a letter or digit; values at most 255
    /// characters without control characters. Not nullable: omit it for
    /// none.
    #[cfg_attr(feature = "server", schema(value_type = LabelsSchema, required = false))]
    pub labels: Option<BTreeMap<String, String>>,
    /// `active` (default), `draining` or `joining`: a draining node keeps
    /// its record but owns no keys; a joining one is registered but owns
    /// nothing until made `active`.
    pub state: Option<NodeStateName>,
    /// Hashed instead of the id (1–255 bytes, no control characters), so a
    /// replacement node can take over a dead one's positions.
    #[cfg_attr(feature = "server", schema(value_type = Option<HashKeySchema>))]
    pub hash_key: Option<String>,
    /// Parts of 65,536 of its weight the node takes (`ring`, `rendezvous`
    /// and `maglev`); defaults to 65,536, all in. Rollouts set it.
    #[cfg_attr(feature = "server", schema(value_type = Option<RampSchema>))]
    pub ramp: Option<u32>,
}

/// The body of `PUT …/nodes/{node}`: every field optional, unknown fields
/// refused. The node id is the path's (a body `id` equal to it is
/// accepted too, which the schema leaves out).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "server", schema(example = json!({"address": "10.0.0.4:11211", "weight": 2, "zone": "eu-1a"})))]
#[serde(deny_unknown_fields)]
pub struct NodeInput {
    /// Where clients reach the node: 1–255 characters, no spaces or
    /// control characters.
    #[cfg_attr(feature = "server", schema(value_type = Option<NodeAddressSchema>))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// Relative capacity, an integer from 1 to 1000000; defaults to 1.
    #[cfg_attr(feature = "server", schema(value_type = Option<WeightSchema>))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weight: Option<u64>,
    /// Failure domain: 1–64 characters of `[A-Za-z0-9._:-]`, starting with a
    /// letter or digit.
    #[cfg_attr(feature = "server", schema(value_type = Option<ZoneSchema>))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
    /// Up to 32 labels; keys are 1–63 characters of letters, digits, `.`,
    /// `_`, `-` and `/` starting with a letter or digit; values at most 255
    /// characters without control characters. Not nullable: omit it for
    /// none.
    #[cfg_attr(feature = "server", schema(value_type = LabelsSchema, required = false))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    /// `active` (default), `draining` or `joining`: a draining node keeps
    /// its record but owns no keys; a joining one is registered but owns
    /// nothing until made `active`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<NodeStateName>,
    /// Hashed instead of the id (1–255 bytes, no control characters), so a
    /// replacement node can take over a dead one's positions.
    #[cfg_attr(feature = "server", schema(value_type = Option<HashKeySchema>))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash_key: Option<String>,
    /// Parts of 65,536 of its weight the node takes (`ring`, `rendezvous`
    /// and `maglev`); defaults to 65,536, all in. Rollouts set it.
    #[cfg_attr(feature = "server", schema(value_type = Option<RampSchema>))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ramp: Option<u32>,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::wire::{AckInput, AlgorithmName, RingConfigInput};

    /// The clients send these types, and the server refuses `null` where
    /// a field is not nullable: a field left unset must not be sent.
    #[test]
    fn request_bodies_leave_unset_fields_out() {
        let node = NodeInput {
            address: None,
            weight: Some(2),
            zone: None,
            labels: Some(BTreeMap::from([("tier".into(), "warm".into())])),
            state: None,
            hash_key: None,
            ramp: None,
        };
        assert_eq!(
            serde_json::to_value(node).unwrap(),
            json!({"weight": 2, "labels": {"tier": "warm"}})
        );
        let ring = RingConfigInput {
            algorithm: Some(AlgorithmName::Maglev),
            hash: None,
            vnodes_per_weight: None,
            table_size: Some(7),
            replication_factor: None,
            zone_aware: None,
            partitions: None,
            avalanche: None,
            hash_tag: None,
            minimum_ring_size: None,
            maximum_ring_size: None,
            membership: None,
        };
        assert_eq!(
            serde_json::to_value(ring).unwrap(),
            json!({"algorithm": "maglev", "table_size": 7})
        );
        let ack = AckInput {
            version: Some(3),
            fingerprint: Some("ab".into()),
            kind: None,
            failure: None,
        };
        assert_eq!(
            serde_json::to_value(ack).unwrap(),
            json!({"version": 3, "fingerprint": "ab"})
        );
    }
}
