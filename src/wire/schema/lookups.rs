//! The named schemas of a lookup's inputs: the preference-list length and
//! the keys, as text or as base64.

use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Type};

use super::{integer, named_schema, BASE64_PATTERN};
use crate::placement::config::MAX_REPLICATION_FACTOR;
use crate::wire::limits::{BASE64_RULES, MAX_LOOKUP_KEYS};

named_schema!(
    /// A preference-list length.
    ReplicasSchema = "Replicas",
    integer(
        1,
        MAX_REPLICATION_FACTOR.into(),
        format!("How many distinct nodes to list, 1–{MAX_REPLICATION_FACTOR}; defaults to the ring's `replication_factor`.")
    )
);

named_schema!(
    /// The keys of a batch lookup.
    LookupKeysSchema = "LookupKeys",
    ArrayBuilder::new()
        .items(ObjectBuilder::new().schema_type(Type::String))
        .max_items(Some(MAX_LOOKUP_KEYS))
        .description(Some(format!("Up to {MAX_LOOKUP_KEYS} keys; their UTF-8 bytes are hashed.")))
);

named_schema!(
    /// A key's bytes in standard, padded, canonical base64.
    KeyB64Schema = "KeyB64",
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(BASE64_PATTERN))
        .description(Some(BASE64_RULES))
);

named_schema!(
    /// The keys of a batch lookup, as base64.
    LookupKeysB64Schema = "LookupKeysB64",
    ArrayBuilder::new()
        .items(KeyB64Schema::schema())
        .max_items(Some(MAX_LOOKUP_KEYS))
        .description(Some(format!(
            "Up to {MAX_LOOKUP_KEYS} keys, each its bytes in standard base64."
        )))
);
