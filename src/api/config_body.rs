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
