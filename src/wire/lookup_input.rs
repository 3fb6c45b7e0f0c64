//! Schema-only shape of the body of `POST …/lookup`.
//!
//! The server parses [`LookupBatch`], whose `keys` and
//! `keys_b64` are both optional because exactly one of them must be
//! present and the parser names which rule a body breaks. The OpenAPI
//! document says the same thing as a `oneOf` of the two forms, so a
//! schema-valid body always carries exactly one.

use serde::{Deserialize, Serialize};

#[cfg(feature = "server")]
use super::schema::{LookupKeysB64Schema, LookupKeysSchema, ReplicasSchema, VersionSchema};
use crate::placement::json_integer;

/// The body of `POST …/lookup`: the keys as text (`keys`) or as base64
/// (`keys_b64`), exactly one.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(untagged)]
#[cfg_attr(feature = "server", schema(example = json!({"keys": ["user:1", "user:2"], "replicas": 2})))]
pub enum LookupBatchInput {
    /// Keys as text.
    Text(LookupTextKeys),
    /// Keys as base64.
    Base64(LookupBase64Keys),
}

/// Keys as text; their UTF-8 bytes are hashed.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct LookupTextKeys {
    /// Up to 10,000 keys as text.
    #[cfg_attr(feature = "server", schema(value_type = LookupKeysSchema))]
    pub keys: Vec<String>,
    /// How many distinct nodes to list per key; defaults to the ring's
    /// `replication_factor`.
    #[cfg_attr(feature = "server", schema(value_type = Option<ReplicasSchema>))]
    pub replicas: Option<u32>,
    /// Look up in this retained version; defaults to the latest.
    #[cfg_attr(feature = "server", schema(value_type = Option<VersionSchema>))]
    pub version: Option<u64>,
}

/// Keys as base64, for keys that are not UTF-8 text.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct LookupBase64Keys {
    /// Up to 10,000 keys, each its bytes in standard base64.
    #[cfg_attr(feature = "server", schema(value_type = LookupKeysB64Schema))]
    pub keys_b64: Vec<String>,
    /// How many distinct nodes to list per key; defaults to the ring's
    /// `replication_factor`.
    #[cfg_attr(feature = "server", schema(value_type = Option<ReplicasSchema>))]
    pub replicas: Option<u32>,
    /// Look up in this retained version; defaults to the latest.
    #[cfg_attr(feature = "server", schema(value_type = Option<VersionSchema>))]
    pub version: Option<u64>,
}

/// The body of `POST …/lookup`: the keys as `keys` or as `keys_b64`,
/// exactly one.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "server", schema(example = json!({"keys": ["user:1", "user:2"], "replicas": 2})))]
pub struct LookupBatch {
    /// Up to 10,000 keys as text; their UTF-8 bytes are hashed.
    #[serde(default)]
    #[cfg_attr(feature = "server", schema(value_type = Option<LookupKeysSchema>))]
    pub keys: Option<Vec<String>>,
    /// Instead of `keys`: up to 10,000 keys, each its bytes in standard
    /// base64 (RFC 4648 §4, `+` and `/`, padded with `=`), for keys that
    /// are not UTF-8 text.
    #[serde(default)]
    #[cfg_attr(feature = "server", schema(value_type = Option<LookupKeysB64Schema>))]
    pub keys_b64: Option<Vec<String>>,
    /// How many distinct nodes to list per key, 1–64; defaults to the
    /// ring's `replication_factor`.
    #[serde(default, deserialize_with = "json_integer::option")]
    #[cfg_attr(feature = "server", schema(value_type = Option<ReplicasSchema>))]
    pub replicas: Option<u32>,
    /// Look up in this retained version; defaults to the latest.
    #[serde(default, deserialize_with = "json_integer::option")]
    #[cfg_attr(feature = "server", schema(value_type = Option<VersionSchema>))]
    pub version: Option<u64>,
}
