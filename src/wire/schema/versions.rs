//! The named schemas of versions and changes: a version, a client's
//! version cursor, a placement fingerprint, a change's reason and ops, and
//! the kind of client that acks a version.

use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Type};
use utoipa::openapi::Ref;

use super::{integer, named_schema, text, FINGERPRINT_PATTERN, NO_CONTROL_PATTERN};
use crate::ring::MAX_OPS;
use crate::wire::limits::MAX_REASON_LEN;

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
