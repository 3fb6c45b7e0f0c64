//! Errors as RFC 9457 problem details (`application/problem+json`).
//!
//! Every refusal the API makes goes through [`ApiError`], so every error a
//! client sees has the same shape: `type`, `title`, `status`, `detail` and,
//! where one input is to blame, `field`; a failed precondition also carries
//! `current_version`. Client input never produces a 500: only a broken
//! store or corrupt stored data does.

use std::sync::Arc;

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use thiserror::Error;

pub use crate::wire::Problem;

/// Media type of every error body.
pub const PROBLEM_JSON: &str = "application/problem+json";

/// The detail of every 500. What went wrong inside (a corrupt row, a bug)
/// is of no use to a client and may tell an attacker about the server, so
/// it goes to the log and the client is pointed there.
pub const INTERNAL_DETAIL: &str = "an internal error occurred; the server log has the details";

/// The range `Retry-After` of a refused watch is drawn from, in whole
/// seconds. Wide enough to spread a storm of 100,000 clients over several
/// seconds; short enough that a client refused by a full instance with no
/// other to try is not kept waiting long.
pub const RETRY_AFTER_SECONDS: std::ops::RangeInclusive<u64> = 1..=10;

/// The `Retry-After` of a refused watch: whole seconds, drawn uniformly
/// from [`RETRY_AFTER_SECONDS`].
pub fn retry_after() -> u64 {
    let (low, high) = (*RETRY_AFTER_SECONDS.start(), *RETRY_AFTER_SECONDS.end());
    let spread = std::time::Duration::from_secs(high - low + 1);
    low + crate::jitter::random_below(spread).as_secs()
}

/// The kinds of problem the API reports. Each has a stable `type` URI
/// (`urn:ringd:problem:<slug>`), a title and an HTTP status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProblemKind {
    /// A value in the path, query, headers or body breaks the rules.
    InvalidInput,
    /// The body is not well-formed JSON.
    MalformedJson,
    /// More keys than one lookup accepts.
    TooManyKeys,
    /// No usable credentials.
    Unauthorized,
    /// Valid credentials without the right to do this.
    Forbidden,
    /// No ring of that name.
    RingNotFound,
    /// No node of that id in the ring.
    NodeNotFound,
    /// The ring never had that version.
    VersionNotFound,
    /// No live lease of that id for that node.
    LeaseNotFound,
    /// No rollout of that id in the ring.
    RolloutNotFound,
    /// No such route.
    RouteNotFound,
    /// The route exists but not with that method.
    MethodNotAllowed,
    /// The request conflicts with the ring as it is.
    Conflict,
    /// The version existed but has been pruned.
    VersionPruned,
    /// An `Idempotency-Key` sent again with a different change.
    IdempotencyKeyReused,
    /// The ring is not at the version the request expected.
    PreconditionFailed,
    /// Well-formed, but no placement can meet it (the `reason` says why).
    Unsatisfiable,
    /// The version cannot be written as that proxy's configuration.
    NotExportable,
    /// The body is over the size limit.
    PayloadTooLarge,
    /// The body is not JSON.
    UnsupportedMediaType,
    /// The store cannot serve the request right now.
    Unavailable,
    /// The instance already serves as many watchers as it is allowed
    /// (`--max-watchers`); another instance, or this one later, may not.
    AtCapacity,
    /// A fault on the server side. Its detail and causes go to the log
    /// only; the client gets [`INTERNAL_DETAIL`].
    Internal,
}

impl ProblemKind {
    /// The HTTP status, the last segment of the `type` URI and the short,
    /// fixed title: one row per kind, so the three cannot drift apart.
    // One line per kind, kept as a table by hand.
    #[rustfmt::skip]
    pub const fn meta(self) -> (StatusCode, &'static str, &'static str) {
        use ProblemKind::*;
        match self {
            InvalidInput => (StatusCode::BAD_REQUEST, "invalid-input", "Invalid input"),
            MalformedJson => (StatusCode::BAD_REQUEST, "malformed-json", "Malformed JSON"),
            TooManyKeys => (StatusCode::BAD_REQUEST, "too-many-keys", "Too many keys"),
            Unauthorized => (StatusCode::UNAUTHORIZED, "unauthorized", "Unauthorized"),
            Forbidden => (StatusCode::FORBIDDEN, "forbidden", "Forbidden"),
            RingNotFound => (StatusCode::NOT_FOUND, "ring-not-found", "Ring not found"),
            NodeNotFound => (StatusCode::NOT_FOUND, "node-not-found", "Node not found"),
            VersionNotFound => (StatusCode::NOT_FOUND, "version-not-found", "Version not found"),
            LeaseNotFound => (StatusCode::NOT_FOUND, "lease-not-found", "Lease not found"),
            RolloutNotFound => (StatusCode::NOT_FOUND, "rollout-not-found", "Rollout not found"),
            RouteNotFound => (StatusCode::NOT_FOUND, "route-not-found", "Not found"),
            MethodNotAllowed => (StatusCode::METHOD_NOT_ALLOWED, "method-not-allowed", "Method not allowed"),
            Conflict => (StatusCode::CONFLICT, "conflict", "Conflict"),
            VersionPruned => (StatusCode::GONE, "version-pruned", "Version pruned"),
            IdempotencyKeyReused => (StatusCode::UNPROCESSABLE_ENTITY, "idempotency-key-reused", "Idempotency key reused"),
            PreconditionFailed => (StatusCode::PRECONDITION_FAILED, "precondition-failed", "Precondition failed"),
            Unsatisfiable => (StatusCode::UNPROCESSABLE_ENTITY, "unsatisfiable", "Placement cannot be satisfied"),
            NotExportable => (StatusCode::UNPROCESSABLE_ENTITY, "not-exportable", "Cannot be exported"),
            PayloadTooLarge => (StatusCode::PAYLOAD_TOO_LARGE, "payload-too-large", "Payload too large"),
            UnsupportedMediaType => (StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported-media-type", "Unsupported media type"),
            Unavailable => (StatusCode::SERVICE_UNAVAILABLE, "unavailable", "Service unavailable"),
            AtCapacity => (StatusCode::SERVICE_UNAVAILABLE, "at-capacity", "At capacity"),
            Internal => (StatusCode::INTERNAL_SERVER_ERROR, "internal", "Internal error"),
        }
    }

    /// The HTTP status.
    pub const fn status(self) -> StatusCode {
        self.meta().0
    }

    /// The last segment of the `type` URI.
    pub const fn slug(self) -> &'static str {
        self.meta().1
    }

    /// The short, fixed summary.
    pub const fn title(self) -> &'static str {
        self.meta().2
    }
}

/// A refusal, rendered as `application/problem+json`.
#[derive(Debug, Clone, Error)]
#[error("{detail}")]
pub struct ApiError {
    /// What kind of problem.
    pub kind: ProblemKind,
    /// Human-readable, actionable explanation; for
    /// [`ProblemKind::Internal`], for the log only.
    pub detail: String,
    /// The offending input, if one is to blame.
    pub field: Option<String>,
    /// The ring's current version, for 412 and 409.
    pub current_version: Option<u64>,
    /// Why a request cannot be satisfied, machine-readable.
    pub reason: Option<&'static str>,
    /// The error behind a server-side fault, whose chain of causes is
    /// logged.
    pub cause: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

impl ApiError {
    /// A problem of `kind` explained by `detail`.
    pub fn new(kind: ProblemKind, detail: impl Into<String>) -> Self {
        Self {
            kind,
            detail: detail.into(),
            field: None,
            current_version: None,
            reason: None,
            cause: None,
        }
    }

    /// A fault on the server side caused by `error`: logged with all its
    /// causes, answered with [`INTERNAL_DETAIL`].
    pub fn internal(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        let mut err = Self::new(ProblemKind::Internal, error.to_string());
        err.cause = Some(Arc::new(error));
        err
    }

    /// The detail followed by every cause under it, for the log.
    pub fn chain(&self) -> String {
        let mut text = self.detail.clone();
        let mut next = self.cause.as_deref().and_then(std::error::Error::source);
        while let Some(cause) = next {
            // Some errors already print their cause (`StoreError` does, so
            // that a problem detail carries it); naming it twice helps no one.
            let shown = cause.to_string();
            if !text.ends_with(&shown) {
                text.push_str(": caused by: ");
                text.push_str(&shown);
            }
            next = cause.source();
        }
        text
    }

    /// Invalid input in `field`.
    pub fn invalid(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(ProblemKind::InvalidInput, detail).with_field(field)
    }

    /// Names the offending input.
    pub fn with_field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    /// Puts the blamed field under `prefix` (`weight` → `ops[0].node.weight`).
    pub fn within(mut self, prefix: &str) -> Self {
        self.field = Some(match self.field.take() {
            Some(f) => format!("{prefix}.{f}"),
            None => prefix.to_owned(),
        });
        self
    }

    /// Adds the machine-readable reason of an unsatisfiable request.
    pub fn with_reason(mut self, reason: &'static str) -> Self {
        self.reason = Some(reason);
        self
    }

    /// Adds the ring's current version.
    pub fn with_version(mut self, version: u64) -> Self {
        self.current_version = Some(version);
        self
    }

    /// The body this error renders as.
    pub fn problem(&self) -> Problem {
        Problem {
            type_uri: format!("urn:ringd:problem:{}", self.kind.slug()),
            title: self.kind.title().to_owned(),
            status: self.kind.status().as_u16(),
            detail: match self.kind {
                ProblemKind::Internal => INTERNAL_DETAIL.to_owned(),
                _ => self.detail.clone(),
            },
            field: self.field.clone(),
            current_version: self.current_version,
            reason: self.reason.map(str::to_owned),
            // The header is the carrier (set in `into_response`).
            retry_after: None,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.kind.status();
        if status.is_server_error() {
            tracing::error!(kind = self.kind.slug(), detail = %self.chain(), "request failed");
        }
        let body = serde_json::to_vec(&self.problem()).unwrap_or_default();
        let mut response = (status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
        match self.kind {
            // RFC 9110 requires a challenge with every 401.
            ProblemKind::Unauthorized => {
                headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            ProblemKind::Unavailable => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            }
            // Spread over seconds, so that a storm of refused watchers
            // does not come back in one instant.
            ProblemKind::AtCapacity => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from(retry_after()));
            }
            _ => {}
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::StoreError;

    #[test]
    fn a_500_body_carries_no_internal_text_and_the_log_line_all_of_it() {
        let err = ApiError::from(StoreError::corrupt(
            "snapshot of ring `cache` version 3: expected value at line 1 column 1",
        ));
        assert_eq!(err.kind, ProblemKind::Internal);
        let problem = err.problem();
        assert_eq!(problem.status, 500);
        assert_eq!(problem.type_uri, "urn:ringd:problem:internal");
        assert_eq!(problem.detail, INTERNAL_DETAIL);
        assert_eq!(problem.field, None);
        assert!(err.chain().contains("snapshot of ring `cache` version 3"));
    }

    #[test]
    fn the_log_line_walks_every_cause() {
        #[derive(Debug, Error)]
        #[error("reading the snapshot")]
        struct Outer(#[source] std::io::Error);
        let err = ApiError::internal(Outer(std::io::Error::other("disk on fire")));
        assert_eq!(err.chain(), "reading the snapshot: caused by: disk on fire");
        assert_eq!(err.problem().detail, INTERNAL_DETAIL);
    }

    #[test]
    fn a_cause_the_message_already_shows_is_not_repeated() {
        let err = ApiError::from(StoreError::corrupt_from(
            "snapshot of ring `r` version 3",
            std::io::Error::other("expected value at line 1 column 1"),
        ));
        assert_eq!(
            err.chain(),
            "stored data is corrupt: snapshot of ring `r` version 3: expected value at line 1 column 1"
        );
    }

    #[test]
    fn a_503_keeps_its_actionable_text() {
        let err = ApiError::from(StoreError::unavailable(
            "etcd at 127.0.0.1:2379: connection refused",
        ));
        let problem = err.problem();
        assert_eq!(problem.status, 503);
        assert!(
            problem.detail.contains("connection refused"),
            "{}",
            problem.detail
        );
    }

    #[test]
    fn the_meta_table_gives_each_kind_its_status_slug_and_title() {
        assert_eq!(
            ProblemKind::TooManyKeys.meta(),
            (StatusCode::BAD_REQUEST, "too-many-keys", "Too many keys")
        );
        assert_eq!(ProblemKind::RouteNotFound.title(), "Not found");
        assert_eq!(
            ProblemKind::Unavailable.status(),
            StatusCode::SERVICE_UNAVAILABLE
        );
    }

    #[test]
    fn retry_after_stays_in_its_range_and_spreads() {
        let drawn: std::collections::BTreeSet<u64> = (0..2000).map(|_| retry_after()).collect();
        assert_eq!(drawn, RETRY_AFTER_SECONDS.collect());
    }
}
