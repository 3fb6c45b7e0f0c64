//! Named OpenAPI schemas for the bounded values of the API: names, ids,
//! weights, versions, free text and the wire formats that are not JSON.
//!
//! utoipa's attributes take only literals, so these schemas are built in
//! code from the very constants the validators use: the document cannot
//! state a limit the server does not enforce. Each type here exists only
//! to carry its schema (handlers parse into the domain types). Patterns are
//! written for both ECMA-262 (JSON Schema) and Rust's `regex`; the
//! `openapi_constraints` test checks each against its validator.
//!
//! The schemas are in one file per kind of value (`nodes`, `config`,
//! `durations`, `lookups`, `versions`) and re-exported here; the patterns
//! and builders they share, which the API's own schemas use too, are here.

mod config;
mod durations;
mod lookups;
mod nodes;
mod versions;

use utoipa::openapi::schema::{ObjectBuilder, Type};

pub use config::{
    ChangeRateSchema, MaximumRingSizeSchema, MinimumRingSizeSchema, PartitionsSchema,
    ReplicationFactorSchema, TableSizeSchema, UnhealthyFractionSchema, VnodesPerWeightSchema,
};
pub use durations::{
    GateTimeoutSchema, LeaseTtlSchema, MinDwellSchema, PolicyDelaySchema, WaitSchema,
};
pub use lookups::{KeyB64Schema, LookupKeysB64Schema, LookupKeysSchema, ReplicasSchema};
pub use nodes::{
    HashKeySchema, LabelsSchema, LeaseIdSchema, NodeAddressSchema, NodeIdSchema, RampSchema,
    WeightSchema, ZoneSchema,
};
pub use versions::{
    ChangeOpsSchema, ClientKindSchema, FingerprintSchema, ReasonSchema, VersionCursorSchema,
    VersionSchema,
};

/// Allowed node ids, for the OpenAPI descriptions.
pub const NODE_ID_RULES: &str = "Node id: 1–128 characters of `A-Z`, `a-z`, `0-9`, `.`, `_`, `-` and `:`, starting with a letter or digit.";

/// Node ids, zones and client ids: a letter or digit, then `[A-Za-z0-9._:-]`.
pub const NODE_ID_PATTERN: &str = "^[A-Za-z0-9][A-Za-z0-9._:-]*$";
/// Label keys: a letter or digit, then `[A-Za-z0-9._/-]`.
pub const LABEL_KEY_PATTERN: &str = "^[A-Za-z0-9][A-Za-z0-9._/-]*$";
/// Text without the characters free text refuses
/// ([`crate::ring::is_refused_char`]: Unicode category Cc, the line and
/// paragraph separators and the bidirectional controls), possibly empty.
pub const NO_CONTROL_PATTERN: &str =
    "^[^\\u0000-\\u001F\\u007F-\\u009F\\u061C\\u200E\\u200F\\u2028-\\u202E\\u2066-\\u2069]*$";
/// Standard base64 (RFC 4648 §4) with padding, canonical: the unused bits
/// of the last character are zero, as the server requires.
pub const BASE64_PATTERN: &str =
    "^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/][AQgw]==|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)?$";
/// Text without white space (`char::is_whitespace`: Unicode White_Space)
/// or the characters free text refuses, as node addresses are.
pub const ADDRESS_PATTERN: &str =
    "^[^\\u0000-\\u0020\\u007F-\\u00A0\\u061C\\u1680\\u2000-\\u200A\\u200E\\u200F\\u2028-\\u202F\\u205F\\u2066-\\u2069\\u3000]*$";
/// A placement fingerprint: SHA-256 as lowercase hex.
pub const FINGERPRINT_PATTERN: &str = "^[0-9a-f]{64}$";

/// Declares a type whose only purpose is to carry a named schema. Its
/// paths are absolute so that a module using it needs no imports for it.
macro_rules! named_schema {
    ($(#[$doc:meta])* $ty:ident = $name:literal, $build:expr) => {
        $(#[$doc])*
        pub struct $ty;

        impl ::utoipa::PartialSchema for $ty {
            fn schema() -> ::utoipa::openapi::RefOr<::utoipa::openapi::Schema> {
                let schema: ::utoipa::openapi::Schema = $build.into();
                schema.into()
            }
        }

        impl ::utoipa::ToSchema for $ty {
            fn name() -> ::std::borrow::Cow<'static, str> {
                ::std::borrow::Cow::Borrowed($name)
            }
        }
    };
}
pub(crate) use named_schema;

pub(crate) fn text(
    min: usize,
    max: usize,
    pattern: &str,
    description: impl Into<String>,
) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(Some(min))
        .max_length(Some(max))
        .pattern(Some(pattern))
        .description(Some(description))
}

pub(crate) fn integer(min: u64, max: u64, description: impl Into<String>) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .minimum(Some(min as usize))
        .maximum(Some(max as usize))
        .description(Some(description))
}
