//! What can go wrong between a client and ringd.

use thiserror::Error;

use crate::wire::Problem;

impl ClientError {
    /// A body read from `what` that could not be decoded.
    pub fn decode(
        what: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        Self::Decode {
            what: what.into(),
            source: source.into(),
        }
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
    // Boxed: a problem is the largest variant by far, and every `Result`
    // of the client carries the size of its largest error.
    #[error("ringd refused the request: {0}")]
    Problem(Box<Problem>),
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
    #[error("unexpected response from ringd: {what}: {}", error_chain(.source.as_ref()))]
    Decode {
        /// What was being read: the URL asked, or the kind of answer.
        what: String,
        /// Why it could not be read: the body's transfer failed, or it is
        /// not the JSON the API documents.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
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

/// An error with its sources, which is where reqwest keeps the useful part
/// ("connection refused").
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(inner) = source {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        source = inner.source();
    }
    s
}
