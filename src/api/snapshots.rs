//! Snapshots and history: the latest version (at once, or long-polled
//! with `?after=N&wait=D`), any retained version, its canonical binary
//! placement table, and the list of versions.

use std::time::Duration;

use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use tokio::time::Instant;

use super::auth::Reader;
use super::extract::ApiQuery;
use super::headers::{etag, not_modified};
use super::openapi::error_responses::{ReadErrors, VersionedReadErrors};
use super::openapi::schemas::{PlacementTableSchema, RingNameSchema};
use super::paths::{RingPath, RingVersionPath};
use super::problem::{ApiError, Problem};
use super::AppState;
use crate::hub::{GaugeGuard, Head};
use crate::ring::{RingName, Snapshot};
use crate::service::ServiceError;
use crate::store::StoreError;
use crate::wire::schema::VersionSchema;
use crate::wire::{HistoryEntryView, HistoryView, OpView, SnapshotQuery, SnapshotView};

pub use crate::wire::headers::{FINGERPRINT_HEADER, RESET_HEADER};

fn snapshot_response(headers: &HeaderMap, snapshot: &Snapshot) -> Response {
    if not_modified(headers, snapshot.version) {
        let tag = etag(snapshot.version);
        return (StatusCode::NOT_MODIFIED, [(header::ETAG, tag)]).into_response();
    }
    snapshot_body(snapshot)
}

/// Read the latest snapshot, or long-poll for the next one.
///
/// The complete latest version: config, nodes sorted by id, fingerprint
/// and the change that produced it. Carries `ETag: "<version>"`; send it
/// back in `If-None-Match` to get 304 until the ring changes.
///
/// Long-poll with `?after=N&wait=30s`: if the ring is already past N the
/// answer is immediate; otherwise the request waits up to `wait` for the
/// next version and answers 304 if none came. If the ring is below N (it
/// was deleted and created again), the answer is the current snapshot
/// with `Ringd-Reset: true`: drop what you hold.
#[utoipa::path(
    get,
    path = "/v1/rings/{ring}/snapshot",
    tag = "snapshots",
    params(
        ("ring" = RingNameSchema, Path, description = super::RING_NAME_RULES),
        ("If-None-Match" = Option<String>, Header, description = "`\"<version>\"`: 304 if the ring is still at it."),
        SnapshotQuery,
    ),
    responses(
        (status = 200, description = "The latest snapshot (with `after`: a version past it, or with `Ringd-Reset: true` one below it)", body = SnapshotView, headers(("ETag" = String, description = "`\"<version>\"`"), ("Ringd-Reset" = String, description = "`true` when the ring went back below `after`: replace what you hold"))),
        (status = 304, description = "Still at the version in If-None-Match, or no version past `after` came within `wait`"),
        (status = 400, description = "Invalid ring name, `after` or `wait`", body = Problem, content_type = "application/problem+json"),
        ReadErrors,
    ),
    security(("bearer" = []))
)]
pub async fn latest_snapshot(
    State(state): State<AppState>,
    _: Reader,
    RingPath(ring): RingPath,
    ApiQuery(query): ApiQuery<SnapshotQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    match (query.after, &query.wait) {
        (Some(after), wait) => return long_poll(&state, &ring, after, wait.as_deref()).await,
        (None, Some(_)) => {
            return Err(ApiError::invalid(
                "wait",
                "`wait` needs `after`, the version the client holds",
            ))
        }
        (None, None) => {}
    }
    let current = state.service.rings().current(&ring).await?;
    Ok(snapshot_response(&headers, &current.snapshot))
}

/// `GET …/snapshot?after=N&wait=D`: answers at once with the current
/// snapshot if the ring is past N (or, with [`RESET_HEADER`], below it);
/// otherwise waits up to `wait` (within
/// [`LONG_POLL_WAIT`](crate::ring::durations::LONG_POLL_WAIT), plus up to
/// 1/16 of it as jitter) for a newer version, and answers 304 if none came.
async fn long_poll(
    state: &AppState,
    ring: &RingName,
    after: u64,
    wait: Option<&str>,
) -> Result<Response, ApiError> {
    let wait = wait.map(parse_wait).transpose()?;
    let current = state
        .service
        .rings()
        .current_at_least(ring, Some(after))
        .await?;
    let hub = state.service.hub().clone();
    let mut head = hub.subscribe(ring);
    let mut newest = current.snapshot.clone();
    let _waiting = wait.map(|_| GaugeGuard::enter(hub.clone(), |s| &s.long_polls_waiting));
    let deadline = wait.map(|w| Instant::now() + w + crate::jitter::random_below(w / 16));
    let mut slot = None;
    loop {
        if let Head::At(p) = &*head.borrow_and_update() {
            newest = p.snapshot.clone();
        }
        if newest.version > after {
            return Ok(long_poll_answer(&newest, false));
        }
        if newest.version < after {
            return Ok(long_poll_answer(&newest, true));
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
        // A long-poll that waits is a watcher like a stream; one that is
        // answered at once takes no slot.
        if slot.is_none() {
            slot = Some(state.admission.admit()?);
        }
        match tokio::time::timeout_at(deadline, head.changed()).await {
            Ok(Ok(())) => continue,
            _ => break,
        }
    }
    Ok((StatusCode::NOT_MODIFIED, [(header::ETAG, etag(after))]).into_response())
}

/// 200 with the snapshot and its version as the ETag.
fn snapshot_body(snapshot: &Snapshot) -> Response {
    let tag = etag(snapshot.version);
    ([(header::ETAG, tag)], Json(SnapshotView::from(snapshot))).into_response()
}

/// The long-poll's 200, with [`RESET_HEADER`] when the ring went back
/// below the client's version.
fn long_poll_answer(snapshot: &Snapshot, reset: bool) -> Response {
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
    crate::wire::duration::parse_wait(text).map_err(|e| ApiError::invalid("wait", e.named("wait")))
}

/// Read a retained version.
///
/// Versions are immutable. The newest 1,000 per ring are kept by default
/// (`--retention`); older ones answer 410.
#[utoipa::path(
    get,
    path = "/v1/rings/{ring}/snapshots/{version}",
    tag = "snapshots",
    params(
        ("ring" = RingNameSchema, Path, description = super::RING_NAME_RULES),
        ("version" = VersionSchema, Path, description = "A version, from 1."),
        ("If-None-Match" = Option<String>, Header, description = "`\"<version>\"`: 304 if it names this version."),
    ),
    responses(
        (status = 200, description = "The snapshot", body = SnapshotView, headers(("ETag" = String, description = "`\"<version>\"`"))),
        (status = 304, description = "The If-None-Match tag names this version"),
        (status = 400, description = "Invalid ring name or version", body = Problem, content_type = "application/problem+json"),
        VersionedReadErrors,
    ),
    security(("bearer" = []))
)]
pub async fn snapshot_version(
    State(state): State<AppState>,
    _: Reader,
    RingVersionPath(ring, v): RingVersionPath,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let snapshot = state.service.rings().snapshot(&ring, v).await?;
    Ok(snapshot_response(&headers, &snapshot))
}

/// Read a version's placement table.
///
/// The canonical binary encoding of the materialized placement, as
/// specified in `docs/placement-spec.md`; its SHA-256 is the snapshot's
/// fingerprint (also sent in the `ringd-fingerprint` header).
#[utoipa::path(
    get,
    path = "/v1/rings/{ring}/snapshots/{version}/table",
    tag = "snapshots",
    params(
        ("ring" = RingNameSchema, Path, description = super::RING_NAME_RULES),
        ("version" = VersionSchema, Path, description = "A version, from 1."),
    ),
    responses(
        (status = 200, description = "The canonical encoding", content_type = "application/octet-stream", body = inline(PlacementTableSchema),
            headers(("ETag" = String, description = "`\"<version>\"`"), ("ringd-fingerprint" = String, description = "SHA-256 of the body, 64 hex digits"))),
        (status = 400, description = "Invalid ring name or version", body = Problem, content_type = "application/problem+json"),
        VersionedReadErrors,
    ),
    security(("bearer" = []))
)]
pub async fn snapshot_table(
    State(state): State<AppState>,
    _: Reader,
    RingVersionPath(ring, v): RingVersionPath,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let (v, placement) = state.service.rings().placement(&ring, Some(v)).await?;
    if not_modified(&headers, v) {
        return Ok((StatusCode::NOT_MODIFIED, [(header::ETAG, etag(v))]).into_response());
    }
    let fingerprint = HeaderValue::from_str(&placement.fingerprint().to_string())
        .expect("hex digits are a valid header");
    let headers = [
        (
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/octet-stream"),
        ),
        (header::ETAG, etag(v)),
        (
            header::HeaderName::from_static(FINGERPRINT_HEADER),
            fingerprint,
        ),
    ];
    Ok((headers, placement.encode()).into_response())
}

/// Read the history.
///
/// One entry per retained version, oldest first: time, ops, reason, role
/// and moved fraction.
#[utoipa::path(
    get,
    path = "/v1/rings/{ring}/history",
    tag = "snapshots",
    params(("ring" = RingNameSchema, Path, description = super::RING_NAME_RULES)),
    responses(
        (status = 200, description = "The history", body = HistoryView),
        (status = 400, description = "Invalid ring name", body = Problem, content_type = "application/problem+json"),
        ReadErrors,
    ),
    security(("bearer" = []))
)]
pub async fn history(
    State(state): State<AppState>,
    _: Reader,
    RingPath(ring): RingPath,
) -> Result<Json<HistoryView>, ApiError> {
    let entries = state.service.rings().history(&ring).await?;
    Ok(Json(HistoryView {
        ring: ring.to_string(),
        entries: entries
            .iter()
            .map(|e| HistoryEntryView {
                version: e.version,
                created_at: e.created_at,
                fingerprint: e.fingerprint.to_string(),
                ops: e.change.ops.iter().map(OpView::from).collect(),
                reason: e.change.reason.clone(),
                role: e.change.role.into(),
                moved_fraction: e.change.moved_fraction,
                idempotency_key: e.change.idempotency_key.clone().map(String::from),
            })
            .collect(),
    }))
}

/// The routes of `…/snapshot`, `…/snapshots/{version}`, its `/table` and
/// `…/history`, each with its OpenAPI operation.
pub(super) fn routes() -> utoipa_axum::router::OpenApiRouter<AppState> {
    utoipa_axum::router::OpenApiRouter::new()
        .routes(utoipa_axum::routes!(latest_snapshot))
        .routes(utoipa_axum::routes!(snapshot_version))
        .routes(utoipa_axum::routes!(snapshot_table))
        .routes(utoipa_axum::routes!(history))
}
