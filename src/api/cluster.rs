//! `GET /v1/cluster`: the instances sharing the store and which of them is
//! the decision-maker (see `docs/membership.md`).

use axum::extract::State;
use axum::Json;

use super::auth::Reader;
use super::openapi::error_responses::{ReadTokenError, StoreUnreachable};
use super::problem::ApiError;
use super::AppState;
use crate::store::leadership::ClusterState;
use crate::wire::{ClusterLeaderView, ClusterView, InstanceView, StoreKindName};

/// The cluster.
///
/// The store the instances share, the decision-maker of automatic
/// membership changes (its instance, URL, term and since when it leads)
/// and every live instance, sorted by id. Every instance answers the same,
/// read from the store. With SQLite there is one instance, always the
/// decision-maker, in term 1.
#[utoipa::path(
    get,
    path = "/v1/cluster",
    tag = "operations",
    responses(
        (status = 200, description = "The instances and the decision-maker", body = ClusterView),
        ReadTokenError, StoreUnreachable,
    ),
    security(("bearer" = []))
)]
pub async fn get_cluster(
    State(state): State<AppState>,
    _: Reader,
) -> Result<Json<ClusterView>, ApiError> {
    Ok(Json(view(state.service.cluster().await?)))
}

/// The response body for `cluster`.
fn view(cluster: ClusterState) -> ClusterView {
    let leader_id = cluster.leader.as_ref().map(|l| l.instance.clone());
    ClusterView {
        store: match cluster.store {
            "etcd" => StoreKindName::Etcd,
            _ => StoreKindName::Sqlite,
        },
        leader: cluster.leader.map(|l| ClusterLeaderView {
            instance: l.instance.to_string(),
            url: l.url,
            term: l.term.0,
            since: l.since,
        }),
        instances: cluster
            .instances
            .into_iter()
            .map(|i| InstanceView {
                leader: leader_id.as_ref() == Some(&i.id),
                id: i.id.to_string(),
                url: i.url,
                version: i.version,
                started_at: i.started_at,
            })
            .collect(),
    }
}

/// The route of `/v1/cluster`, with its OpenAPI operation.
pub(super) fn routes() -> utoipa_axum::router::OpenApiRouter<AppState> {
    utoipa_axum::router::OpenApiRouter::new().routes(utoipa_axum::routes!(get_cluster))
}
