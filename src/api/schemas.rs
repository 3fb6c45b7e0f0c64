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

use utoipa::openapi::schema::{
    AdditionalProperties, ArrayBuilder, KnownFormat, ObjectBuilder, SchemaFormat, Type,
};
use utoipa::openapi::{Ref, RefOr, Schema};
use utoipa::{PartialSchema, ToSchema};

use super::keys::MAX_LOOKUP_KEYS;
use super::reason::MAX_REASON_LEN;
use crate::placement::config::{
    DEFAULT_REPLICATION_FACTOR, DEFAULT_TABLE_SIZE, DEFAULT_VNODES_PER_WEIGHT,
    MAX_REPLICATION_FACTOR, MAX_TABLE_SIZE, MAX_VNODES_PER_WEIGHT,
};
use crate::placement::node::{MAX_HASH_KEY_LEN, MAX_NODE_ID_LEN, MAX_WEIGHT, MAX_ZONE_LEN};
use crate::ring::durations::LONG_POLL_WAIT;
use crate::ring::{
    MAX_ADDRESS_LEN, MAX_CLIENT_ID_LEN, MAX_IDEMPOTENCY_KEY_LEN, MAX_LABELS, MAX_LABEL_KEY_LEN,
    MAX_LABEL_VALUE_LEN, MAX_OPS, MAX_RING_NAME_LEN,
};

/// Allowed client ids, for the OpenAPI descriptions.
pub const CLIENT_ID_RULES: &str = "Client id: 1–128 characters of `A-Z`, `a-z`, `0-9`, `.`, `_`, `-` and `:`, starting with a letter or digit (e.g. a host or pod name).";

/// Ring names: a lowercase letter or digit, then `[a-z0-9._-]`.
pub const RING_NAME_PATTERN: &str = "^[a-z0-9][a-z0-9._-]*$";
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
/// Idempotency keys: visible ASCII.
pub const IDEMPOTENCY_KEY_PATTERN: &str = "^[!-~]*$";
/// `If-Match`: `*` or one quoted version. Nineteen digits always fit a
/// u64; the server also takes twenty-digit ones up to 2^64-1.
pub const VERSION_TAG_PATTERN: &str = "^(\\*|\"[0-9]{1,19}\")$";
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

fn text(min: usize, max: usize, pattern: &str, description: impl Into<String>) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(Some(min))
        .max_length(Some(max))
        .pattern(Some(pattern))
        .description(Some(description))
}

fn integer(min: u64, max: u64, description: impl Into<String>) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .minimum(Some(min as usize))
        .maximum(Some(max as usize))
        .description(Some(description))
}

named_schema!(
    /// A ring name.
    RingNameSchema = "RingName",
    text(1, MAX_RING_NAME_LEN, RING_NAME_PATTERN, super::RING_NAME_RULES)
);

named_schema!(
    /// A node id.
    NodeIdSchema = "NodeId",
    text(1, MAX_NODE_ID_LEN, NODE_ID_PATTERN, super::NODE_ID_RULES)
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
    /// A client id.
    ClientIdSchema = "ClientId",
    text(
        1,
        MAX_CLIENT_ID_LEN,
        NODE_ID_PATTERN,
        CLIENT_ID_RULES
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
    /// The `Idempotency-Key` header.
    IdempotencyKeySchema = "IdempotencyKey",
    text(
        1,
        MAX_IDEMPOTENCY_KEY_LEN,
        IDEMPOTENCY_KEY_PATTERN,
        format!("1–{MAX_IDEMPOTENCY_KEY_LEN} visible ASCII characters, e.g. a UUID.")
    )
);

named_schema!(
    /// The `If-Match` header of a mutation.
    VersionTagSchema = "VersionTag",
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(VERSION_TAG_PATTERN))
        .description(Some("`\"<version>\"`, or `*` for any version."))
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
        .description(Some(crate::api::keys::BASE64_RULES))
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
    /// A placement table's bytes.
    PlacementTableSchema = "PlacementTable",
    ObjectBuilder::new()
        .schema_type(Type::String)
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Binary)))
        .description(Some(
            "The canonical binary encoding of a placement (docs/placement-spec.md); its SHA-256 is the fingerprint."
        ))
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

/// The `wait` values the server accepts: a whole number and a unit,
/// within [`LONG_POLL_WAIT`]. Each unit gets its own bound, so the pattern
/// says exactly what `parse_duration` and the bounds together allow. The
/// bounds' minimum is one millisecond, so every unit starts at 1, and a
/// unit too large to fit under the maximum once is left out.
pub fn wait_pattern() -> String {
    debug_assert_eq!(LONG_POLL_WAIT.min.as_millis(), 1, "every unit starts at 1");
    let ms = LONG_POLL_WAIT.max.as_millis() as u64;
    let units = [
        ("ms", ms),
        ("s?", ms / 1_000),
        ("m", ms / 60_000),
        ("h", ms / 3_600_000),
    ];
    let alternatives: Vec<String> = units
        .iter()
        .filter(|(_, max)| *max > 0)
        .map(|(unit, max)| format!("0*(?:{}){unit}", one_to(*max)))
        .collect();
    format!("^(?:{})$", alternatives.join("|"))
}

/// A regular expression for the decimal numbers from 1 to `n` (`n` ≥ 1),
/// without leading zeros (callers add `0*`).
fn one_to(n: u64) -> String {
    let digits: Vec<u32> = n
        .to_string()
        .chars()
        .map(|c| c.to_digit(10).expect("decimal digits"))
        .collect();
    let k = digits.len();
    let mut alternatives = Vec::new();
    // Every number with fewer digits than `n`.
    if k > 1 {
        alternatives.push(format!("[1-9][0-9]{{0,{}}}", k - 2));
    }
    // Numbers with as many digits, below `n`: equal to `n` up to digit
    // `i`, smaller there; the first digit is never 0.
    for i in 0..k {
        let low = if i == 0 { 1 } else { 0 };
        if digits[i] <= low {
            continue;
        }
        let prefix: String = digits[..i].iter().map(|d| d.to_string()).collect();
        let rest = k - 1 - i;
        let tail = if rest == 0 {
            String::new()
        } else {
            format!("[0-9]{{{rest}}}")
        };
        alternatives.push(format!("{prefix}[{low}-{}]{tail}", digits[i] - 1));
    }
    alternatives.push(n.to_string());
    alternatives.join("|")
}
