//! Leases: the body of a registration and the answers of registering,
//! renewing and releasing.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::nodes::{NodeHealthName, NodeStateName};
#[cfg(feature = "server")]
use super::schema::{
    HashKeySchema, LabelsSchema, LeaseIdSchema, LeaseTtlSchema, NodeAddressSchema, WeightSchema,
    ZoneSchema,
};

/// The body of `PUT …/nodes/{node}/lease`: the node's record, as for
/// `PUT …/nodes/{node}`, plus the lease's `ttl`. Schema-only: the server
/// parses the record into a `NodeRecordSpec`.
#[derive(Debug, Clone, Default, Serialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "server", schema(example = json!({"address": "10.0.0.4:11211", "weight": 2, "ttl": "10s"})))]
#[serde(deny_unknown_fields)]
pub struct LeaseInput {
    /// Where clients reach the node: 1–255 characters, no spaces or
    /// control characters.
    #[cfg_attr(feature = "server", schema(value_type = Option<NodeAddressSchema>))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// Relative capacity, an integer from 1 to 1000000; defaults to 1.
    #[cfg_attr(feature = "server", schema(value_type = Option<WeightSchema>))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weight: Option<u64>,
    /// Failure domain.
    #[cfg_attr(feature = "server", schema(value_type = Option<ZoneSchema>))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
    /// Free-form metadata, as for `PUT …/nodes/{node}`. Not nullable: omit
    /// it for none.
    #[cfg_attr(feature = "server", schema(value_type = LabelsSchema, required = false))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    /// `active` (default), `draining` or `joining`, as for
    /// `PUT …/nodes/{node}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<NodeStateName>,
    /// Hashed instead of the id.
    #[cfg_attr(feature = "server", schema(value_type = Option<HashKeySchema>))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash_key: Option<String>,
    /// How long the lease lasts without a renewal; defaults to `10s`.
    #[cfg_attr(feature = "server", schema(value_type = Option<LeaseTtlSchema>))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttl: Option<String>,
}

/// A node's lease, as registering, renewing or releasing it answers.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct LeaseView {
    /// The ring.
    pub ring: String,
    /// The node.
    pub node: String,
    /// The lease's id: renew and release it by this.
    #[cfg_attr(feature = "server", schema(value_type = LeaseIdSchema))]
    pub lease_id: String,
    /// Its TTL, as `ttl` accepts it (`10s`).
    pub ttl: String,
    /// When it expires unless renewed.
    #[serde(with = "time::serde::rfc3339")]
    #[cfg_attr(feature = "server", schema(value_type = String, format = DateTime))]
    pub deadline: OffsetDateTime,
    /// The last registration or renewal.
    #[serde(with = "time::serde::rfc3339")]
    #[cfg_attr(feature = "server", schema(value_type = String, format = DateTime))]
    pub last_heartbeat: OffsetDateTime,
    /// The node's health now.
    pub health: NodeHealthName,
    /// The ring's version after the request.
    pub version: u64,
    /// Whether the request made a new version (a new or changed record).
    pub changed: bool,
}
