//! `…/rollouts`: a change applied in paced steps, each gated on the ring's
//! clients; its plan (dry run), its progress and the operator's controls.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;

use super::auth::{Reader, Writer};
use super::changes::parse_ops;
use super::extract::{from_value, ApiJson};
use super::openapi::error_responses::{JsonBodyErrors, ReadErrors, WriteErrors};
use super::openapi::schemas::RingNameSchema;
use super::paths::{RingPath, RingRolloutPath};
use super::problem::{ApiError, Problem, ProblemKind};
use super::reason::check_reason;
use super::AppState;
use crate::placement::json_integer;
use crate::ring::rollout::{RolloutPolicySpec, RolloutRecord};
use crate::ring::RingName;
use crate::service::{RolloutControl, RolloutOutcome, RolloutRequest};
use crate::wire::{
    AbortInput, GateView, PolicyView, RolloutInput, RolloutList, RolloutPlanView, RolloutView,
    StepView,
};

/// The body of `POST …/rollouts`, as parsed.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RolloutBody {
    // Parsed op by op, so errors name the exact field.
    ops: Vec<serde_json::Value>,
    #[serde(default, deserialize_with = "json_integer::option")]
    expected_version: Option<u64>,
    #[serde(default)]
    reason: Option<String>,
    policy: serde_json::Value,
    #[serde(default)]
    dry_run: bool,
}

/// The view of `r`, with its pending gate read now.
async fn view(state: &AppState, r: &RolloutRecord) -> Result<RolloutView, ApiError> {
    let gate = if r.state.is_active() && r.gate_pending {
        Some(GateView::of(
            r,
            &state.service.rollouts().gate_reading(r).await?,
        ))
    } else {
        None
    };
    Ok(RolloutView::of(r, gate, state.service.now()))
}

fn location(ring: &RingName, r: &RolloutRecord) -> header::HeaderValue {
    format!("/v1/rings/{ring}/rollouts/{}", r.id)
        .parse()
        .expect("ring names and numbers are valid header text")
}

/// Start a rollout.
///
/// Plans the change as paced steps, each one ordinary version, and hands
/// it to the decision-maker, which commits a step, waits until the share
/// `gate` of the ring's live clients acked it with the server's
/// fingerprint (and `min_dwell` passed), and takes the next. `ring` and
/// `rendezvous` ramp the changing nodes (`ramp` in parts of 65,536),
/// `maglev` ramps their weight through its fill, `ketama` steps whole
/// weights, `table` moves partitions in waves (`max_moves_per_node_per_step`)
/// and `jump` takes one step. With `dry_run: true` the answer is the plan
/// and nothing is stored. While a rollout runs, other changes to the ring
/// are refused with 409 unless they say `force: true`.
#[utoipa::path(
    post,
    path = "/v1/rings/{ring}/rollouts",
    tag = "rollouts",
    params(("ring" = RingNameSchema, Path, description = super::RING_NAME_RULES)),
    request_body(content = RolloutInput, content_type = "application/json"),
    responses(
        (status = 200, description = "The plan (`dry_run: true`); nothing stored", body = RolloutPlanView),
        (status = 201, description = "Started; the first step follows at once", body = RolloutView, headers(("Location" = String, description = "The rollout's URL"))),
        (status = 400, description = "Invalid op, node, policy field or reason; unknown field; malformed JSON", body = Problem, content_type = "application/problem+json"),
        WriteErrors, JsonBodyErrors,
        (status = 404, description = "No such ring, or a `remove` of a node the ring does not have", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The ring is in another rollout (`reason: rollout_active`)", body = Problem, content_type = "application/problem+json"),
        (status = 412, description = "The ring is not at `expected_version`", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "The change cannot be paced so (`reason`: `single_step_only`, `too_many_steps`, `fraction_unreachable`, `no_change`), or no placement can hold it", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "Store unavailable; retry", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn start_rollout(
    State(state): State<AppState>,
    Writer(role): Writer,
    RingPath(ring): RingPath,
    ApiJson(body): ApiJson<RolloutBody>,
) -> Result<Response, ApiError> {
    check_reason(&body.reason)?;
    let ops = parse_ops(body.ops)?;
    let policy: RolloutPolicySpec = from_value(body.policy, "policy")?;
    state.service.rings().current(&ring).await?;
    let request = RolloutRequest {
        ops,
        reason: body.reason,
        expected_version: body.expected_version,
        policy,
        dry_run: body.dry_run,
    };
    match state.service.rollouts().start(&ring, request, role).await? {
        RolloutOutcome::Planned { plan, base, policy } => {
            let steps = plan
                .steps
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    StepView::of(
                        i as u32 + 1,
                        &s.summary,
                        &s.ops,
                        s.proposal.diff.moved_fraction,
                        s.proposal.snapshot.fingerprint,
                    )
                })
                .collect();
            let body = RolloutPlanView {
                ring: ring.to_string(),
                dry_run: true,
                base_version: base.snapshot.version,
                base_fingerprint: base.snapshot.fingerprint.to_string(),
                target_fingerprint: plan.direct.snapshot.fingerprint.to_string(),
                steps,
                total_moved_fraction: plan.total_moved(),
                direct_moved_fraction: plan.direct.diff.moved_fraction,
                notes: plan.notes.clone(),
                policy: PolicyView::from(&policy),
            };
            Ok(Json(body).into_response())
        }
        RolloutOutcome::Started(r) => {
            let body = view(&state, &r).await?;
            let headers = [(header::LOCATION, location(&ring, &r))];
            Ok((StatusCode::CREATED, headers, Json(body)).into_response())
        }
    }
}

/// List rollouts.
///
/// The ring's rollouts, newest first: the active one, if any, and the
/// newest finished ones (100 are kept).
#[utoipa::path(
    get,
    path = "/v1/rings/{ring}/rollouts",
    tag = "rollouts",
    params(("ring" = RingNameSchema, Path, description = super::RING_NAME_RULES)),
    responses(
        (status = 200, description = "The rollouts, newest first", body = RolloutList),
        (status = 400, description = "Invalid ring name", body = Problem, content_type = "application/problem+json"),
        ReadErrors,
    ),
    security(("bearer" = []))
)]
pub async fn list_rollouts(
    State(state): State<AppState>,
    _: Reader,
    RingPath(ring): RingPath,
) -> Result<Json<RolloutList>, ApiError> {
    let records = state.service.rollouts().list(&ring).await?;
    let mut rollouts = Vec::with_capacity(records.len());
    for r in &records {
        rollouts.push(view(&state, r).await?);
    }
    Ok(Json(RolloutList {
        ring: ring.to_string(),
        rollouts,
    }))
}

/// Read a rollout.
///
/// Its state (`planned`, `running`, `waiting_for_gate`, `paused`, `done`,
/// `aborted`), the step the ring holds of how many, the pending gate with
/// the acked share and the lagging clients by id, the time in the step
/// and an estimate to finish, every committed version and its log.
#[utoipa::path(
    get,
    path = "/v1/rings/{ring}/rollouts/{id}",
    tag = "rollouts",
    params(
        ("ring" = RingNameSchema, Path, description = super::RING_NAME_RULES),
        ("id" = u64, Path, minimum = 1, description = "The rollout's number in the ring."),
    ),
    responses(
        (status = 200, description = "The rollout", body = RolloutView),
        (status = 400, description = "Invalid ring name or rollout number", body = Problem, content_type = "application/problem+json"),
        ReadErrors,
    ),
    security(("bearer" = []))
)]
pub async fn get_rollout(
    State(state): State<AppState>,
    _: Reader,
    RingRolloutPath(ring, id): RingRolloutPath,
) -> Result<Json<RolloutView>, ApiError> {
    let r = state.service.rollouts().get(&ring, id).await?;
    Ok(Json(view(&state, &r).await?))
}

async fn control(
    state: &AppState,
    ring: &RingName,
    id: crate::ring::rollout::RolloutId,
    c: RolloutControl,
    role: crate::ring::Role,
) -> Result<Json<RolloutView>, ApiError> {
    let r = state.service.rollouts().control(ring, id, c, role).await?;
    Ok(Json(view(state, &r).await?))
}

/// Pause a rollout.
///
/// No further step is committed until it is resumed (or aborted).
#[utoipa::path(
    post,
    path = "/v1/rings/{ring}/rollouts/{id}/pause",
    tag = "rollouts",
    params(
        ("ring" = RingNameSchema, Path, description = super::RING_NAME_RULES),
        ("id" = u64, Path, minimum = 1, description = "The rollout's number in the ring."),
    ),
    responses(
        (status = 200, description = "Paused", body = RolloutView),
        (status = 400, description = "Invalid ring name or rollout number", body = Problem, content_type = "application/problem+json"),
        WriteErrors,
        (status = 404, description = "No such ring or rollout", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "Paused already, or finished (`reason: rollout_state`)", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn pause_rollout(
    State(state): State<AppState>,
    Writer(role): Writer,
    RingRolloutPath(ring, id): RingRolloutPath,
) -> Result<Json<RolloutView>, ApiError> {
    control(&state, &ring, id, RolloutControl::Pause, role).await
}

/// Resume a rollout.
///
/// Goes on from a pause; if the ring moved meanwhile (a forced change),
/// the next step is taken from the ring's current version.
#[utoipa::path(
    post,
    path = "/v1/rings/{ring}/rollouts/{id}/resume",
    tag = "rollouts",
    params(
        ("ring" = RingNameSchema, Path, description = super::RING_NAME_RULES),
        ("id" = u64, Path, minimum = 1, description = "The rollout's number in the ring."),
    ),
    responses(
        (status = 200, description = "Resumed", body = RolloutView),
        (status = 400, description = "Invalid ring name or rollout number", body = Problem, content_type = "application/problem+json"),
        WriteErrors,
        (status = 404, description = "No such ring or rollout", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "Not paused, or finished (`reason: rollout_state`)", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn resume_rollout(
    State(state): State<AppState>,
    Writer(role): Writer,
    RingRolloutPath(ring, id): RingRolloutPath,
) -> Result<Json<RolloutView>, ApiError> {
    control(&state, &ring, id, RolloutControl::Resume, role).await
}

/// Skip a rollout's pending gate once.
///
/// The next step is taken without waiting for the clients (a paused
/// rollout waiting at a gate resumes too); logged with the operator's role.
#[utoipa::path(
    post,
    path = "/v1/rings/{ring}/rollouts/{id}/advance",
    tag = "rollouts",
    params(
        ("ring" = RingNameSchema, Path, description = super::RING_NAME_RULES),
        ("id" = u64, Path, minimum = 1, description = "The rollout's number in the ring."),
    ),
    responses(
        (status = 200, description = "The gate is skipped", body = RolloutView),
        (status = 400, description = "Invalid ring name or rollout number", body = Problem, content_type = "application/problem+json"),
        WriteErrors,
        (status = 404, description = "No such ring or rollout", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "No step waits for its gate, or finished (`reason: rollout_state`)", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn advance_rollout(
    State(state): State<AppState>,
    Writer(role): Writer,
    RingRolloutPath(ring, id): RingRolloutPath,
) -> Result<Json<RolloutView>, ApiError> {
    control(&state, &ring, id, RolloutControl::Advance, role).await
}

/// Abort a rollout.
///
/// Walks the ring back to the version the rollout started from: step by
/// step through the committed steps, each gated like the way forward, or
/// with `"immediate": true` in one version without gates. Either way the
/// ring ends with the base version's fingerprint. The body may be omitted.
#[utoipa::path(
    post,
    path = "/v1/rings/{ring}/rollouts/{id}/abort",
    tag = "rollouts",
    params(
        ("ring" = RingNameSchema, Path, description = super::RING_NAME_RULES),
        ("id" = u64, Path, minimum = 1, description = "The rollout's number in the ring."),
    ),
    request_body(content = Option<AbortInput>, content_type = "application/json"),
    responses(
        (status = 200, description = "Aborting", body = RolloutView),
        (status = 400, description = "Invalid ring name, rollout number or body", body = Problem, content_type = "application/problem+json"),
        WriteErrors,
        (status = 404, description = "No such ring or rollout", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "Aborting already, or finished (`reason: rollout_state`)", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn abort_rollout(
    State(state): State<AppState>,
    Writer(role): Writer,
    RingRolloutPath(ring, id): RingRolloutPath,
    body: Bytes,
) -> Result<Json<RolloutView>, ApiError> {
    let value: serde_json::Value = if body.iter().all(u8::is_ascii_whitespace) {
        serde_json::Value::Null
    } else {
        serde_json::from_slice(&body).map_err(|e| {
            ApiError::new(
                ProblemKind::MalformedJson,
                format!("the body is not JSON: {e}"),
            )
        })?
    };
    // No body, or `null`: the defaults.
    let input: AbortInput = if value.is_null() {
        AbortInput::default()
    } else {
        from_value(value, "")?
    };
    let c = RolloutControl::Abort {
        immediate: input.immediate,
    };
    control(&state, &ring, id, c, role).await
}

/// The routes of `/v1/rings/{ring}/rollouts`, each with its OpenAPI operation.
pub(super) fn routes() -> utoipa_axum::router::OpenApiRouter<AppState> {
    utoipa_axum::router::OpenApiRouter::new()
        .routes(utoipa_axum::routes!(start_rollout, list_rollouts))
        .routes(utoipa_axum::routes!(get_rollout))
        .routes(utoipa_axum::routes!(pause_rollout))
        .routes(utoipa_axum::routes!(resume_rollout))
        .routes(utoipa_axum::routes!(advance_rollout))
        .routes(utoipa_axum::routes!(abort_rollout))
}
