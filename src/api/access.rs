//! `GET /v1/access`: what the presented token may do.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::Json;

use super::AppState;
use crate::wire::AccessView;

/// What the presented credentials may do.
///
/// Which token the `Authorization` header carries (none, the read
/// token, the admin token, or an invalid one), whether it may read and
/// change rings, and which tokens the server requires. Never refused: a
/// console asks this first, to prompt for a token or to stay read-only.
/// Like Consul's `/v1/acl/token/self`, it tells nothing about a token but
/// what the request presented.
#[utoipa::path(
    get,
    path = "/v1/access",
    tag = "operations",
    responses(
        (status = 200, description = "What these credentials may do", body = AccessView),
    ),
    security((), ("bearer" = []))
)]
pub async fn get_access(State(state): State<AppState>, headers: HeaderMap) -> Json<AccessView> {
    Json(state.auth.access(&headers))
}

/// The route of `/v1/access`, with its OpenAPI operation.
pub(super) fn routes() -> utoipa_axum::router::OpenApiRouter<AppState> {
    utoipa_axum::router::OpenApiRouter::new().routes(utoipa_axum::routes!(get_access))
}
