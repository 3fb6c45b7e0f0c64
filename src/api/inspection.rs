//! Inspection: key lookups (single and batch), exact ownership, and the
//! movement between two versions.

use axum::extract::State;
use axum::Json;

use super::auth::Reader;
use super::extract::{ApiJson, ApiQuery};
use super::keys;
use super::keys::MAX_LOOKUP_KEYS;
use super::lookup_answer::{BatchAnswer, SingleAnswer};
use super::openapi::error_responses::{JsonBodyErrors, ReadTokenError, VersionedReadErrors};
use super::openapi::schemas::RingNameSchema;
use super::paths::{optional_version, RingPath};
use super::problem::{ApiError, Problem, ProblemKind};
use super::AppState;
use crate::placement::config::MAX_REPLICATION_FACTOR;
use crate::placement::{OwnershipBasis, Placement};
use crate::wire::{
    DiffQuery, DiffResult, DiffView, LookupBatch, LookupBatchInput, LookupBatchResult, LookupQuery,
    LookupResult, NodeShare, OwnershipBasisName, OwnershipView, VersionQuery,
};

fn replicas(placement: &Placement, requested: Option<u32>) -> Result<u32, ApiError> {
    match requested {
        None => Ok(placement.config().replication_factor),
        Some(r) if (1..=MAX_REPLICATION_FACTOR).contains(&r) => Ok(r),
        Some(r) => Err(ApiError::invalid(
            "replicas",
            format!("replicas {r} is out of range: ask for 1 to {MAX_REPLICATION_FACTOR}"),
        )),
    }
}

/// Look up a key.
///
/// The owner and preference list of one key. Keys are bytes: `key` sends
/// them as UTF-8 text, `key_b64` as standard base64 (exactly one of the
/// two); the answer echoes the key in the form it was sent.
#[utoipa::path(
    get,
    path = "/v1/rings/{ring}/lookup",
    tag = "inspection",
    params(("ring" = RingNameSchema, Path, description = super::RING_NAME_RULES), LookupQuery),
    responses(
        (status = 200, description = "Where the key lives", body = LookupResult),
        (status = 400, description = "Missing key, both `key` and `key_b64`, a `key` that is not UTF-8, invalid base64, replicas out of range, unknown parameter", body = Problem, content_type = "application/problem+json"),
        VersionedReadErrors,
    ),
    security(("bearer" = []))
)]
pub async fn lookup(
    State(state): State<AppState>,
    _: Reader,
    RingPath(ring): RingPath,
    ApiQuery(query): ApiQuery<LookupQuery>,
) -> Result<axum::response::Response, ApiError> {
    let key = keys::single(query.key, query.key_b64)?;
    let version = optional_version(query.version)?;
    let (version, placement) = state.service.rings().placement(&ring, version).await?;
    let r = replicas(&placement, query.replicas)?;
    Ok(SingleAnswer {
        version,
        placement: &placement,
        replicas: r,
        key: &key,
    }
    .into_response())
}

/// Look up many keys.
///
/// Up to 10,000 keys in one request, as `keys` (text) or `keys_b64`
/// (standard base64), exactly one; results come back in the order the
/// keys were given, each echoing its key in the form it was sent. A read,
/// so the read token suffices.
#[utoipa::path(
    post,
    path = "/v1/rings/{ring}/lookup",
    tag = "inspection",
    params(("ring" = RingNameSchema, Path, description = super::RING_NAME_RULES)),
    request_body(content = LookupBatchInput, content_type = "application/json"),
    responses(
        (status = 200, description = "Where each key lives", body = LookupBatchResult),
        (status = 400, description = "Over 10,000 keys, neither or both of `keys` and `keys_b64`, invalid base64, replicas out of range, unknown field, malformed JSON", body = Problem, content_type = "application/problem+json"),
        VersionedReadErrors, JsonBodyErrors,
    ),
    security(("bearer" = []))
)]
pub async fn lookup_batch(
    State(state): State<AppState>,
    _: Reader,
    RingPath(ring): RingPath,
    ApiJson(body): ApiJson<LookupBatch>,
) -> Result<axum::response::Response, ApiError> {
    let given = [("keys", &body.keys), ("keys_b64", &body.keys_b64)];
    for (field, list) in given {
        let n = list.as_ref().map_or(0, Vec::len);
        if n > MAX_LOOKUP_KEYS {
            return Err(ApiError::new(
                ProblemKind::TooManyKeys,
                format!(
                    "{n} keys given; one request accepts at most {MAX_LOOKUP_KEYS}: split the batch"
                ),
            )
            .with_field(field));
        }
    }
    let lookup_keys = keys::batch(body.keys, body.keys_b64)?;
    let version = optional_version(body.version)?;
    let (version, placement) = state.service.rings().placement(&ring, version).await?;
    let r = replicas(&placement, body.replicas)?;
    Ok(BatchAnswer {
        version,
        placement: &placement,
        replicas: r,
        keys: &lookup_keys,
    }
    .into_response())
}

/// Read ownership.
///
/// Each active node's exact share of the keyspace (computed from the
/// layout, not sampled), its share by weight and their ratio, plus the
/// largest ratio.
#[utoipa::path(
    get,
    path = "/v1/rings/{ring}/ownership",
    tag = "inspection",
    params(("ring" = RingNameSchema, Path, description = super::RING_NAME_RULES), VersionQuery),
    responses(
        (status = 200, description = "Ownership", body = OwnershipView),
        (status = 400, description = "Invalid ring name or version", body = Problem, content_type = "application/problem+json"),
        VersionedReadErrors,
    ),
    security(("bearer" = []))
)]
pub async fn ownership(
    State(state): State<AppState>,
    _: Reader,
    RingPath(ring): RingPath,
    ApiQuery(query): ApiQuery<VersionQuery>,
) -> Result<Json<OwnershipView>, ApiError> {
    let version = optional_version(query.version)?;
    let (version, placement) = state.service.rings().placement(&ring, version).await?;
    let o = placement.ownership();
    Ok(Json(OwnershipView {
        ring: ring.to_string(),
        version,
        basis: match o.basis {
            OwnershipBasis::Arcs => OwnershipBasisName::Arcs,
            OwnershipBasis::TableEntries => OwnershipBasisName::TableEntries,
            OwnershipBasis::Buckets => OwnershipBasisName::Buckets,
            OwnershipBasis::Weights => OwnershipBasisName::Weights,
            OwnershipBasis::Partitions => OwnershipBasisName::Partitions,
        },
        total_units: o.total_units.to_string(),
        nodes: o
            .nodes
            .into_iter()
            .map(|n| NodeShare {
                id: n.id.to_string(),
                units: n.units.to_string(),
                share: n.share,
                expected_share: n.expected_share,
                ratio: n.ratio,
                replicas: n.replicas,
            })
            .collect(),
        max_over_mean: o.max_over_mean,
    }))
}

/// Compare two versions.
///
/// What moves from one retained version to another: the moved fraction,
/// each node's gain and loss, the transfers and the first 1,000 moved
/// ranges. Exact unless the two versions hash keys differently (then
/// `basis` is `sampled`).
#[utoipa::path(
    get,
    path = "/v1/rings/{ring}/diff",
    tag = "inspection",
    params(("ring" = RingNameSchema, Path, description = super::RING_NAME_RULES), DiffQuery),
    responses(
        (status = 200, description = "The movement", body = DiffResult),
        (status = 400, description = "Invalid ring name, missing `from`", body = Problem, content_type = "application/problem+json"),
        ReadTokenError,
        (status = 404, description = "No such ring, or a version never existed", body = Problem, content_type = "application/problem+json"),
        (status = 410, description = "A version has been pruned", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn diff(
    State(state): State<AppState>,
    _: Reader,
    RingPath(ring): RingPath,
    ApiQuery(query): ApiQuery<DiffQuery>,
) -> Result<Json<DiffResult>, ApiError> {
    // Version errors name the parameter they came from.
    let rename = |name: &'static str| {
        move |e: ApiError| match e.field.as_deref() {
            Some("version") => e.with_field(name),
            _ => e,
        }
    };
    let from = optional_version(Some(query.from)).map_err(rename("from"))?;
    let to = optional_version(query.to).map_err(rename("to"))?;
    let (from, old) = state
        .service
        .rings()
        .placement(&ring, from)
        .await
        .map_err(|e| rename("from")(e.into()))?;
    let (to, new) = state
        .service
        .rings()
        .placement(&ring, to)
        .await
        .map_err(|e| rename("to")(e.into()))?;
    // A sampled diff hashes 65,536 keys into both placements: seconds for
    // a large rendezvous ring. It runs on the blocking pool, so the async
    // workers keep serving watches and writes meanwhile, and at most
    // DIFF_WORKERS at a time, so a burst of diffs cannot take every core.
    let _permit = DIFFS.acquire().await.map_err(ApiError::internal)?;
    let diff = tokio::task::spawn_blocking(move || DiffView::from(&old.diff(&new)))
        .await
        .map_err(ApiError::internal)?;
    Ok(Json(DiffResult {
        ring: ring.to_string(),
        from,
        to,
        diff,
    }))
}

/// Diffs computed at once, server-wide; the others wait their turn.
const DIFF_WORKERS: usize = 2;

static DIFFS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(DIFF_WORKERS);

/// The routes of `…/lookup` (GET and POST), `…/ownership` and `…/diff`, each
/// with its OpenAPI operation.
pub(super) fn routes() -> utoipa_axum::router::OpenApiRouter<AppState> {
    utoipa_axum::router::OpenApiRouter::new()
        .routes(utoipa_axum::routes!(lookup, lookup_batch))
        .routes(utoipa_axum::routes!(ownership))
        .routes(utoipa_axum::routes!(diff))
}
