//! The named schemas of a node record's fields (id, zone, hash key,
//! address, labels, weight, ramp) and of the lease a self-registered node
//! holds.

use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, Type};
use utoipa::openapi::{RefOr, Schema};

use super::{
    integer, named_schema, text, ADDRESS_PATTERN, LABEL_KEY_PATTERN, NODE_ID_PATTERN,
    NODE_ID_RULES, NO_CONTROL_PATTERN,
};
use crate::placement::node::{
    MAX_HASH_KEY_LEN, MAX_NODE_ID_LEN, MAX_WEIGHT, MAX_ZONE_LEN, RAMP_FULL,
};
use crate::ring::LEASE_ID_LEN;
use crate::ring::{MAX_ADDRESS_LEN, MAX_LABELS, MAX_LABEL_KEY_LEN, MAX_LABEL_VALUE_LEN};

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
    /// A lease id.
    LeaseIdSchema = "LeaseId",
    text(
        LEASE_ID_LEN,
        LEASE_ID_LEN,
        "^[0-9a-f]{32}$",
        format!("A lease's id, as its registration answered: {LEASE_ID_LEN} lowercase hexadecimal digits.")
    )
);
