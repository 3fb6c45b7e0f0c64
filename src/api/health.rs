//! Operations endpoints: liveness, readiness and Prometheus metrics.

use std::sync::atomic::Ordering;

use axum::extract::State;
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;

use super::auth::Reader;
use super::openapi::error_responses::ReadTokenError;
use super::problem::{ApiError, Problem, ProblemKind};
use super::AppState;
use crate::service::rollouts::gate_of;

/// A health answer.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Health {
    /// `ok` (alive) or `ready` (serving).
    pub status: &'static str,
}

/// Liveness.
///
/// 200 while the process serves HTTP at all. Needs no token.
#[utoipa::path(
    get,
    path = "/healthz",
    tag = "operations",
    responses((status = 200, description = "Alive", body = Health))
)]
pub async fn healthz() -> Json<Health> {
    Json(Health { status: "ok" })
}

/// Readiness.
///
/// 200 when the store answers and the service is not shutting down; 503
/// otherwise, including while the store is unreachable and reads are
/// served from memory, possibly stale. Needs no token.
#[utoipa::path(
    get,
    path = "/readyz",
    tag = "operations",
    responses(
        (status = 200, description = "Ready", body = Health),
        (status = 503, description = "Shutting down, or the store does not answer or is not being followed", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn readyz(State(state): State<AppState>) -> Result<Json<Health>, ApiError> {
    if !state.ready.load(Ordering::Relaxed) {
        return Err(ApiError::new(
            ProblemKind::Unavailable,
            "ringd is shutting down",
        ));
    }
    if !state.service.freshness().is_current() {
        return Err(ApiError::new(
            ProblemKind::Unavailable,
            "the store is unreachable: rings held in memory are still served, marked possibly stale, and changes fail until it is back",
        ));
    }
    state.service.freshness().ready().await?;
    Ok(Json(Health { status: "ready" }))
}

/// Metrics.
///
/// Prometheus text format: `ringd_http_requests_total` and the
/// `ringd_http_request_duration_seconds` histogram by route template,
/// method and status; `ringd_ring_version` and `ringd_ring_nodes` per ring;
/// `ringd_leader` and `ringd_leader_term` for the decision-maker;
/// `ringd_rollout_step`, `ringd_rollout_steps`, `ringd_rollout_state` and
/// `ringd_rollout_gate_share` for each ring's active or most recent
/// rollout, and `ringd_rollout_steps_committed_total`.
#[utoipa::path(
    get,
    path = "/metrics",
    tag = "operations",
    responses(
        (status = 200, description = "Metrics", content_type = "text/plain; version=0.0.4", body = String),
        ReadTokenError,
    ),
    security(("bearer" = []))
)]
pub async fn metrics(State(state): State<AppState>, _: Reader) -> Result<Response, ApiError> {
    let rings = state.service.rings().list().await?;
    let mut body = state.metrics.render(&rings);
    body.push_str(&super::metrics::render_hub(&state.service.hub().stats));
    body.push_str(&state.admission.render_metrics());
    let health: Vec<_> = rings
        .iter()
        .map(|s| (s.ring.clone(), state.service.leases().health_counts(s)))
        .collect();
    body.push_str(&super::metrics::render_health(&health));
    body.push_str(&super::metrics::render_leadership(
        state.service.leader_term(),
    ));
    let guard: Vec<_> = rings
        .iter()
        .map(|s| {
            let status = state.service.leases().membership_status(&s.ring);
            (s.ring.clone(), status.blocked.map(|b| b.rule))
        })
        .collect();
    body.push_str(&super::metrics::render_guard(&guard));
    let convergence = state.service.clients().all().await;
    body.push_str(&super::metrics::render_clients(&convergence));
    let rollouts: Vec<_> = state
        .service
        .rollouts()
        .latest(&rings)
        .await
        .into_iter()
        .filter_map(|r| {
            // A ring whose acks could not be read is left out, as above.
            let c = convergence.iter().find(|c| c.current.ring == r.ring)?;
            let share = gate_of(&r, c).share();
            Some((r, share))
        })
        .collect();
    body.push_str(&super::rollout_metrics::render_rollouts(
        &rollouts,
        &state.service.rollouts().commits(),
    ));
    Ok((
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        )],
        body,
    )
        .into_response())
}

/// The routes of `/healthz`, `/readyz` and `/metrics`, each with its OpenAPI
/// operation.
pub(super) fn routes() -> utoipa_axum::router::OpenApiRouter<AppState> {
    utoipa_axum::router::OpenApiRouter::new()
        .routes(utoipa_axum::routes!(healthz))
        .routes(utoipa_axum::routes!(readyz))
        .routes(utoipa_axum::routes!(metrics))
}
