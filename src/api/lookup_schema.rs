//! Schema-only shape of the body of `POST …/lookup`.
//!
//! The server parses [`super::inspection::LookupBatch`], whose `keys` and
//! `keys_b64` are both optional because exactly one of them must be
//! present and the parser names which rule a body breaks. The OpenAPI
//! document says the same thing as a `oneOf` of the two forms, so a
//! schema-valid body always carries exactly one.

use utoipa::ToSchema;

use super::schemas::{LookupKeysB64Schema, LookupKeysSchema, ReplicasSchema, VersionSchema};

/// The body of `POST …/lookup`: the keys as text (`keys`) or as base64
/// (`keys_b64`), exactly one.
#[derive(Debug, Clone, ToSchema)]
#[serde(untagged)]
#[schema(example = json!({"keys": ["user:1", "user:2"], "replicas": 2}))]
pub enum LookupBatchInput {
    /// Keys as text.
    Text(LookupTextKeys),
    /// Keys as base64.
    Base64(LookupBase64Keys),
}

/// Keys as text; their UTF-8 bytes are hashed.
#[derive(Debug, Clone, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LookupTextKeys {
    /// Up to 10,000 keys as text.
    #[schema(value_type = LookupKeysSchema)]
    pub keys: Vec<String>,
    /// How many distinct nodes to list per key; defaults to the ring's
    /// `replication_factor`.
    #[schema(value_type = Option<ReplicasSchema>)]
    pub replicas: Option<u32>,
    /// Look up in this retained version; defaults to the latest.
    #[schema(value_type = Option<VersionSchema>)]
    pub version: Option<u64>,
}

/// Keys as base64, for keys that are not UTF-8 text.
#[derive(Debug, Clone, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LookupBase64Keys {
    /// Up to 10,000 keys, each its bytes in standard base64.
    #[schema(value_type = LookupKeysB64Schema)]
    pub keys_b64: Vec<String>,
    /// How many distinct nodes to list per key; defaults to the ring's
    /// `replication_factor`.
    #[schema(value_type = Option<ReplicasSchema>)]
    pub replicas: Option<u32>,
    /// Look up in this retained version; defaults to the latest.
    #[schema(value_type = Option<VersionSchema>)]
    pub version: Option<u64>,
}
