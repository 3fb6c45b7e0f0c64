//! The problem details body every error carries.

use serde::{Deserialize, Serialize};

/// An RFC 9457 problem details body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "server", schema(example = json!({
    "type": "urn:ringd:problem:invalid-input",
    "title": "Invalid input",
    "status": 400,
    "detail": "weight 0 is out of range: weights are integers from 1 to 1000000",
    "field": "weight"
})))]
pub struct Problem {
    /// `urn:ringd:problem:<slug>`; stable, for programs to branch on.
    // Decoding is lenient about the descriptive members, so a problem from
    // a proxy or an older server still reaches the caller with its status.
    #[serde(rename = "type", default)]
    #[cfg_attr(feature = "server", schema(required = true))]
    pub type_uri: String,
    /// Short summary of the problem kind.
    #[serde(default)]
    #[cfg_attr(feature = "server", schema(required = true))]
    pub title: String,
    /// The HTTP status code.
    pub status: u16,
    /// What went wrong and how to fix it.
    #[serde(default)]
    #[cfg_attr(feature = "server", schema(required = true))]
    pub detail: String,
    /// The offending input: a body path such as `ops[0].node.weight`, a
    /// path or query parameter, or a header name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// On 412 (and 409 for an existing ring): the ring's current version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_version: Option<u64>,
    /// On 422 `unsatisfiable`: why, for programs to branch on (for
    /// example `zone_too_light`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Not a member of the document: the whole seconds of the response's
    /// `Retry-After` header, which a refused watch carries (503 at
    /// capacity) and the client reads into here, so that whoever handles
    /// the problem knows when to come back.
    #[serde(skip)]
    pub retry_after: Option<u64>,
}

/// The prefix of every problem type URI.
pub const PROBLEM_TYPE_PREFIX: &str = "urn:ringd:problem:";

impl Problem {
    /// The slug after `urn:ringd:problem:` (e.g. `ring-not-found`).
    pub fn slug(&self) -> &str {
        self.type_uri
            .strip_prefix(PROBLEM_TYPE_PREFIX)
            .unwrap_or(&self.type_uri)
    }
}

/// `404 (ring-not-found): no ring named `a` [field: ring]`: the status,
/// the slug and the detail (the title when there is no detail).
impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let detail = if self.detail.is_empty() {
            &self.title
        } else {
            &self.detail
        };
        write!(f, "{} ({}): {}", self.status, self.slug(), detail)?;
        if let Some(field) = &self.field {
            write!(f, " [field: {field}]")?;
        }
        Ok(())
    }
}
