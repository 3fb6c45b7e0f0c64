//! The free-text `reason` a mutation may carry, checked the same way
//! wherever it arrives (a change body or a node mutation's query).

use super::problem::ApiError;
use crate::ring::{RefusedChar, RingError};

pub use crate::wire::limits::MAX_REASON_LEN;

/// Checks a free-text reason: its length, and no character that
/// terminals act on (see [`crate::ring::is_refused_char`]).
pub fn check_reason(reason: &Option<String>) -> Result<(), ApiError> {
    let Some(r) = reason else { return Ok(()) };
    if r.len() > MAX_REASON_LEN {
        return Err(ApiError::invalid(
            "reason",
            format!(
                "reason is {} bytes; at most {MAX_REASON_LEN} are kept",
                r.len()
            ),
        ));
    }
    match RefusedChar::find(r) {
        Some(found) => Err(RingError::RefusedChar {
            field: "reason".into(),
            found,
        }
        .into()),
        None => Ok(()),
    }
}
