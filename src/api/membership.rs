//! The automatic transitions as the API shows them (`membership` in a
//! ring's summary) and the operator's override of the partition guard:
//! `POST /v1/rings/{ring}/nodes/{node}/transition`.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;

use super::auth::Writer;
use super::openapi::error_responses::WriteErrors;
use super::openapi::schemas::RingNameSchema;
use super::paths::RingNodePath;
use super::problem::{ApiError, Problem};
use super::AppState;
use crate::ring::Snapshot;
use crate::service::GuardRule;
use crate::service::{MembershipStatus, TransitionKind};
use crate::wire::schema::NodeIdSchema;
use crate::wire::{
    ChangeResult, GuardRuleName, GuardView, MembershipStatusView, PendingTransitionView,
    RingSummary, TransitionName,
};

fn rule_name(rule: GuardRule) -> GuardRuleName {
    match rule {
        GuardRule::StoreUnreachable => GuardRuleName::StoreUnreachable,
        GuardRule::UnhealthyFraction => GuardRuleName::UnhealthyFraction,
        GuardRule::RateLimit => GuardRuleName::RateLimit,
    }
}

/// The wire form of a ring's membership status.
pub fn status_view(status: &MembershipStatus) -> MembershipStatusView {
    MembershipStatusView {
        guard: GuardView {
            blocked: status.blocked.is_some(),
            rule: status.blocked.as_ref().map(|b| rule_name(b.rule)),
            detail: status.blocked.as_ref().map(|b| b.detail.clone()),
        },
        pending: status
            .pending
            .iter()
            .map(|t| PendingTransitionView {
                node: t.node.to_string(),
                transition: match t.kind {
                    TransitionKind::Drain => TransitionName::Drain,
                    TransitionKind::Remove => TransitionName::Remove,
                    TransitionKind::Activate => TransitionName::Activate,
                },
                reason: t.reason.clone(),
            })
            .collect(),
    }
}

/// The summary of `snapshot` with its ring's membership status.
pub fn with_status(state: &AppState, snapshot: &Snapshot) -> RingSummary {
    let mut summary = RingSummary::from(snapshot);
    summary.membership = Some(status_view(
        &state.service.leases().membership_status(&snapshot.ring),
    ));
    summary
}

/// Override the partition guard for one node.
///
/// Applies the node's due automatic transition (drain or removal, or a
/// joining node's activation) now, whatever the partition guard says, as
/// one version whose reason names the override and the transition's cause.
/// 409 when no transition is due for the node.
#[utoipa::path(
    post,
    path = "/v1/rings/{ring}/nodes/{node}/transition",
    tag = "nodes",
    params(
        ("ring" = RingNameSchema, Path, description = super::RING_NAME_RULES),
        ("node" = NodeIdSchema, Path, description = super::NODE_ID_RULES),
    ),
    responses(
        (status = 200, description = "Applied: a new version", body = ChangeResult),
        (status = 400, description = "Invalid ring name or node id", body = Problem, content_type = "application/problem+json"),
        WriteErrors,
        (status = 404, description = "No such ring or node", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "No automatic transition is due for the node", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "A `table` ring cannot make the transition: `unsatisfiable`, with its `reason`", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn post_transition(
    State(state): State<AppState>,
    Writer(role): Writer,
    RingNodePath(ring, node): RingNodePath,
) -> Result<Response, ApiError> {
    let outcome = state
        .service
        .leases()
        .override_transition(&ring, &node, role)
        .await?;
    Ok(ChangeResult::from_outcome(&ring, &outcome).respond(StatusCode::OK))
}

/// The override's route, with its OpenAPI operation.
pub(super) fn routes() -> utoipa_axum::router::OpenApiRouter<AppState> {
    utoipa_axum::router::OpenApiRouter::new().routes(utoipa_axum::routes!(post_transition))
}
