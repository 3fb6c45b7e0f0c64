//! What the API promises about consistency under partitions: an answer
//! without `Ringd-Stale` is current, and a write is answered within its
//! deadline. Both are layers over every route, so no handler can forget
//! them. docs/api.md ("Store outages and partitions") says what a client
//! gets.

use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::problem::{ApiError, ProblemKind};
use super::AppState;
use crate::ring::durations::{format_duration, WRITE_TIMEOUT};
use crate::ring::RingName;
use crate::wire::headers::{STALE_HEADER, TIMEOUT_HEADER};

/// Adds [`STALE_HEADER`] to a response unless it is known to be current.
/// A read of ring data first passes the service's read barrier, so that it
/// reflects every change acknowledged before it arrived, through any
/// instance; every response is checked again after the handler ran, so an
/// answer computed just before the store went away is marked too.
pub(super) async fn mark_stale(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let confirmed = match read_scope(&request) {
        Some(ring) => state.service.freshness().confirm(ring.as_ref()).await,
        None => true,
    };
    let mut response = next.run(request).await;
    if !confirmed || !state.service.freshness().is_current() {
        response
            .headers_mut()
            .insert(STALE_HEADER, HeaderValue::from_static("true"));
    }
    response
}

/// What a request reads of the rings, if it is a read: `Some(Some(ring))`
/// for one ring's data (its snapshot, lookups, ownership, history, clients,
/// rollouts and watches, long-poll included), `Some(None)` for every
/// ring's (the ring list and the all-rings watch). Writes get their
/// answers from the store itself.
fn read_scope(request: &Request) -> Option<Option<RingName>> {
    let path = request.uri().path();
    if !is_read(request.method(), path) {
        return None;
    }
    if path == "/v1/rings" || path == "/v1/watch" {
        return Some(None);
    }
    let name = path.strip_prefix("/v1/rings/")?.split('/').next()?;
    // A name the handler will refuse reads nothing.
    RingName::new(name).ok().map(Some)
}

/// Whether a request only reads: every GET and HEAD, and key lookups,
/// which are POSTs only to carry many keys.
fn is_read(method: &Method, path: &str) -> bool {
    match *method {
        Method::GET | Method::HEAD | Method::OPTIONS => true,
        Method::POST => path.ends_with("/lookup"),
        _ => false,
    }
}

/// The `Ringd-Timeout` header as a refusal's problem names it, in the
/// case the documentation writes it.
const TIMEOUT_FIELD: &str = "Ringd-Timeout";

/// Answers a write 503 (with `Retry-After`) once its deadline passes: the
/// client's own, sent as `Ringd-Timeout`, or the service's
/// ([`crate::service::Freshness::write_deadline`]). The write is
/// abandoned where it stands; if its commit was already on its way to etcd
/// it may still be applied, which a retry with the same
/// `Idempotency-Key` finds out.
pub(super) async fn bound_writes(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    if is_read(request.method(), request.uri().path()) {
        return next.run(request).await;
    }
    let asked = match request.headers().get(TIMEOUT_HEADER) {
        None => None,
        Some(value) => match value.to_str().map(|v| WRITE_TIMEOUT.parse(v)) {
            Ok(Ok(d)) => Some(d),
            Ok(Err(e)) => {
                return ApiError::invalid(TIMEOUT_FIELD, e.named(TIMEOUT_FIELD)).into_response()
            }
            Err(_) => {
                return ApiError::invalid(
                    TIMEOUT_FIELD,
                    "Ringd-Timeout is not text: send a duration such as `10s`",
                )
                .into_response()
            }
        },
    };
    let Some(deadline) = asked.or_else(|| state.service.freshness().write_deadline()) else {
        return next.run(request).await;
    };
    match tokio::time::timeout(deadline, next.run(request)).await {
        Ok(response) => response,
        Err(_) => ApiError::new(
            ProblemKind::Unavailable,
            format!(
                "the store did not confirm this change within {}{}: it may still be applied; \
                 retry with the same Idempotency-Key to learn its outcome, or send \
                 Ringd-Timeout to wait longer",
                format_duration(deadline),
                if state.service.freshness().is_current() {
                    ""
                } else {
                    " (this instance cannot reach an etcd quorum)"
                },
            ),
        )
        .into_response(),
    }
}
