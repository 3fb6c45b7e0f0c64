//! The path segments of the API (`{ring}`, `{node}`, `{version}`),
//! validated into domain types; a refusal names the segment.

use super::problem::{ApiError, ProblemKind};
use crate::placement::NodeId;
use crate::ring::RingName;

/// Validates the `{ring}` path parameter.
pub fn ring_name(s: &str) -> Result<RingName, ApiError> {
    RingName::new(s).map_err(|e| ApiError::invalid("ring", e.to_string()))
}

/// Validates the `{node}` path parameter.
pub fn node_id(s: &str) -> Result<NodeId, ApiError> {
    NodeId::new(s).map_err(|e| ApiError::invalid("node", e.to_string()))
}

/// Parses a `{version}` path parameter. Version 0 never exists.
pub fn version(s: &str) -> Result<u64, ApiError> {
    match s.parse::<u64>() {
        Ok(0) => Err(ApiError::new(
            ProblemKind::VersionNotFound,
            "version 0 does not exist: versions start at 1",
        )
        .with_field("version")),
        Ok(v) => Ok(v),
        Err(_) => Err(ApiError::invalid(
            "version",
            format!("version `{}` is not a positive integer", excerpt(s)),
        )),
    }
}

/// Checks an optional `version` query parameter the same way.
pub fn optional_version(v: Option<u64>) -> Result<Option<u64>, ApiError> {
    match v {
        Some(0) => Err(ApiError::new(
            ProblemKind::VersionNotFound,
            "version 0 does not exist: versions start at 1",
        )
        .with_field("version")),
        other => Ok(other),
    }
}

fn excerpt(s: &str) -> String {
    s.chars().take(100).collect()
}
