//! The problem details body every error carries.

use serde::Serialize;
use utoipa::ToSchema;

/// An RFC 9457 problem details body.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[schema(example = json!({
    "type": "urn:ringd:problem:invalid-input",
    "title": "Invalid input",
    "status": 400,
    "detail": "weight 0 is out of range: weights are integers from 1 to 1000000",
    "field": "weight"
}))]
pub struct Problem {
    /// `urn:ringd:problem:<slug>`; stable, for programs to branch on.
    #[serde(rename = "type")]
    pub type_uri: String,
    /// Short summary of the problem kind.
    pub title: String,
    /// The HTTP status code.
    pub status: u16,
    /// What went wrong and how to fix it.
    pub detail: String,
    /// The offending input: a body path such as `ops[0].node.weight`, a
    /// path or query parameter, or a header name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// On 412 (and 409 for an existing ring): the ring's current version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_version: Option<u64>,
}
