//! Answers that carry a snapshot, shared by the resources that send one:
//! the snapshot with its ETag, and the long-poll on `GET /v1/rings/{ring}/snapshot?after=N&wait=D`: the
//! request waits in the notification hub until the ring passes the
//! client's version.

use std::time::Duration;

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use tokio::time::Instant;

use super::headers::etag;
use super::problem::ApiError;
use super::AppState;
use crate::hub::{GaugeGuard, Head};
use crate::ring::{RingName, Snapshot};
use crate::service::ServiceError;
use crate::store::StoreError;
use crate::wire::SnapshotView;

pub use crate::wire::headers::RESET_HEADER;

/// `GET …/snapshot?after=N&wait=D`: answers at once with the current
/// snapshot if the ring is past N (or, with [`RESET_HEADER`], below it);
/// otherwise waits up to `wait` (within [`LONG_POLL_WAIT`](crate::ring::durations::LONG_POLL_WAIT), plus up to 1/16
/// of it as jitter) for a newer version, and answers 304 if none came.
pub async fn long_poll(
    state: &AppState,
    ring: &RingName,
    after: u64,
    wait: Option<&str>,
) -> Result<Response, ApiError> {
    let wait = wait.map(parse_wait).transpose()?;
    let current = state.service.current_at_least(ring, Some(after)).await?;
    let hub = state.service.hub().clone();
    let mut head = hub.subscribe(ring);
    let mut newest = current.snapshot.clone();
    let _waiting = wait.map(|_| GaugeGuard::enter(hub.clone(), |s| &s.long_polls_waiting));
    let deadline = wait.map(|w| Instant::now() + w + crate::jitter::random_below(w / 16));
    loop {
        if let Head::At(p) = &*head.borrow_and_update() {
            newest = p.snapshot.clone();
        }
        if newest.version > after {
            return Ok(snapshot_answer(&newest, false));
        }
        if newest.version < after {
            return Ok(snapshot_answer(&newest, true));
        }
        match *head.borrow() {
            Head::Deleted => {
                return Err(ServiceError::from(StoreError::RingNotFound(ring.clone())).into())
            }
            // Shutting down: answer now, the client polls again elsewhere.
            Head::Closing => break,
            _ => {}
        }
        let Some(deadline) = deadline else { break };
        match tokio::time::timeout_at(deadline, head.changed()).await {
            Ok(Ok(())) => continue,
            _ => break,
        }
    }
    Ok((StatusCode::NOT_MODIFIED, [(header::ETAG, etag(after))]).into_response())
}

/// 200 with the snapshot and its version as the ETag.
pub fn snapshot_body(snapshot: &Snapshot) -> Response {
    let tag = etag(snapshot.version);
    ([(header::ETAG, tag)], Json(SnapshotView::from(snapshot))).into_response()
}

fn snapshot_answer(snapshot: &Snapshot, reset: bool) -> Response {
    let mut response = snapshot_body(snapshot);
    if reset {
        response
            .headers_mut()
            .insert(RESET_HEADER, HeaderValue::from_static("true"));
    }
    response
}

/// Parses `wait`: a duration such as `30s`, `500ms` or `2m`, within
/// [`LONG_POLL_WAIT`](crate::ring::durations::LONG_POLL_WAIT).
fn parse_wait(text: &str) -> Result<Duration, ApiError> {
    crate::wire::duration::parse_wait(text).map_err(|e| ApiError::invalid("wait", e.named()))
}
