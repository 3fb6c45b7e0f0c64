//! The `membership` object of a config body, split off before the rest is
//! parsed as the placement config: the two are validated by their own
//! domain types, and each refusal still names its field's full path.

use serde_json::Value;

use super::extract::from_value;
use super::problem::ApiError;
use crate::ring::MembershipPolicySpec;

/// Takes `membership` out of the config object `value` (found at
/// `prefix`, empty for a whole body) and parses it. A value that is not an
/// object is returned as it is, for the placement parser to refuse.
pub(super) fn split_membership(
    mut value: Value,
    prefix: &str,
) -> Result<(Value, Option<MembershipPolicySpec>), ApiError> {
    let Value::Object(fields) = &mut value else {
        return Ok((value, None));
    };
    let Some(policy) = fields.remove("membership") else {
        return Ok((value, None));
    };
    let here = if prefix.is_empty() {
        "membership".to_owned()
    } else {
        format!("{prefix}.membership")
    };
    let spec: Option<MembershipPolicySpec> = from_value(policy, &here)?;
    Ok((value, spec))
}

/// The fields of the placement config, as serde lists them when it
/// refuses an unknown one (those of `RingConfigSpec`, in its order).
const PLACEMENT_FIELDS: &str = "`algorithm`, `hash`, `vnodes_per_weight`, `table_size`, \
                                `replication_factor`, `zone_aware`, `partitions`, `avalanche`, `hash_tag`, \
                                `minimum_ring_size`, `maximum_ring_size`";

/// `err`, a refusal of the placement part of a config body, with
/// `membership` added to the fields it lists when it refuses an unknown
/// field. The body accepts `membership`, but [`split_membership`] takes it
/// out before the placement parser runs, so that parser's list leaves it
/// out, and a client going by the list would think it unknown too.
pub(super) fn listing_membership(mut err: ApiError) -> ApiError {
    if err.detail.ends_with(PLACEMENT_FIELDS) {
        err.detail.push_str(", `membership`");
    }
    err
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::RingConfigSpec;

    /// `listing_membership` finds the refusal by its list, so the list
    /// must be the one serde writes for `RingConfigSpec`.
    #[test]
    fn the_placement_fields_are_those_serde_lists() {
        let err =
            serde_json::from_value::<RingConfigSpec>(serde_json::json!({"colour": 1})).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("unknown field `colour`, expected one of {PLACEMENT_FIELDS}")
        );
    }

    #[test]
    fn an_unknown_field_lists_membership_too() {
        let err = ApiError::invalid(
            "colour",
            format!("invalid value at `colour`: unknown field `colour`, expected one of {PLACEMENT_FIELDS}"),
        );
        assert_eq!(
            listing_membership(err).detail,
            "invalid value at `colour`: unknown field `colour`, expected one of `algorithm`, \
             `hash`, `vnodes_per_weight`, `table_size`, `replication_factor`, `zone_aware`, \
             `partitions`, `avalanche`, `hash_tag`, `minimum_ring_size`, `maximum_ring_size`, \
             `membership`"
        );
        let other = ApiError::invalid(
            "hash",
            "invalid value at `hash`: unknown hash function `crc32`",
        );
        assert_eq!(listing_membership(other.clone()).detail, other.detail);
    }
}
