//! Named OpenAPI schemas of the values only the API's paths and headers
//! carry: ring names, client ids, `Idempotency-Key`, `If-Match` and the
//! placement table. The schemas the bodies name are in
//! [`crate::wire::schema`], built the same way from the validators'
//! constants.

use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, SchemaFormat, Type};

use crate::ring::{MAX_CLIENT_ID_LEN, MAX_IDEMPOTENCY_KEY_LEN, MAX_RING_NAME_LEN};
pub use crate::wire::duration::wait_pattern;
use crate::wire::schema::{named_schema, text};
pub use crate::wire::schema::{
    ADDRESS_PATTERN, BASE64_PATTERN, FINGERPRINT_PATTERN, LABEL_KEY_PATTERN, NODE_ID_PATTERN,
    NO_CONTROL_PATTERN,
};

/// Ring names: a lowercase letter or digit, then `[a-z0-9._-]`.
pub const RING_NAME_PATTERN: &str = "^[a-z0-9][a-z0-9._-]*$";
/// Idempotency keys: visible ASCII.
pub const IDEMPOTENCY_KEY_PATTERN: &str = "^[!-~]*$";
/// `If-Match`: `*` or one quoted version. Nineteen digits always fit a
/// u64; the server also takes twenty-digit ones up to 2^64-1.
pub const VERSION_TAG_PATTERN: &str = "^(\\*|\"[0-9]{1,19}\")$";

/// Allowed client ids, for the OpenAPI descriptions.
pub const CLIENT_ID_RULES: &str = "Client id: 1–128 characters of `A-Z`, `a-z`, `0-9`, `.`, `_`, `-` and `:`, starting with a letter or digit (e.g. a host or pod name).";

named_schema!(
    /// A ring name.
    RingNameSchema = "RingName",
    text(1, MAX_RING_NAME_LEN, RING_NAME_PATTERN, crate::api::RING_NAME_RULES)
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
    /// A placement table's bytes.
    PlacementTableSchema = "PlacementTable",
    ObjectBuilder::new()
        .schema_type(Type::String)
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Binary)))
        .description(Some(
            "The canonical binary encoding of a placement (docs/placement-spec.md); its SHA-256 is the fingerprint."
        ))
);
