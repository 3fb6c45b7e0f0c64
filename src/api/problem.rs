//! Errors as RFC 9457 problem details (`application/problem+json`).
//!
//! Every refusal the API makes goes through [`ApiError`], so every error a
//! client sees has the same shape: `type`, `title`, `status`, `detail` and,
//! where one input is to blame, `field`; a failed precondition also carries
//! `current_version`. Client input never produces a 500: only a broken
//! store or corrupt stored data does.

use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use thiserror::Error;

use crate::placement::PlacementError;
use crate::ring::RingError;
use crate::service::ServiceError;
use crate::store::StoreError;
pub use crate::wire::Problem;

/// Media type of every error body.
pub const PROBLEM_JSON: &str = "application/problem+json";

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
    /// The body is over the size limit.
    PayloadTooLarge,
    /// The body is not JSON.
    UnsupportedMediaType,
    /// The store cannot serve the request right now.
    Unavailable,
    /// A fault on the server side.
    Internal,
}

impl ProblemKind {
    /// The HTTP status.
    pub fn status(self) -> StatusCode {
        use ProblemKind::*;
        match self {
            InvalidInput | MalformedJson | TooManyKeys => StatusCode::BAD_REQUEST,
            Unauthorized => StatusCode::UNAUTHORIZED,
            Forbidden => StatusCode::FORBIDDEN,
            RingNotFound | NodeNotFound | VersionNotFound | RouteNotFound => StatusCode::NOT_FOUND,
            MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Conflict => StatusCode::CONFLICT,
            VersionPruned => StatusCode::GONE,
            IdempotencyKeyReused => StatusCode::UNPROCESSABLE_ENTITY,
            PreconditionFailed => StatusCode::PRECONDITION_FAILED,
            PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            Internal => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The last segment of the `type` URI.
    pub fn slug(self) -> &'static str {
        use ProblemKind::*;
        match self {
            InvalidInput => "invalid-input",
            MalformedJson => "malformed-json",
            TooManyKeys => "too-many-keys",
            Unauthorized => "unauthorized",
            Forbidden => "forbidden",
            RingNotFound => "ring-not-found",
            NodeNotFound => "node-not-found",
            VersionNotFound => "version-not-found",
            RouteNotFound => "route-not-found",
            MethodNotAllowed => "method-not-allowed",
            Conflict => "conflict",
            VersionPruned => "version-pruned",
            IdempotencyKeyReused => "idempotency-key-reused",
            PreconditionFailed => "precondition-failed",
            PayloadTooLarge => "payload-too-large",
            UnsupportedMediaType => "unsupported-media-type",
            Unavailable => "unavailable",
            Internal => "internal",
        }
    }

    /// The short, fixed summary.
    pub fn title(self) -> &'static str {
        use ProblemKind::*;
        match self {
            InvalidInput => "Invalid input",
            MalformedJson => "Malformed JSON",
            TooManyKeys => "Too many keys",
            Unauthorized => "Unauthorized",
            Forbidden => "Forbidden",
            RingNotFound => "Ring not found",
            NodeNotFound => "Node not found",
            VersionNotFound => "Version not found",
            RouteNotFound => "Not found",
            MethodNotAllowed => "Method not allowed",
            Conflict => "Conflict",
            VersionPruned => "Version pruned",
            IdempotencyKeyReused => "Idempotency key reused",
            PreconditionFailed => "Precondition failed",
            PayloadTooLarge => "Payload too large",
            UnsupportedMediaType => "Unsupported media type",
            Unavailable => "Service unavailable",
            Internal => "Internal error",
        }
    }
}

/// A refusal, rendered as `application/problem+json`.
#[derive(Debug, Clone, Error)]
#[error("{detail}")]
pub struct ApiError {
    /// What kind of problem.
    pub kind: ProblemKind,
    /// Human-readable, actionable explanation.
    pub detail: String,
    /// The offending input, if one is to blame.
    pub field: Option<String>,
    /// The ring's current version, for 412 and 409.
    pub current_version: Option<u64>,
}

impl ApiError {
    /// A problem of `kind` explained by `detail`.
    pub fn new(kind: ProblemKind, detail: impl Into<String>) -> Self {
        Self {
            kind,
            detail: detail.into(),
            field: None,
            current_version: None,
        }
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
            detail: self.detail.clone(),
            field: self.field.clone(),
            current_version: self.current_version,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.kind.status();
        if status.is_server_error() {
            tracing::error!(kind = self.kind.slug(), detail = %self.detail, "request failed");
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
            _ => {}
        }
        response
    }
}

impl From<PlacementError> for ApiError {
    fn from(e: PlacementError) -> Self {
        use PlacementError::*;
        let field = match &e {
            EmptyNodeId | InvalidNodeId { .. } | DuplicateNodeId(_) => "id",
            InvalidHashKey { .. } => "hash_key",
            InvalidZone { .. } | MissingZone(_) => "zone",
            WeightOutOfRange { .. } => "weight",
            UnknownAlgorithm(_) => "algorithm",
            UnknownHash(_) | HashNotSupported { .. } => "hash",
            TableSizeNotPrime(_) | TableSizeOutOfRange { .. } => "table_size",
            VnodesOutOfRange { .. } | TooManyPoints { .. } => "vnodes_per_weight",
            ReplicationOutOfRange { .. } => "replication_factor",
            // Built from stored state, never from a request: the store is
            // inconsistent, which is the server's fault.
            InvalidBucketOrder(_) | InvalidEncoding(_) => {
                return Self::new(ProblemKind::Internal, e.to_string())
            }
        };
        Self::invalid(field, e.to_string())
    }
}

impl From<RingError> for ApiError {
    fn from(e: RingError) -> Self {
        let field = match &e {
            RingError::Placement(p) => return p.clone().into(),
            RingError::InOp {
                index,
                operand,
                error,
            } => return Self::from((**error).clone()).within(&format!("ops[{index}].{operand}")),
            RingError::UnknownNode(_) => {
                return Self::new(ProblemKind::NodeNotFound, e.to_string()).with_field("id")
            }
            RingError::InvalidRingName(_) => "ring",
            RingError::IdMismatch { .. } => "id",
            RingError::MissingNodeId => "id",
            RingError::InvalidAddress(_) => "address",
            RingError::TooManyLabels(_) | RingError::InvalidLabelKey(_) => "labels",
            RingError::InvalidLabelValue(key) => {
                return Self::invalid(format!("labels.{key}"), e.to_string())
            }
            RingError::RefusedChar { field, .. } => {
                return Self::invalid(field.clone(), e.to_string())
            }
            RingError::EmptyChange | RingError::TooManyOps(_) => "ops",
            RingError::InvalidIdempotencyKey(_) => "Idempotency-Key",
            RingError::IdempotencyKeyReused { .. } => {
                return Self::new(ProblemKind::IdempotencyKeyReused, e.to_string())
                    .with_field("Idempotency-Key");
            }
        };
        Self::invalid(field, e.to_string())
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        let detail = e.to_string();
        match e {
            StoreError::RingNotFound(_) => Self::new(
                ProblemKind::RingNotFound,
                format!("{detail}; create it with PUT /v1/rings/{{ring}}"),
            ),
            StoreError::RingExists(s) => {
                Self::new(ProblemKind::Conflict, detail).with_version(s.version)
            }
            StoreError::VersionConflict { current, .. } => {
                Self::new(ProblemKind::PreconditionFailed, detail).with_version(current)
            }
            StoreError::VersionNotFound { .. } => {
                Self::new(ProblemKind::VersionNotFound, detail).with_field("version")
            }
            StoreError::VersionPruned { .. } => {
                Self::new(ProblemKind::VersionPruned, detail).with_field("version")
            }
            StoreError::SchemaTooNew { .. } | StoreError::Unavailable(_) => {
                Self::new(ProblemKind::Unavailable, detail)
            }
            StoreError::Corrupt(_) => Self::new(ProblemKind::Internal, detail),
        }
    }
}

impl From<ServiceError> for ApiError {
    fn from(e: ServiceError) -> Self {
        let detail = e.to_string();
        match e {
            ServiceError::Ring(r) => r.into(),
            ServiceError::Store(s) => s.into(),
            ServiceError::ConfigConflict { existing, .. } => {
                Self::new(ProblemKind::Conflict, detail).with_version(existing.version)
            }
            ServiceError::PreconditionFailed { current, .. } => {
                Self::new(ProblemKind::PreconditionFailed, detail).with_version(current)
            }
            ServiceError::TooMuchContention(_) => Self::new(ProblemKind::Unavailable, detail),
        }
    }
}

impl From<PathRejection> for ApiError {
    fn from(e: PathRejection) -> Self {
        Self::new(ProblemKind::InvalidInput, e.body_text())
    }
}

impl From<QueryRejection> for ApiError {
    fn from(e: QueryRejection) -> Self {
        // axum's text already says which parameter and why, e.g.
        // "Failed to deserialize query string: missing field `key`" or
        // "…: replicas: invalid digit found in string"; lift the name out.
        let text = e.body_text();
        let reason = text.split_once(": ").map_or(text.as_str(), |(_, r)| r);
        let field = match reason.split_once("missing field `") {
            Some((_, rest)) => rest.split('`').next(),
            None => reason
                .split_once(": ")
                .map(|(name, _)| name)
                .filter(|n| n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')),
        };
        let err = Self::new(ProblemKind::InvalidInput, text.clone());
        match field {
            Some(f) if !f.is_empty() => err.with_field(f),
            _ => err,
        }
    }
}
