//! Named OpenAPI schemas for the bounded values of the API: names, ids,
//! weights, versions, free text and the wire formats that are not JSON.
//!
//! utoipa's attributes take only literals, so these schemas are built in
//! code from the very constants the validators use: the document cannot
//! state a limit the server does not enforce. Each type here exists only
//! to carry its schema (handlers parse into the domain types). Patterns are
//! written for both ECMA-262 (JSON Schema) and Rust's `regex`; the
//! `openapi_constraints` test checks each against its validator.

use std::borrow::Cow;

use utoipa::openapi::schema::{AdditionalProperties, ArrayBuilder, ObjectBuilder, Type};
use utoipa::openapi::{Ref, RefOr, Schema};
use utoipa::{PartialSchema, ToSchema};

use super::duration::{duration_pattern, wait_pattern};
use super::limits::{BASE64_RULES, MAX_LOOKUP_KEYS, MAX_REASON_LEN};
use crate::placement::config::{
    DEFAULT_PARTITIONS, DEFAULT_REPLICATION_FACTOR, DEFAULT_TABLE_SIZE, DEFAULT_VNODES_PER_WEIGHT,
    MAX_PARTITIONS, MAX_REPLICATION_FACTOR, MAX_TABLE_SIZE, MAX_VNODES_PER_WEIGHT, MIN_PARTITIONS,
};
use crate::placement::node::{
    MAX_HASH_KEY_LEN, MAX_NODE_ID_LEN, MAX_WEIGHT, MAX_ZONE_LEN, RAMP_FULL,
};
use crate::ring::durations::{DEFAULT_LEASE_TTL, LEASE_TTL, LONG_POLL_WAIT};
use crate::ring::membership_policy::{MAX_AUTO_CHANGES_PER_MINUTE, POLICY_DELAY};
use crate::ring::LEASE_ID_LEN;
use crate::ring::{MAX_ADDRESS_LEN, MAX_LABELS, MAX_LABEL_KEY_LEN, MAX_LABEL_VALUE_LEN, MAX_OPS};

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

/// Declares a type whose only purpose is to carry a named schema.
macro_rules! named_schema {
    ($(#[$doc:meta])* $ty:ident = $name:literal, $build:expr) => {
        $(#[$doc])*
        pub struct $ty;

        impl PartialSchema for $ty {
            fn schema() -> RefOr<Schema> {
                let schema: Schema = $build.into();
                schema.into()
            }
        }

        impl ToSchema for $ty {
            fn name() -> Cow<'static, str> {
                Cow::Borrowed($name)
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

named_schema!(
    /// A node id.
    NodeIdSchema = "NodeId",
    text(1, MAX_NODE_ID_LEN, NODE_ID_PATTERN, NODE_ID_RULES)
);

named_schema!(
    /// A zone.
    ZoneSchema = "Zone",
    text(
        1,
        MAX_ZONE_LEN,
        NODE_ID_PATTERN,
        format!("Failure domain: the node-id characters, at most {MAX_ZONE_LEN} of them.")
    )
);

named_schema!(
    /// A node's hash key.
    HashKeySchema = "HashKey",
    text(
        1,
        MAX_HASH_KEY_LEN,
        NO_CONTROL_PATTERN,
        format!("Hashed instead of the node id: 1–{MAX_HASH_KEY_LEN} bytes of UTF-8 (a character outside ASCII counts 2–4), no control characters.")
    )
);

named_schema!(
    /// A node's address.
    NodeAddressSchema = "NodeAddress",
    text(
        1,
        MAX_ADDRESS_LEN,
        ADDRESS_PATTERN,
        format!("Where clients reach the node, not interpreted: 1–{MAX_ADDRESS_LEN} bytes of UTF-8 without white space or control characters.")
    )
);

named_schema!(
    /// A node's labels.
    LabelsSchema = "Labels",
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .max_properties(Some(MAX_LABELS))
        .property_names(Some(text(
            1,
            MAX_LABEL_KEY_LEN,
            LABEL_KEY_PATTERN,
            format!("1–{MAX_LABEL_KEY_LEN} characters of letters, digits, `.`, `_`, `-` and `/`, starting with a letter or digit.")
        )))
        .additional_properties(Some(AdditionalProperties::RefOr(RefOr::T(Schema::Object(
            text(
                0,
                MAX_LABEL_VALUE_LEN,
                NO_CONTROL_PATTERN,
                format!("At most {MAX_LABEL_VALUE_LEN} bytes of UTF-8, no control characters.")
            )
            .build()
        )))))
        .description(Some(format!(
            "Free-form metadata, not used by placement: at most {MAX_LABELS} labels."
        )))
);

named_schema!(
    /// A node weight.
    WeightSchema = "Weight",
    integer(1, MAX_WEIGHT.into(), format!("Relative capacity, an integer from 1 to {MAX_WEIGHT}."))
);

named_schema!(
    /// A node's ramp.
    RampSchema = "Ramp",
    integer(1, RAMP_FULL.into(), format!("How much of its weight the node takes, in parts of {RAMP_FULL}: below {RAMP_FULL} only while a rollout brings it in or out (`ring`, `rendezvous` and `maglev` only); omitted when full."))
);

named_schema!(
    /// A ring version.
    VersionSchema = "Version",
    integer(1, u64::MAX, "A ring version: versions start at 1.")
);

named_schema!(
    /// A version a client holds, 0 for none.
    VersionCursorSchema = "VersionCursor",
    integer(
        0,
        u64::MAX,
        "The version the client holds (0 for none): the answer starts after it."
    )
);

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
    /// `ring`'s points per unit of weight.
    VnodesPerWeightSchema = "VnodesPerWeight",
    integer(
        1,
        MAX_VNODES_PER_WEIGHT.into(),
        format!("`ring`: points per unit of weight, 1–{MAX_VNODES_PER_WEIGHT}; defaults to {DEFAULT_VNODES_PER_WEIGHT}.")
    )
);

named_schema!(
    /// Maglev's table size.
    TableSizeSchema = "TableSize",
    integer(
        2,
        MAX_TABLE_SIZE,
        format!("`maglev`: the lookup table size, a prime of at least the active node count and at most {MAX_TABLE_SIZE} (checked only for `maglev`); defaults to {DEFAULT_TABLE_SIZE}.")
    )
);

named_schema!(
    /// `table`'s partition count.
    PartitionsSchema = "Partitions",
    integer(
        MIN_PARTITIONS.into(),
        MAX_PARTITIONS.into(),
        format!("`table`: the number of partitions, a power of two from {MIN_PARTITIONS} to {MAX_PARTITIONS}; defaults to {DEFAULT_PARTITIONS}.")
    )
    .enum_values(Some(
        (MIN_PARTITIONS.trailing_zeros()..=MAX_PARTITIONS.trailing_zeros()).map(|b| 1u64 << b)
    ))
);

named_schema!(
    /// A default preference-list length.
    ReplicationFactorSchema = "ReplicationFactor",
    integer(
        1,
        MAX_REPLICATION_FACTOR.into(),
        format!("Default preference-list length, 1–{MAX_REPLICATION_FACTOR}; defaults to {DEFAULT_REPLICATION_FACTOR}.")
    )
);

named_schema!(
    /// A change's reason.
    ReasonSchema = "Reason",
    text(
        0,
        MAX_REASON_LEN,
        NO_CONTROL_PATTERN,
        format!("Free-text reason recorded in the version: at most {MAX_REASON_LEN} bytes of UTF-8, no control characters.")
    )
);

named_schema!(
    /// What kind of program acks.
    ClientKindSchema = "ClientKind",
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(["library", "proxy"]))
        .description(Some(
            "`library`: an application that routes keys with a client library; `proxy`: a proxy whose configuration `ringd sync` rewrites and reloads."
        ))
);

named_schema!(
    /// A placement fingerprint.
    FingerprintSchema = "Fingerprint",
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(FINGERPRINT_PATTERN))
        .description(Some(
            "SHA-256 of the placement's canonical encoding: 64 lowercase hex digits."
        ))
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

named_schema!(
    /// The ops of a change.
    ChangeOpsSchema = "ChangeOps",
    ArrayBuilder::new()
        .items(Ref::from_schema_name("OpInput"))
        .min_items(Some(1))
        .max_items(Some(MAX_OPS))
        .description(Some(format!(
            "Applied in order as one new version; 1–{MAX_OPS} ops. Each op is an object with `\"op\"` set to `upsert`, `remove` or `set_config`."
        )))
);

named_schema!(
    /// A long-poll's `wait`.
    WaitSchema = "Wait",
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(wait_pattern()))
        .description(Some(format!(
            "How long to wait for a newer version: a whole number of `ms`, `s` (the default unit), `m` or `h`, {}.",
            LONG_POLL_WAIT.range()
        )))
);

named_schema!(
    /// A lease id.
    LeaseIdSchema = "LeaseId",
    text(
        LEASE_ID_LEN,
        LEASE_ID_LEN,
        "^[0-9a-f]{32}$",
        format!("A lease's id, as its registration answered: {LEASE_ID_LEN} lowercase hexadecimal digits.")
    )
);

named_schema!(
    /// A lease's `ttl`.
    LeaseTtlSchema = "LeaseTtl",
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(duration_pattern(&LEASE_TTL)))
        .description(Some(format!(
            "How long a lease lasts without a renewal: a whole number of `ms`, `s` (the default unit), `m` or `h`, {}; default {}.",
            LEASE_TTL.range(),
            crate::ring::durations::format_duration(DEFAULT_LEASE_TTL)
        )))
);

named_schema!(
    /// A membership policy delay (`activate_after`, `drain_after`,
    /// `forget_after`), or `null` for off.
    PolicyDelaySchema = "PolicyDelay",
    ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::SchemaType::from_iter([Type::String, Type::Null]))
        .pattern(Some(duration_pattern(&POLICY_DELAY)))
        .description(Some(format!(
            "A whole number of `ms`, `s` (the default unit), `m` or `h`, {}; `null`: off.",
            POLICY_DELAY.range()
        )))
);

named_schema!(
    /// A rollout's `min_dwell`.
    MinDwellSchema = "MinDwell",
    ObjectBuilder::new()
        .schema_type(Type::String)
        // Zero, in any unit, is allowed too (the default: no dwell).
        .pattern(Some(format!(
            "^(?:0+(?:ms|s?|m|h)|{})$",
            duration_pattern(&crate::ring::rollout::MIN_DWELL)
                .trim_start_matches('^')
                .trim_end_matches('$')
        )))
        .description(Some(format!(
            "Shortest time between a step's commit and the next step: a whole number of `ms`, `s` (the default unit), `m` or `h`, {}; default `0s`.",
            crate::ring::rollout::MIN_DWELL.range()
        )))
);

named_schema!(
    /// A rollout's `gate_timeout`.
    GateTimeoutSchema = "GateTimeout",
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(duration_pattern(&crate::ring::rollout::GATE_TIMEOUT)))
        .description(Some(format!(
            "How long a step waits for its gate: a whole number of `ms`, `s` (the default unit), `m` or `h`, {}; default {}.",
            crate::ring::rollout::GATE_TIMEOUT.range(),
            crate::ring::durations::format_duration(crate::ring::rollout::DEFAULT_GATE_TIMEOUT)
        )))
);

named_schema!(
    /// `max_unhealthy_fraction`.
    UnhealthyFractionSchema = "UnhealthyFraction",
    ObjectBuilder::new()
        .schema_type(Type::Number)
        .exclusive_minimum(Some(0.0))
        .maximum(Some(1.0))
        .description(Some(
            "No automatic drain or removal while more than this share of the ring's leased nodes is unhealthy: above 0, at most 1; default 0.5."
        ))
);

named_schema!(
    /// `max_auto_changes_per_minute`.
    ChangeRateSchema = "ChangeRate",
    integer(
        1,
        MAX_AUTO_CHANGES_PER_MINUTE as u64,
        format!("At most this many automatic changes a minute: 1 to {MAX_AUTO_CHANGES_PER_MINUTE}; default 10.")
    )
);
