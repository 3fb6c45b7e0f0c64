//! `POST /v1/rings/{ring}/changes`: several ops as one new version, or a
//! dry run that shows what they would move.

use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;

use super::auth::Writer;
use super::config_body::{listing_membership, split_membership};
use super::extract::{from_value, ApiJson};
use super::headers::{etag, expected_version, idempotency_key};
use super::openapi::error_responses::{IdempotencyError, JsonBodyErrors, WriteErrors};
use super::openapi::schemas::{IdempotencyKeySchema, RingNameSchema, VersionTagSchema};
use super::paths::RingPath;
use super::problem::{ApiError, Problem};
use super::reason::check_reason;
use super::AppState;
use crate::placement::{json_integer, NodeId, RingConfig, RingConfigSpec};
use crate::ring::{
    escape_refused, ChangeOp, MembershipPolicy, MembershipPolicySpec, NodeRecordSpec, RequestedOp,
    RingName, Snapshot, MAX_OPS,
};
use crate::service::{BaseConfig, ChangeOutcome, ChangeRequest};
use crate::wire::{ChangeInput, ChangeResult, ConfigChange, DiffView, RingConfigView};

/// The body of `POST …/changes`, as parsed.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChangeBody {
    // Parsed op by op in `parse_ops`, so errors name the exact field.
    ops: Vec<serde_json::Value>,
    #[serde(default, deserialize_with = "json_integer::option")]
    expected_version: Option<u64>,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    dry_run: bool,
    #[serde(default)]
    force: bool,
}

impl ConfigChange {
    /// `Some` when the config `from` (placement and policy) differs from
    /// `to`'s.
    fn between(from: Option<&BaseConfig>, to: &Snapshot) -> Option<Self> {
        from.filter(|b| b.config != to.config || b.membership != to.membership)
            .map(|b| Self {
                from: RingConfigView::of(&b.config, &b.membership),
                to: RingConfigView::of(&to.config, &to.membership),
            })
    }
}

impl ChangeResult {
    /// Describes `outcome` for `ring`.
    pub fn from_outcome(ring: &RingName, outcome: &ChangeOutcome) -> Self {
        let (dry_run, changed, base, snapshot, diff, base_config) = match outcome {
            ChangeOutcome::Committed {
                current,
                diff,
                base_config,
                ..
            } => (
                false,
                true,
                current.snapshot.version - 1,
                &*current.snapshot,
                Some(diff),
                Some(base_config),
            ),
            ChangeOutcome::Unchanged { current } => (
                false,
                false,
                current.snapshot.version,
                &*current.snapshot,
                None,
                None,
            ),
            ChangeOutcome::Replayed {
                snapshot,
                diff,
                base_config,
                ..
            } => (
                false,
                true,
                snapshot.version - 1,
                &**snapshot,
                diff.as_ref(),
                base_config.as_ref(),
            ),
            ChangeOutcome::Preview {
                snapshot,
                diff,
                base_version,
                base_config,
            } => (
                true,
                true,
                *base_version,
                snapshot,
                Some(diff),
                Some(base_config),
            ),
        };
        Self {
            ring: ring.to_string(),
            dry_run,
            changed,
            base_version: base,
            version: snapshot.version,
            summary: snapshot.into(),
            diff: diff.map(DiffView::from),
            config_change: ConfigChange::between(base_config, snapshot),
            replayed: matches!(outcome, ChangeOutcome::Replayed { .. }),
        }
    }

    /// The response: `status`, with the resulting version as the ETag
    /// unless nothing was committed.
    pub fn respond(self, status: StatusCode) -> Response {
        if self.dry_run {
            return (status, Json(self)).into_response();
        }
        (status, [(header::ETAG, etag(self.version))], Json(self)).into_response()
    }
}

/// Parses the ops of a change one by one. Parsing them as a tagged enum
/// in one go would report every error at `ops[i]`; this way a bad weight
/// is reported at `ops[i].node.weight`.
pub fn parse_ops(values: Vec<serde_json::Value>) -> Result<Vec<RequestedOp>, ApiError> {
    if values.len() > MAX_OPS {
        return Err(ApiError::invalid(
            "ops",
            format!(
                "{} ops given; a change may carry at most {MAX_OPS}",
                values.len()
            ),
        ));
    }
    values
        .into_iter()
        .enumerate()
        .map(|(i, value)| parse_op(value, &format!("ops[{i}]")))
        .collect()
}

fn parse_op(value: serde_json::Value, at: &str) -> Result<RequestedOp, ApiError> {
    let serde_json::Value::Object(mut fields) = value else {
        return Err(ApiError::invalid(
            at,
            format!("`{at}` must be an object with an \"op\" field"),
        ));
    };
    let kind = match fields.remove("op") {
        Some(serde_json::Value::String(k)) => k,
        _ => {
            return Err(ApiError::invalid(
                format!("{at}.op"),
                format!("`{at}.op` must be one of \"upsert\", \"remove\", \"set_config\" or \"update_config\""),
            ))
        }
    };
    let operand = match kind.as_str() {
        "upsert" => "node",
        "remove" => "id",
        "set_config" | "update_config" => "config",
        other => {
            return Err(ApiError::invalid(
                format!("{at}.op"),
                format!(
                    "unknown op `{}` at `{at}.op`: expected upsert, remove, set_config or update_config",
                    escape_refused(&other.chars().take(100).collect::<String>())
                ),
            ))
        }
    };
    let value = fields.remove(operand).ok_or_else(|| {
        ApiError::invalid(
            format!("{at}.{operand}"),
            format!("a `{kind}` op needs `{operand}`"),
        )
    })?;
    if let Some(extra) = fields.keys().next() {
        return Err(ApiError::invalid(
            format!("{at}.{extra}"),
            format!(
                "unknown field `{extra}` in a `{kind}` op, which takes only `op` and `{operand}`"
            ),
        ));
    }
    let here = format!("{at}.{operand}");
    Ok(match operand {
        "node" => {
            let spec: NodeRecordSpec = from_value(value, &here)?;
            let node = spec
                .into_new_record(None)
                .map_err(|e| ApiError::from(e).within(&here))?;
            ChangeOp::Upsert { node }.into()
        }
        "id" => ChangeOp::Remove {
            id: from_value::<NodeId>(value, &here)?,
        }
        .into(),
        _ => {
            let (placement, policy) = split_membership(value, &here)?;
            let spec = from_value(placement, &here).map_err(listing_membership)?;
            parse_config_op(&kind, spec, policy, &here)?
        }
    })
}

/// `set_config` takes a complete config and `update_config` a non-empty
/// patch; neither ever fills an omitted field with a default, which would
/// silently change the algorithm, hash or parameters the ring has.
fn parse_config_op(
    kind: &str,
    spec: RingConfigSpec,
    policy: Option<MembershipPolicySpec>,
    here: &str,
) -> Result<RequestedOp, ApiError> {
    let within = |e: crate::placement::PlacementError| ApiError::from(e).within(here);
    if kind == "update_config" {
        if spec.is_empty() && policy.is_none() {
            return Err(ApiError::invalid(
                here,
                format!("`{here}` is empty: an update_config op changes at least one field"),
            ));
        }
        spec.check_ranges().map_err(within)?;
        return Ok(RequestedOp::UpdateConfig(spec, policy));
    }
    let missing = spec.missing_fields();
    if !missing.is_empty() {
        return Err(ApiError::invalid(
            here,
            format!(
                "a set_config op replaces the whole configuration, but `{here}` lacks {}; send every field (as `config` in GET /v1/rings/{{ring}}), or use {{\"op\": \"update_config\"}} to change only the fields given",
                missing
                    .iter()
                    .map(|f| format!("`{f}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    let config = RingConfig::try_from(spec).map_err(within)?;
    Ok(ChangeOp::SetConfig {
        config,
        membership: policy.map(MembershipPolicy::from),
    }
    .into())
}

/// Apply a change.
///
/// Applies every op, in order, as one new version (+1). A change that
/// alters nothing creates no version and returns the current one with
/// `changed: false`. With `dry_run: true` nothing is committed; the answer
/// is the would-be version's summary and the full diff against the current
/// version (moved fraction, per-node gains and losses, transfers and the
/// first 1,000 moved ranges).
#[utoipa::path(
    post,
    path = "/v1/rings/{ring}/changes",
    tag = "changes",
    params(
        ("ring" = RingNameSchema, Path, description = super::RING_NAME_RULES),
        ("If-Match" = Option<VersionTagSchema>, Header, nullable = false, description = "`\"<version>\"`: apply only at this version (or use `expected_version`)."),
        ("Idempotency-Key" = Option<IdempotencyKeySchema>, Header, nullable = false, description = super::IDEMPOTENCY_KEY_DOC),
    ),
    request_body(content = ChangeInput, content_type = "application/json"),
    responses(
        (status = 200, description = "Committed, unchanged (`changed: false`) or previewed (`dry_run: true`)", body = ChangeResult),
        (status = 400, description = "Invalid op, node, config, reason or precondition; unknown field; malformed JSON", body = Problem, content_type = "application/problem+json"),
        WriteErrors, IdempotencyError, JsonBodyErrors,
        (status = 404, description = "No such ring, or a `remove` of a node the ring does not have", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The ring is in a rollout (`reason: rollout_active`); send `force: true` to apply the change anyway (the rollout then pauses)", body = Problem, content_type = "application/problem+json"),
        (status = 412, description = "The ring is not at the expected version; `current_version` in the body", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "Store unavailable, or other writers kept winning; retry", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn post_changes(
    State(state): State<AppState>,
    Writer(role): Writer,
    RingPath(ring): RingPath,
    headers: HeaderMap,
    ApiJson(body): ApiJson<ChangeBody>,
) -> Result<Response, ApiError> {
    check_reason(&body.reason)?;
    let ops = parse_ops(body.ops)?;
    // A missing ring is a 404 whatever the precondition (RFC 9110 §13.2.1).
    state.service.rings().current(&ring).await?;
    let expected = expected_version(&headers, body.expected_version)?;
    let request = ChangeRequest {
        ops,
        expected_version: expected,
        reason: body.reason,
        dry_run: body.dry_run,
        idempotency_key: idempotency_key(&headers)?,
        force: body.force,
        layout: None,
    };
    let outcome = state.service.rings().apply(&ring, request, role).await?;
    Ok(ChangeResult::from_outcome(&ring, &outcome).respond(StatusCode::OK))
}

/// The routes of `/v1/rings/{ring}/changes`, each with its OpenAPI operation.
pub(super) fn routes() -> utoipa_axum::router::OpenApiRouter<AppState> {
    utoipa_axum::router::OpenApiRouter::new().routes(utoipa_axum::routes!(post_changes))
}
