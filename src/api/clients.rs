//! Client convergence: clients report the version they applied and the
//! fingerprint they computed; operators see who is behind or divergent.
//!
//! Acks are sent with the read token (clients never hold the admin token)
//! and kept by the store for the server's `--client-ttl`; see
//! `docs/convergence.md`.

use axum::extract::State;
use axum::http::header::CONNECTION;
use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};
use axum::Json;

use super::auth::Reader;
use super::extract::ApiJson;
use super::openapi::error_responses::{ReadErrors, StoreUnreachable};
use super::openapi::schemas::{ClientIdSchema, RingNameSchema, CLIENT_ID_RULES};
use super::paths::{RingClientPath, RingPath};
use super::problem::{ApiError, Problem};
use super::AppState;
use crate::placement::Fingerprint;
use crate::ring::{ApplyFailure, ClientId};
use crate::service::{AckReport, ClientStatus, Convergence};
use crate::wire::{
    AckInput, AckResult, ApplyFailureInput, ApplyFailureView, ClientList, ClientSummary, ClientView,
};

impl AckInput {
    /// The report of `client_id`, validated.
    fn validate(self, client_id: ClientId) -> Result<AckReport, ApiError> {
        let version = match self.version {
            None => {
                return Err(ApiError::invalid(
                    "version",
                    "`version` is required: the ring version the client applied",
                ))
            }
            Some(0) => {
                return Err(ApiError::invalid(
                    "version",
                    "version 0 does not exist: versions start at 1",
                ))
            }
            Some(v) => v,
        };
        let text = self.fingerprint.ok_or_else(|| {
            ApiError::invalid(
                "fingerprint",
                "`fingerprint` is required: the placement fingerprint the client computed",
            )
        })?;
        let fingerprint = text.parse::<Fingerprint>().map_err(|e| {
            let shown: String = text.chars().take(100).collect();
            ApiError::invalid(
                "fingerprint",
                format!(
                    "fingerprint `{shown}` is invalid: {e}, as in the snapshot's `fingerprint`"
                ),
            )
        })?;
        let failure = self.failure.map(|f| f.validate(version)).transpose()?;
        Ok(AckReport {
            client_id,
            version,
            fingerprint,
            kind: self.kind.unwrap_or_default(),
            failure,
        })
    }
}

impl ApplyFailureInput {
    /// The failure of a client that applied `applied`, validated.
    fn validate(self, applied: u64) -> Result<ApplyFailure, ApiError> {
        let version = match self.version {
            None => {
                return Err(ApiError::invalid(
                    "failure.version",
                    "`failure.version` is required: the version the client could not apply",
                ))
            }
            Some(v) if v <= applied => {
                return Err(ApiError::invalid(
                    "failure.version",
                    format!(
                        "`failure.version` {v} is not newer than the applied version {applied}: \
                         report only a newer version that failed, and leave `failure` out once \
                         a version applies"
                    ),
                ))
            }
            Some(v) => v,
        };
        let error = self.error.unwrap_or_default();
        if error.trim().is_empty() {
            return Err(ApiError::invalid(
                "failure.error",
                "`failure.error` is required: what went wrong, for a person",
            ));
        }
        let length = error.chars().count();
        if length > ApplyFailure::MAX_ERROR {
            return Err(ApiError::invalid(
                "failure.error",
                format!(
                    "`failure.error` is {length} characters; keep it to {} (the end of a long \
                     message is usually enough)",
                    ApplyFailure::MAX_ERROR
                ),
            ));
        }
        Ok(ApplyFailure { version, error })
    }
}

/// Record a client's applied version.
///
/// A client sends this after applying a version, with the fingerprint it
/// computed; the latest ack per client replaces earlier ones and counts
/// for the server's client TTL (`--client-ttl`, default 5 minutes), so
/// clients should re-ack at least that often. Needs the read token.
#[utoipa::path(
    post,
    path = "/v1/rings/{ring}/clients/{client_id}/ack",
    tag = "clients",
    params(
        ("ring" = RingNameSchema, Path, description = super::RING_NAME_RULES),
        ("client_id" = ClientIdSchema, Path, description = CLIENT_ID_RULES),
    ),
    request_body = AckInput,
    responses(
        (status = 200, description = "The ack was recorded", body = AckResult),
        (status = 400, description = "Invalid ring name, client id, version or fingerprint, or a malformed body", body = Problem, content_type = "application/problem+json"),
        ReadErrors, StoreUnreachable,
        (status = 409, description = "The version is newer than the ring's current version; `current_version` says which that is", body = Problem, content_type = "application/problem+json"),
        (status = 415, description = "The body is not JSON", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn post_ack(
    State(state): State<AppState>,
    _: Reader,
    RingClientPath(ring, client_id): RingClientPath,
    ApiJson(input): ApiJson<AckInput>,
) -> Result<Response, ApiError> {
    let report = input.validate(client_id)?;
    let (current, client) = state
        .service
        .clients()
        .record_ack(&ring, report, state.settings.client_ttl)
        .await?;
    let result = AckResult {
        ring: ring.to_string(),
        version: current.version,
        fingerprint: current.fingerprint.to_string(),
        client: client_view(&client),
    };
    // An ack is sent about once a minute beside a watch, which holds its
    // own HTTP/1.1 connection; kept alive, the ack's connection would sit
    // idle beside it until the client's pool or ringd's header-read
    // timeout closed it, so a fleet would hold twice its size in server
    // descriptors (10,000 followers held 20,000 in the reconnect storm,
    // past this machine's limit). Closing it costs the client one
    // handshake a minute, in whatever language it is written. Over
    // HTTP/2 hyper drops the header and the stream ends as usual.
    Ok((
        [(CONNECTION, HeaderValue::from_static("close"))],
        Json(result),
    )
        .into_response())
}

/// List the clients of a ring.
///
/// Every client whose latest ack has not expired, sorted by id, with how
/// far behind the current version it is and whether its fingerprint
/// matches the server's for the version it applied.
#[utoipa::path(
    get,
    path = "/v1/rings/{ring}/clients",
    tag = "clients",
    params(("ring" = RingNameSchema, Path, description = super::RING_NAME_RULES)),
    responses(
        (status = 200, description = "The ring's live clients", body = ClientList),
        (status = 400, description = "Invalid ring name", body = Problem, content_type = "application/problem+json"),
        ReadErrors, StoreUnreachable,
    ),
    security(("bearer" = []))
)]
pub async fn list_clients(
    State(state): State<AppState>,
    _: Reader,
    RingPath(ring): RingPath,
) -> Result<Response, ApiError> {
    let convergence = state.service.clients().of(&ring).await?;
    Ok(Json(client_list(&convergence)).into_response())
}

/// The response body for a ring's convergence.
fn client_list(c: &Convergence) -> ClientList {
    let s = &c.summary;
    ClientList {
        ring: c.current.ring.to_string(),
        version: c.current.version,
        fingerprint: c.current.fingerprint.to_string(),
        clients: c.clients.iter().map(client_view).collect(),
        summary: ClientSummary {
            clients: s.clients,
            on_latest: s.on_latest,
            on_latest_share: s.on_latest_share,
            divergent: s.divergent,
            failing: s.failing,
        },
    }
}

/// The response body for one client's status.
fn client_view(c: &ClientStatus) -> ClientView {
    ClientView {
        client_id: c.ack.client_id.to_string(),
        version: c.ack.version,
        fingerprint: c.ack.fingerprint.to_string(),
        lag: c.lag,
        last_seen: c.ack.last_seen,
        expires_at: c.ack.expires_at,
        on_latest: c.on_latest,
        matches: c.matches,
        divergent: c.divergent,
        kind: c.ack.kind,
        failure: c.ack.failure.as_ref().map(|f| ApplyFailureView {
            version: f.version,
            error: f.error.clone(),
        }),
    }
}

/// The routes of `…/clients` and `…/clients/{client_id}/ack`, each with its
/// OpenAPI operation.
pub(super) fn routes() -> utoipa_axum::router::OpenApiRouter<AppState> {
    utoipa_axum::router::OpenApiRouter::new()
        .routes(utoipa_axum::routes!(list_clients))
        .routes(utoipa_axum::routes!(post_ack))
}
