//! What can go wrong between a client and ringd.

use serde::Deserialize;
use thiserror::Error;

/// An RFC 9457 problem document as ringd sends it with every error.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Problem {
    /// `urn:ringd:problem:<slug>`.
    #[serde(rename = "type", default)]
    pub kind: String,
    /// Short summary of the kind of problem.
    #[serde(default)]
    pub title: String,
    /// The HTTP status.
    pub status: u16,
    /// What to fix, for a person.
    #[serde(default)]
    pub detail: String,
    /// For input errors, the JSON path of the offending field.
    #[serde(default)]
    pub field: Option<String>,
    /// For 409/412: the ring's version at the time.
    #[serde(default)]
    pub current_version: Option<u64>,
}

impl Problem {
    /// The slug after `urn:ringd:problem:` (e.g. `ring-not-found`).
    pub fn slug(&self) -> &str {
        self.kind
            .strip_prefix("urn:ringd:problem:")
            .unwrap_or(&self.kind)
    }
}

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

/// Why a client call failed.
#[derive(Debug, Error)]
pub enum ClientError {
    /// The client was built without any server URL, or with a malformed one.
    #[error("invalid server URL `{0}`: use http://host:port (several may be given)")]
    InvalidUrl(String),
    /// The ring name is invalid.
    #[error(transparent)]
    InvalidRing(#[from] crate::ring::RingError),
    /// The client id breaks the naming rules.
    #[error(transparent)]
    InvalidClientId(#[from] crate::ring::InvalidClientId),
    /// A setting is out of range.
    #[error("{0}")]
    InvalidSetting(String),
    /// ringd answered with a problem document.
    #[error("ringd refused the request: {0}")]
    Problem(Problem),
    /// ringd answered with an error status but no problem document.
    #[error("ringd answered {status} from {url}")]
    Status {
        /// The status.
        status: u16,
        /// The URL asked.
        url: String,
    },
    /// No server could be reached (every URL was tried).
    #[error("no ringd server reachable ({urls}): {last}")]
    Unreachable {
        /// The URLs tried, comma-separated.
        urls: String,
        /// The last transport error.
        last: String,
    },
    /// A response body that is not what the API documents.
    #[error("unexpected response from ringd: {0}")]
    Decode(String),
    /// A snapshot whose placement does not hash to its stated fingerprint:
    /// it was corrupted or tampered with on the way, or the server and this
    /// client disagree on the placement rules. It is never routed on.
    #[error("snapshot {ring} v{version} failed verification: it states fingerprint {stated} but its placement hashes to {computed}")]
    FingerprintMismatch {
        /// The ring.
        ring: String,
        /// The version.
        version: u64,
        /// What the snapshot says.
        stated: String,
        /// What this client computed.
        computed: String,
    },
    /// A snapshot whose contents the placement core refuses.
    #[error("snapshot {ring} v{version} is invalid: {reason}")]
    InvalidSnapshot {
        /// The ring.
        ring: String,
        /// The version.
        version: u64,
        /// Why.
        reason: String,
    },
    /// The ring was deleted.
    #[error("ring `{0}` was deleted")]
    RingDeleted(String),
    /// Waiting for a version timed out.
    #[error("timed out after {0:?}")]
    Timeout(std::time::Duration),
    /// The client's background task has stopped.
    #[error("the client has shut down")]
    Closed,
}

impl ClientError {
    /// The problem document, if ringd sent one.
    pub fn problem(&self) -> Option<&Problem> {
        match self {
            Self::Problem(p) => Some(p),
            _ => None,
        }
    }

    /// The HTTP status ringd answered with, if the request got that far.
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Problem(p) => Some(p.status),
            Self::Status { status, .. } => Some(*status),
            _ => None,
        }
    }
}
