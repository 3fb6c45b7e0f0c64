//! Client convergence: clients report the version they applied and the
//! fingerprint they computed; operators see who is behind or divergent.
//!
//! Acks are sent with the read token (clients never hold the admin token)
//! and kept by the store for the server's `--client-ttl`; see
//! `docs/convergence.md`.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use utoipa::ToSchema;

use super::auth::Reader;
use super::extract::{ring_name, ApiJson, ApiPath};
use super::problem::{ApiError, Problem, ProblemKind};
use super::schemas::{ClientIdSchema, FingerprintSchema, RingNameSchema, VersionSchema};
use super::AppState;
use crate::placement::{json_integer, Fingerprint};
use crate::ring::{ClientId, RingName, Snapshot};
use crate::store::ClientAck;
use crate::wire::{AckResult, ClientList, ClientSummary, ClientView};

/// Allowed client ids, for the OpenAPI descriptions.
pub const CLIENT_ID_RULES: &str = "Client id: 1–128 characters of `A-Z`, `a-z`, `0-9`, `.`, `_`, `-` and `:`, starting with a letter or digit (e.g. a host or pod name).";

/// Longest TTL honoured: keeps `now + ttl` far from the calendar's end
/// whatever the configuration says.
const MAX_TTL: std::time::Duration = std::time::Duration::from_secs(366 * 24 * 3600);

/// The body of an ack; unknown fields are refused.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[schema(example = json!({"version": 3, "fingerprint": "5f0c0e9ac5d4d3b1a0e1f2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7"}))]
#[serde(deny_unknown_fields)]
pub struct AckInput {
    /// The ring version the client applied: at least 1 and at most the
    /// ring's current version. Older (even pruned) versions are accepted.
    #[schema(value_type = VersionSchema, required = true)]
    #[serde(default, deserialize_with = "json_integer::option")]
    pub version: Option<u64>,
    /// The placement fingerprint the client computed for that version:
    /// 64 lowercase hex digits.
    #[schema(value_type = FingerprintSchema, required = true)]
    pub fingerprint: Option<String>,
}

impl AckInput {
    /// The version and fingerprint, validated.
    fn validate(self) -> Result<(u64, Fingerprint), ApiError> {
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
        Ok((version, fingerprint))
    }
}

impl ClientView {
    fn of(ack: &ClientAck, current: &Snapshot, known: &BTreeMap<u64, Fingerprint>) -> Self {
        let matches = known.get(&ack.version).map(|f| *f == ack.fingerprint);
        Self {
            client_id: ack.client_id.to_string(),
            version: ack.version,
            fingerprint: ack.fingerprint.to_string(),
            lag: current.version.saturating_sub(ack.version),
            last_seen: ack.last_seen,
            expires_at: ack.expires_at,
            on_latest: ack.version >= current.version,
            matches,
            divergent: matches == Some(false),
        }
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
        (status = 401, description = "No valid read token", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such ring", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The version is newer than the ring's current version; `current_version` says which that is", body = Problem, content_type = "application/problem+json"),
        (status = 415, description = "The body is not JSON", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "The store is unreachable", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn post_ack(
    State(state): State<AppState>,
    _: Reader,
    ApiPath((ring, client)): ApiPath<(String, String)>,
    ApiJson(input): ApiJson<AckInput>,
) -> Result<Response, ApiError> {
    let ring = ring_name(&ring)?;
    let client_id =
        ClientId::new(client).map_err(|e| ApiError::invalid("client_id", e.to_string()))?;
    let (version, fingerprint) = input.validate()?;
    let mut current = state.service.current(&ring).await?.snapshot.clone();
    if version > current.version {
        // The client may have the version from another instance whose
        // commit this one has not seen yet: ask the store before refusing.
        current = Arc::new(state.service.store().latest(&ring).await?);
        if version > current.version {
            return Err(ApiError::new(
                ProblemKind::Conflict,
                format!(
                    "ring `{ring}` is at version {}; version {version} does not exist yet: ack only versions the server sent",
                    current.version
                ),
            )
            .with_field("version")
            .with_version(current.version));
        }
    }
    let last_seen = crate::service::now();
    let ttl = time::Duration::try_from(state.settings.client_ttl.min(MAX_TTL))
        .unwrap_or(time::Duration::ZERO);
    let ack = ClientAck {
        client_id,
        version,
        fingerprint,
        last_seen,
        expires_at: last_seen + ttl,
    };
    let known = known_fingerprints(&state, &ring, &current, std::slice::from_ref(&ack)).await?;
    state.service.store().put_ack(&ring, &ack).await?;
    let result = AckResult {
        ring: ring.to_string(),
        version: current.version,
        fingerprint: current.fingerprint.to_string(),
        client: ClientView::of(&ack, &current, &known),
    };
    Ok(Json(result).into_response())
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
        (status = 401, description = "No valid read token", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such ring", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "The store is unreachable", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn list_clients(
    State(state): State<AppState>,
    _: Reader,
    ApiPath(ring): ApiPath<String>,
) -> Result<Response, ApiError> {
    let ring = ring_name(&ring)?;
    let current = state.service.current(&ring).await?.snapshot.clone();
    let list = convergence(&state, &ring, current).await?;
    Ok(Json(list).into_response())
}

/// The convergence metrics, in the Prometheus text format, appended to
/// `/metrics`: per ring, the live clients, the share of them on the latest
/// version (only for rings with clients: a share of nobody is undefined)
/// and the divergent ones. A ring whose acks cannot be read is left out.
pub async fn metrics_text(state: &AppState) -> String {
    let rings = match state.service.list().await {
        Ok(rings) => rings,
        Err(e) => {
            tracing::warn!(error = %e, "cannot list rings for client metrics");
            return String::new();
        }
    };
    let mut lists = Vec::with_capacity(rings.len());
    for snapshot in rings {
        let ring = snapshot.ring.clone();
        match convergence(state, &ring, Arc::new(snapshot)).await {
            Ok(list) => lists.push(list),
            Err(e) => tracing::warn!(ring = %ring, error = %e.detail, "cannot read client acks"),
        }
    }
    super::metrics::render_clients(&lists)
}

/// The live clients of `ring`, judged against `current` (or a newer
/// version, if some client already acked one this instance has not seen).
async fn convergence(
    state: &AppState,
    ring: &RingName,
    mut current: Arc<Snapshot>,
) -> Result<ClientList, ApiError> {
    let store = state.service.store();
    let acks = store.list_acks(ring, crate::service::now()).await?;
    if acks.iter().any(|a| a.version > current.version) {
        current = Arc::new(store.latest(ring).await?);
    }
    let known = known_fingerprints(state, ring, &current, &acks).await?;
    let clients: Vec<ClientView> = acks
        .iter()
        .map(|a| ClientView::of(a, &current, &known))
        .collect();
    let count = |f: fn(&ClientView) -> bool| clients.iter().filter(|c| f(c)).count() as u64;
    let on_latest = count(|c| c.on_latest);
    let summary = ClientSummary {
        clients: clients.len() as u64,
        on_latest,
        on_latest_share: (!clients.is_empty()).then(|| on_latest as f64 / clients.len() as f64),
        divergent: count(|c| c.divergent),
    };
    Ok(ClientList {
        ring: ring.to_string(),
        version: current.version,
        fingerprint: current.fingerprint.to_string(),
        clients,
        summary,
    })
}

/// The server's fingerprint of every version `acks` name that is still
/// retained: the current one from memory, older ones from one history
/// read (never one read per client).
async fn known_fingerprints(
    state: &AppState,
    ring: &RingName,
    current: &Snapshot,
    acks: &[ClientAck],
) -> Result<BTreeMap<u64, Fingerprint>, ApiError> {
    let mut known = BTreeMap::from([(current.version, current.fingerprint)]);
    let oldest = acks
        .iter()
        .map(|a| a.version)
        .filter(|v| *v < current.version)
        .min();
    if let Some(oldest) = oldest {
        let history = state
            .service
            .store()
            .history_after(ring, oldest.saturating_sub(1))
            .await?;
        known.extend(history.into_iter().map(|e| (e.version, e.fingerprint)));
    }
    Ok(known)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(clients: u64, on_latest: u64, divergent: u64) -> ClientList {
        ClientList {
            ring: "r".into(),
            version: 1,
            fingerprint: String::new(),
            clients: Vec::new(),
            summary: ClientSummary {
                clients,
                on_latest,
                on_latest_share: (clients > 0).then(|| on_latest as f64 / clients as f64),
                divergent,
            },
        }
    }

    #[test]
    fn metrics_skip_the_ratio_without_clients() {
        let mut empty = summary(0, 0, 0);
        empty.ring = "empty".into();
        let text = crate::api::metrics::render_clients(&[summary(4, 3, 1), empty]);
        assert!(text.contains("ringd_clients{ring=\"r\"} 4\n"), "{text}");
        assert!(text.contains("ringd_clients{ring=\"empty\"} 0\n"), "{text}");
        assert!(text.contains("ringd_clients_on_latest_ratio{ring=\"r\"} 0.75\n"));
        assert!(!text.contains("ringd_clients_on_latest_ratio{ring=\"empty\"}"));
        assert!(text.contains("ringd_clients_divergent{ring=\"r\"} 1\n"));
        assert!(text.contains("# TYPE ringd_clients_divergent gauge\n"));
    }
}
