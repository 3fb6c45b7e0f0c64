//! `/v1/rings/{ring}/nodes`: list, read, register, update and remove
//! nodes. Each PUT or DELETE is a one-op change (one new version).

use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;

use super::auth::{Reader, Writer};
use super::extract::{ApiJson, ApiQuery};
use super::headers::{etag, expected_version, idempotency_key};
use super::openapi::error_responses::{
    IdempotencyError, JsonBodyErrors, PreconditionError, ReadErrors, ReadTokenError, WriteErrors,
};
use super::openapi::schemas::{IdempotencyKeySchema, RingNameSchema, VersionTagSchema};
use super::paths::{RingNodePath, RingPath};
use super::problem::{ApiError, Problem, ProblemKind};
use super::reason::check_reason;
use super::AppState;
use crate::ring::{ChangeOp, NodeHealth, NodeRecord, NodeRecordSpec, RingName, Role};
use crate::service::{ChangeOutcome, ChangeRequest, Effect, Lease};
use crate::wire::schema::NodeIdSchema;
use crate::wire::{ChangeResult, NodeChangeQuery, NodeInput, NodeList, NodeView};

/// List nodes.
#[utoipa::path(
    get,
    path = "/v1/rings/{ring}/nodes",
    tag = "nodes",
    params(("ring" = RingNameSchema, Path, description = super::RING_NAME_RULES)),
    responses(
        (status = 200, description = "The nodes", body = NodeList, headers(("ETag" = String, description = "`\"<version>\"`"))),
        (status = 400, description = "Invalid ring name", body = Problem, content_type = "application/problem+json"),
        ReadErrors,
    ),
    security(("bearer" = []))
)]
pub async fn list_nodes(
    State(state): State<AppState>,
    _: Reader,
    RingPath(ring): RingPath,
) -> Result<Response, ApiError> {
    let current = state.service.rings().current(&ring).await?;
    let s = &current.snapshot;
    let health = state.service.leases().health(s);
    let list = NodeList {
        ring: ring.to_string(),
        version: s.version,
        nodes: s
            .nodes
            .iter()
            .zip(health)
            .map(|(n, (h, lease))| with_health(n, h, lease))
            .collect(),
    };
    Ok(([(header::ETAG, etag(s.version))], Json(list)).into_response())
}

/// Read a node.
#[utoipa::path(
    get,
    path = "/v1/rings/{ring}/nodes/{node}",
    tag = "nodes",
    params(
        ("ring" = RingNameSchema, Path, description = super::RING_NAME_RULES),
        ("node" = NodeIdSchema, Path, description = super::NODE_ID_RULES),
    ),
    responses(
        (status = 200, description = "The node at the latest version", body = NodeView, headers(("ETag" = String, description = "`\"<version>\"` of the ring"))),
        (status = 400, description = "Invalid ring name or node id", body = Problem, content_type = "application/problem+json"),
        ReadTokenError,
        (status = 404, description = "No such ring or node", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn get_node(
    State(state): State<AppState>,
    _: Reader,
    RingNodePath(ring, id): RingNodePath,
) -> Result<Response, ApiError> {
    let current = state.service.rings().current(&ring).await?;
    let s = &current.snapshot;
    let record = s.nodes.iter().find(|n| n.id == id).ok_or_else(|| {
        ApiError::new(
            ProblemKind::NodeNotFound,
            format!(
                "node `{id}` is not in ring `{ring}` at version {}",
                s.version
            ),
        )
        .with_field("node")
    })?;
    // The record alone, without health: what a read-modify-write sends
    // back to `PUT …/nodes/{node}`, which refuses fields it does not take.
    Ok((
        [(header::ETAG, etag(s.version))],
        Json(NodeView::from(record)),
    )
        .into_response())
}

/// A node's view with its health, last heartbeat and lease deadline, which
/// the node list carries and snapshots and single-node reads do not.
fn with_health(record: &NodeRecord, health: NodeHealth, lease: Option<Lease>) -> NodeView {
    NodeView {
        health: Some(health.into()),
        last_heartbeat: lease.as_ref().map(|l| l.last_heartbeat),
        lease_deadline: lease.map(|l| l.deadline),
        ..NodeView::from(record)
    }
}

/// Register or update a node.
///
/// A one-op change: +1 version, unless the record is identical to the
/// current one (then `changed: false` and no new version). 201 when the
/// node is new, 200 otherwise.
#[utoipa::path(
    put,
    path = "/v1/rings/{ring}/nodes/{node}",
    tag = "nodes",
    params(
        ("ring" = RingNameSchema, Path, description = super::RING_NAME_RULES),
        ("node" = NodeIdSchema, Path, description = super::NODE_ID_RULES),
        ("If-Match" = Option<VersionTagSchema>, Header, nullable = false, description = "`\"<version>\"`: apply only at this version."),
        ("Idempotency-Key" = Option<IdempotencyKeySchema>, Header, nullable = false, description = super::IDEMPOTENCY_KEY_DOC),
        NodeChangeQuery,
    ),
    request_body(content = NodeInput, content_type = "application/json"),
    responses(
        (status = 201, description = "Registered: a new version", body = ChangeResult),
        (status = 200, description = "Updated, or unchanged (`changed: false`)", body = ChangeResult),
        (status = 400, description = "Invalid id, weight, zone, address, label, state or hash_key; unknown field; malformed JSON", body = Problem, content_type = "application/problem+json"),
        WriteErrors, PreconditionError, IdempotencyError, JsonBodyErrors,
        (status = 404, description = "No such ring", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The ring is in a rollout (`reason: rollout_active`); change it with `POST …/changes` and `force: true`, or wait for the rollout", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn put_node(
    State(state): State<AppState>,
    Writer(role): Writer,
    RingNodePath(ring, id): RingNodePath,
    ApiQuery(query): ApiQuery<NodeChangeQuery>,
    headers: HeaderMap,
    ApiJson(spec): ApiJson<NodeRecordSpec>,
) -> Result<Response, ApiError> {
    check_reason(&query.reason)?;
    let record = spec.into_new_record(Some(id.clone()))?;
    // Before the precondition: a missing ring is a 404 whatever it says
    // (RFC 9110 §13.2.1).
    state.service.rings().current(&ring).await?;
    let op = ChangeOp::Upsert { node: record };
    let outcome = one_op_change(&state, &ring, op, query, &headers, role).await?;
    let status = match outcome.effect_on(&id) {
        Effect::Created => StatusCode::CREATED,
        Effect::Changed | Effect::Unchanged => StatusCode::OK,
    };
    Ok(ChangeResult::from_outcome(&ring, &outcome).respond(status))
}

/// Remove a node.
///
/// A one-op change: +1 version.
#[utoipa::path(
    delete,
    path = "/v1/rings/{ring}/nodes/{node}",
    tag = "nodes",
    params(
        ("ring" = RingNameSchema, Path, description = super::RING_NAME_RULES),
        ("node" = NodeIdSchema, Path, description = super::NODE_ID_RULES),
        ("If-Match" = Option<VersionTagSchema>, Header, nullable = false, description = "`\"<version>\"`: apply only at this version."),
        ("Idempotency-Key" = Option<IdempotencyKeySchema>, Header, nullable = false, description = super::IDEMPOTENCY_KEY_DOC),
        NodeChangeQuery,
    ),
    responses(
        (status = 200, description = "Removed: a new version", body = ChangeResult),
        (status = 400, description = "Invalid ring name, node id or precondition", body = Problem, content_type = "application/problem+json"),
        WriteErrors, PreconditionError, IdempotencyError,
        (status = 404, description = "No such ring or node", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The ring is in a rollout (`reason: rollout_active`); change it with `POST …/changes` and `force: true`, or wait for the rollout", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn delete_node(
    State(state): State<AppState>,
    Writer(role): Writer,
    RingNodePath(ring, id): RingNodePath,
    ApiQuery(query): ApiQuery<NodeChangeQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    check_reason(&query.reason)?;
    // A missing ring is a 404 whatever the precondition (RFC 9110 §13.2.1).
    state.service.rings().current(&ring).await?;
    let op = ChangeOp::Remove { id };
    let outcome = one_op_change(&state, &ring, op, query, &headers, role).await?;
    Ok(ChangeResult::from_outcome(&ring, &outcome).respond(StatusCode::OK))
}

/// Applies `op` as a change of its own, as a node PUT or DELETE does, under
/// the precondition (`If-Match` or `expected_version`), reason and
/// `Idempotency-Key` the request carries. The caller has checked that the
/// ring exists, so a missing ring is a 404 whatever the precondition.
async fn one_op_change(
    state: &AppState,
    ring: &RingName,
    op: ChangeOp,
    query: NodeChangeQuery,
    headers: &HeaderMap,
    role: Role,
) -> Result<ChangeOutcome, ApiError> {
    let request = ChangeRequest {
        expected_version: expected_version(headers, query.expected_version)?,
        reason: query.reason,
        idempotency_key: idempotency_key(headers)?,
        ..ChangeRequest::of(vec![op.into()])
    };
    Ok(state.service.rings().apply(ring, request, role).await?)
}

/// The routes of `/v1/rings/{ring}/nodes` and `/v1/rings/{ring}/nodes/{node}`,
/// each with its OpenAPI operation.
pub(super) fn routes() -> utoipa_axum::router::OpenApiRouter<AppState> {
    utoipa_axum::router::OpenApiRouter::new()
        .routes(utoipa_axum::routes!(list_nodes))
        .routes(utoipa_axum::routes!(get_node, put_node, delete_node))
}
