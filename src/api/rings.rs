//! `/v1/rings` and `/v1/rings/{ring}`: create, list, read and delete rings.

use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;

use super::auth::{Reader, Writer};
use super::config_body::{listing_membership, split_membership};
use super::extract::{parse_json, ApiJson, ApiQuery};
use super::headers::{etag, expected_version, not_modified};
use super::membership::with_status;
use super::openapi::error_responses::{
    JsonBodyErrors, PreconditionError, ReadErrors, ReadTokenError, WriteErrors,
};
use super::openapi::schemas::{RingNameSchema, VersionTagSchema};
use super::paths::RingPath;
use super::problem::{ApiError, Problem, ProblemKind};
use super::AppState;
use crate::placement::{RingConfig, RingConfigSpec};
use crate::ring::{MembershipPolicy, RingName, Snapshot};
use crate::service::{Created, ServiceError};
use crate::store::StoreError;
use crate::wire::{PreconditionQuery, RingConfigInput, RingList, RingSummary};

/// The ring's own view: its summary with its nodes' health now (read from
/// memory, never from the store).
fn summary(state: &AppState, snapshot: &Snapshot) -> RingSummary {
    RingSummary {
        health: Some((&state.service.leases().health_counts(snapshot)).into()),
        ..with_status(state, snapshot)
    }
}

/// Checks a creation's `If-Match`/`expected_version` precondition against
/// the ring's current version. A ring that does not exist fails any
/// precondition: without it the answer would be 201, so it applies.
async fn check_precondition(
    state: &AppState,
    ring: &RingName,
    expected: Option<u64>,
) -> Result<(), ApiError> {
    let Some(expected) = expected else {
        return Ok(());
    };
    match state.service.rings().current(ring).await {
        Ok(c) if c.snapshot.version == expected => Ok(()),
        Ok(c) => Err(ServiceError::PreconditionFailed {
            expected,
            current: c.snapshot.version,
        }
        .into()),
        Err(ServiceError::Store(StoreError::RingNotFound(_))) => Err(ApiError::new(
            ProblemKind::PreconditionFailed,
            format!("ring `{ring}` does not exist, so it is not at version {expected}"),
        )),
        Err(e) => Err(e.into()),
    }
}

/// Create a ring.
///
/// Creates the ring at version 1 with the given configuration and no
/// nodes. Repeating the request with an identical configuration returns
/// 200 and changes nothing; a different configuration returns 409 (change
/// an existing ring's configuration with an `update_config` or
/// `set_config` op).
#[utoipa::path(
    put,
    path = "/v1/rings/{ring}",
    tag = "rings",
    params(
        ("ring" = RingNameSchema, Path, description = super::RING_NAME_RULES),
        ("If-Match" = Option<VersionTagSchema>, Header, nullable = false, description = "`\"<version>\"`: the ring must exist at this version."),
        PreconditionQuery,
    ),
    request_body(content = RingConfigInput, content_type = "application/json"),
    responses(
        (status = 201, description = "Created at version 1", body = RingSummary),
        (status = 200, description = "An identical ring already exists; nothing changed", body = RingSummary),
        (status = 400, description = "Invalid ring name, unknown field or algorithm, parameter out of range, malformed JSON", body = Problem, content_type = "application/problem+json"),
        WriteErrors, PreconditionError, JsonBodyErrors,
        (status = 409, description = "The ring exists with a different configuration", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn put_ring(
    State(state): State<AppState>,
    Writer(role): Writer,
    RingPath(ring): RingPath,
    ApiQuery(query): ApiQuery<PreconditionQuery>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<serde_json::Value>,
) -> Result<Response, ApiError> {
    let (placement, policy) = split_membership(body, "")?;
    // The placement part is parsed as it always was, as bytes, so its
    // refusals read as before the policy existed, but for an unknown
    // field's, which lists `membership` among the fields accepted.
    let bytes = serde_json::to_vec(&placement).expect("a JSON value serializes");
    let spec: RingConfigSpec = parse_json(&bytes).map_err(listing_membership)?;
    // Parsed as the spec first so cross-field rules (ketama needs md5 …)
    // are reported against the field they concern.
    let config = RingConfig::try_from(spec)?;
    let membership = policy.map(MembershipPolicy::from).unwrap_or_default();
    let expected = expected_version(&headers, query.expected_version)?;
    check_precondition(&state, &ring, expected).await?;
    let (created, current) = state
        .service
        .rings()
        .create_with(ring.clone(), config, membership, role)
        .await?;
    let status = match created {
        Created::New => StatusCode::CREATED,
        Created::Existing => StatusCode::OK,
    };
    let headers = [
        (header::ETAG, etag(current.snapshot.version)),
        (
            header::LOCATION,
            format!("/v1/rings/{ring}")
                .parse()
                .expect("ring names are valid header text"),
        ),
    ];
    Ok((status, headers, Json(summary(&state, &current.snapshot))).into_response())
}

/// List rings.
#[utoipa::path(
    get,
    path = "/v1/rings",
    tag = "rings",
    responses(
        (status = 200, description = "Every ring's latest version", body = RingList),
        ReadTokenError,
    ),
    security(("bearer" = []))
)]
pub async fn list_rings(
    State(state): State<AppState>,
    _: Reader,
) -> Result<Json<RingList>, ApiError> {
    let rings = state.service.rings().list().await?;
    Ok(Json(RingList {
        rings: rings.iter().map(|s| summary(&state, s)).collect(),
    }))
}

/// Read a ring.
///
/// The configuration, latest version, node counts, the nodes' health
/// counts and fingerprint. Carries
/// `ETag: "<version>"`; `If-None-Match` with that tag returns 304.
#[utoipa::path(
    get,
    path = "/v1/rings/{ring}",
    tag = "rings",
    params(("ring" = RingNameSchema, Path, description = super::RING_NAME_RULES)),
    responses(
        (status = 200, description = "The ring", body = RingSummary, headers(("ETag" = String, description = "`\"<version>\"`"))),
        (status = 304, description = "Not modified since the version in If-None-Match"),
        (status = 400, description = "Invalid ring name", body = Problem, content_type = "application/problem+json"),
        ReadErrors,
    ),
    security(("bearer" = []))
)]
pub async fn get_ring(
    State(state): State<AppState>,
    _: Reader,
    RingPath(ring): RingPath,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let current = state.service.rings().current(&ring).await?;
    let version = current.snapshot.version;
    if not_modified(&headers, version) {
        return Ok((StatusCode::NOT_MODIFIED, [(header::ETAG, etag(version))]).into_response());
    }
    Ok((
        [(header::ETAG, etag(version))],
        Json(summary(&state, &current.snapshot)),
    )
        .into_response())
}

/// Delete a ring.
///
/// Deletes the ring and every version of it. With a precondition, the ring
/// must be at that version.
#[utoipa::path(
    delete,
    path = "/v1/rings/{ring}",
    tag = "rings",
    params(
        ("ring" = RingNameSchema, Path, description = super::RING_NAME_RULES),
        ("If-Match" = Option<VersionTagSchema>, Header, nullable = false, description = "`\"<version>\"`: delete only at this version."),
        PreconditionQuery,
    ),
    responses(
        (status = 204, description = "Deleted"),
        (status = 400, description = "Invalid ring name or precondition", body = Problem, content_type = "application/problem+json"),
        WriteErrors, PreconditionError,
        (status = 404, description = "No such ring", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn delete_ring(
    State(state): State<AppState>,
    _: Writer,
    RingPath(ring): RingPath,
    ApiQuery(query): ApiQuery<PreconditionQuery>,
    headers: HeaderMap,
) -> Result<StatusCode, ApiError> {
    // A missing ring is a 404 whatever the precondition, even one that
    // contradicts itself (RFC 9110 §13.2.1: preconditions count only
    // where the request could otherwise succeed).
    state.service.rings().current(&ring).await?;
    let expected = expected_version(&headers, query.expected_version)?;
    // The store checks the precondition and deletes in one atomic step, so
    // a ring deleted since the read above is a 404 as well.
    state.service.delete_ring(&ring, expected).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The routes of `/v1/rings` and `/v1/rings/{ring}`, each with its OpenAPI
/// operation.
pub(super) fn routes() -> utoipa_axum::router::OpenApiRouter<AppState> {
    utoipa_axum::router::OpenApiRouter::new()
        .routes(utoipa_axum::routes!(list_rings))
        .routes(utoipa_axum::routes!(get_ring, put_ring, delete_ring))
}
