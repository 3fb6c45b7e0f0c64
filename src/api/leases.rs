//! `/v1/rings/{ring}/nodes/{node}/lease`: a node registers itself with a
//! lease, renews it to prove it is alive, and releases it when it leaves.
//! Only a new or changed record makes a version; renewals never do.

use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use utoipa::IntoResponses;

use super::auth::Writer;
use super::extract::ApiJson;
use super::openapi::error_responses::{JsonBodyErrors, WriteErrors};
use super::openapi::schemas::RingNameSchema;
use super::paths::{RingNodeLeasePath, RingNodePath};
use super::problem::{ApiError, Problem, ProblemKind};
use super::AppState;
use crate::placement::NodeId;
use crate::ring::durations::{format_duration, DEFAULT_LEASE_TTL, LEASE_TTL};
use crate::ring::{NodeRecord, NodeRecordSpec, RingName};
use crate::service::{Effect, LeaseOutcome};
use crate::wire::schema::{LeaseIdSchema, NodeIdSchema};
use crate::wire::{LeaseInput, LeaseView};

/// The refusals every operation on an existing lease shares.
#[derive(IntoResponses)]
pub enum LeaseErrors {
    /// A bad path segment.
    #[response(
        status = 400,
        description = "Invalid ring name, node id or lease id",
        content_type = "application/problem+json"
    )]
    Invalid(Problem),
    /// No such ring, or no such live lease of that node.
    #[response(
        status = 404,
        description = "No such ring (`ring-not-found`), or the node holds no live lease of that id (`lease-not-found`: unknown, expired or released)",
        content_type = "application/problem+json"
    )]
    NotFound(Problem),
    /// Another node's lease.
    #[response(
        status = 409,
        description = "The lease belongs to another node",
        content_type = "application/problem+json"
    )]
    OtherNode(Problem),
}

/// Register a node with a lease.
///
/// The body is the node's record plus `ttl`. A new or changed record is
/// one change (+1 version, `changed: true`); an identical record changes
/// nothing and, while the node's lease is live, renews it (same
/// `lease_id`). 201 when the node is new to the ring, 200 otherwise.
#[utoipa::path(
    put,
    path = "/v1/rings/{ring}/nodes/{node}/lease",
    tag = "leases",
    params(
        ("ring" = RingNameSchema, Path, description = super::RING_NAME_RULES),
        ("node" = NodeIdSchema, Path, description = super::NODE_ID_RULES),
    ),
    request_body(content = LeaseInput, content_type = "application/json"),
    responses(
        (status = 201, description = "Registered a new node: a new version", body = LeaseView),
        (status = 200, description = "Registered again: a new version if the record changed (`changed`)", body = LeaseView),
        (status = 400, description = "Invalid ttl, id, weight, zone, address, label, state or hash_key; unknown field; malformed JSON", body = Problem, content_type = "application/problem+json"),
        WriteErrors, JsonBodyErrors,
        (status = 404, description = "No such ring", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "A `table` ring cannot place the node: `unsatisfiable`, with its `reason`", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn register_lease(
    State(state): State<AppState>,
    Writer(role): Writer,
    RingNodePath(ring, node): RingNodePath,
    ApiJson(body): ApiJson<serde_json::Map<String, serde_json::Value>>,
) -> Result<Response, ApiError> {
    let (record, ttl) = parse_registration(body, node.clone())?;
    let outcome = state
        .service
        .leases()
        .register(&ring, record, ttl, role)
        .await?;
    let status = match outcome.effect {
        Effect::Created => StatusCode::CREATED,
        Effect::Changed | Effect::Unchanged => StatusCode::OK,
    };
    Ok((status, Json(view(&state, &ring, &node, &outcome))).into_response())
}

/// Reads a registration's body (a JSON object) into `node`'s record and
/// the lease's TTL ([`DEFAULT_LEASE_TTL`] when it has none), refusing what
/// `PUT …/nodes/{node}` refuses and a `ttl` outside [`LEASE_TTL`].
pub fn parse_registration(
    mut body: serde_json::Map<String, serde_json::Value>,
    node: NodeId,
) -> Result<(NodeRecord, Duration), ApiError> {
    let ttl = match body.remove("ttl") {
        None => DEFAULT_LEASE_TTL,
        Some(serde_json::Value::String(text)) => LEASE_TTL
            .parse(&text)
            .map_err(|e| ApiError::invalid("ttl", e.named("ttl")))?,
        Some(other) => {
            return Err(ApiError::invalid(
                "ttl",
                format!(
                    "ttl must be a duration string such as \"10s\" ({}), not {other}",
                    LEASE_TTL.range()
                ),
            ))
        }
    };
    let record = record_spec(body)?.into_new_record(Some(node))?;
    Ok((record, ttl))
}

/// The body without its `ttl`, as the node's record; a refusal names the
/// field to blame as the body spells it (`weight`), or none for the body
/// as a whole (an unknown field).
fn record_spec(
    body: serde_json::Map<String, serde_json::Value>,
) -> Result<NodeRecordSpec, ApiError> {
    serde_path_to_error::deserialize(serde_json::Value::Object(body)).map_err(|err| {
        let path = err.path().to_string();
        let inner = err.into_inner();
        if path == "." {
            ApiError::new(ProblemKind::InvalidInput, format!("invalid body: {inner}"))
        } else {
            ApiError::invalid(path.clone(), format!("invalid value at `{path}`: {inner}"))
        }
    })
}

/// Renew a lease.
///
/// Extends the lease's deadline by its TTL. Never a version, never a
/// store write.
#[utoipa::path(
    post,
    path = "/v1/rings/{ring}/nodes/{node}/lease/{lease_id}/renew",
    tag = "leases",
    params(
        ("ring" = RingNameSchema, Path, description = super::RING_NAME_RULES),
        ("node" = NodeIdSchema, Path, description = super::NODE_ID_RULES),
        ("lease_id" = LeaseIdSchema, Path, description = "The id the registration answered."),
    ),
    responses(
        (status = 200, description = "Renewed", body = LeaseView),
        WriteErrors, LeaseErrors,
    ),
    security(("bearer" = []))
)]
pub async fn renew_lease(
    State(state): State<AppState>,
    _: Writer,
    RingNodeLeasePath(ring, node, id): RingNodeLeasePath,
) -> Result<Response, ApiError> {
    let outcome = state.service.leases().renew(&ring, &node, id).await?;
    Ok(Json(view(&state, &ring, &node, &outcome)).into_response())
}

/// Release a lease: a graceful leave.
///
/// The node is marked `left` at once. Its record stays as it is: no
/// version.
#[utoipa::path(
    delete,
    path = "/v1/rings/{ring}/nodes/{node}/lease/{lease_id}",
    tag = "leases",
    params(
        ("ring" = RingNameSchema, Path, description = super::RING_NAME_RULES),
        ("node" = NodeIdSchema, Path, description = super::NODE_ID_RULES),
        ("lease_id" = LeaseIdSchema, Path, description = "The id the registration answered."),
    ),
    responses(
        (status = 200, description = "Released; the node is `left`, and the ring's `on_leave` removed or drained it", body = LeaseView),
        WriteErrors, LeaseErrors,
    ),
    security(("bearer" = []))
)]
pub async fn release_lease(
    State(state): State<AppState>,
    _: Writer,
    RingNodeLeasePath(ring, node, id): RingNodeLeasePath,
) -> Result<Response, ApiError> {
    // Whether `on_leave` removed or drained the node (a version) is the
    // release's own outcome: a commit by another writer meanwhile is not
    // this release's change.
    let outcome = state.service.leases().release(&ring, &node, id).await?;
    Ok(Json(view(&state, &ring, &node, &outcome)).into_response())
}

/// The body every lease operation answers with.
fn view(state: &AppState, ring: &RingName, node: &NodeId, outcome: &LeaseOutcome) -> LeaseView {
    let lease = &outcome.lease;
    LeaseView {
        ring: ring.to_string(),
        node: node.to_string(),
        lease_id: lease.id.to_string(),
        ttl: format_duration(lease.ttl),
        deadline: lease.deadline,
        last_heartbeat: lease.last_heartbeat,
        health: lease.health(state.service.now()).into(),
        version: outcome.version,
        changed: outcome.effect != Effect::Unchanged,
    }
}

/// The routes of a node's lease, each with its OpenAPI operation.
pub(super) fn routes() -> utoipa_axum::router::OpenApiRouter<AppState> {
    utoipa_axum::router::OpenApiRouter::new()
        .routes(utoipa_axum::routes!(register_lease))
        .routes(utoipa_axum::routes!(renew_lease))
        .routes(utoipa_axum::routes!(release_lease))
}
