//! `GET /v1/rings/{ring}/export/{format}`: a version written as nginx's,
//! HAProxy's or twemproxy's configuration, which then places every key
//! where ringd does.

use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

use super::auth::Reader;
use super::extract::{ApiPath, ApiQuery};
use super::headers::if_none_match_names;
use super::openapi::error_responses::VersionedReadErrors;
use super::openapi::schemas::RingNameSchema;
use super::paths::{optional_version, ring_name};
use super::problem::{ApiError, Problem, ProblemKind};
use super::AppState;
use crate::ring::proxy_config::{self, ExportOptions, ExportRefusal, ExportSettings, ProxyFormat};
use crate::wire::ExportQuery;

/// The proxy formats, as the OpenAPI document lists them.
#[derive(utoipa::ToSchema)]
#[schema(as = ExportFormat)]
#[allow(dead_code)] // a schema only: the path is parsed by `ProxyFormat`
enum ExportFormatSchema {
    #[schema(rename = "nginx")]
    Nginx,
    #[schema(rename = "haproxy")]
    Haproxy,
    #[schema(rename = "twemproxy")]
    Twemproxy,
}

/// Export a version as a proxy's configuration.
///
/// Renders the version (the current one unless `version` is given) as the
/// configuration of `format`: an nginx `upstream` block, a HAProxy
/// `backend` section or a twemproxy pool, listing the active nodes with
/// what places keys (addresses, weights, HAProxy server ids, twemproxy
/// names, the hash and its settings). The first line is a comment naming
/// the ring, the version and the fingerprint. The ring's algorithm must
/// be the proxy's own mode (`nginx`, `haproxy`, `twemproxy`): any other
/// is 422, as is a version the proxy could not load (an active node
/// without an address; for nginx and twemproxy, no active node). The same
/// version and parameters always give the same bytes, and the ETag
/// names them: send it back in `If-None-Match` for a 304.
#[utoipa::path(
    get,
    path = "/v1/rings/{ring}/export/{format}",
    tag = "snapshots",
    params(
        ("ring" = RingNameSchema, Path, description = super::RING_NAME_RULES),
        ("format" = inline(ExportFormatSchema), Path, description = "The proxy: `nginx`, `haproxy` or `twemproxy`."),
        ("If-None-Match" = Option<String>, Header, description = "An ETag of an earlier export: 304 if this one is the same."),
        ExportQuery,
    ),
    responses(
        (status = 200, description = "The configuration", content_type = "text/plain", body = String,
            headers(("ETag" = String, description = "`\"<version>-<digest>\"`: the version and a digest of the body"))),
        (status = 304, description = "The If-None-Match tag names this very export"),
        (status = 400, description = "Invalid ring name, format, version or setting, or a setting of another format", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "The ring's algorithm is not the proxy's mode, or the version cannot be loaded by the proxy (`not-exportable`)", body = Problem, content_type = "application/problem+json"),
        VersionedReadErrors,
    ),
    security(("bearer" = []))
)]
pub async fn export(
    State(state): State<AppState>,
    _: Reader,
    ApiPath((ring, format)): ApiPath<(String, String)>,
    ApiQuery(query): ApiQuery<ExportQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let ring = ring_name(&ring)?;
    let format: ProxyFormat = format.parse().map_err(refusal)?;
    let version = optional_version(query.version)?;
    let settings = ExportSettings {
        upstream: query.upstream,
        key: query.key,
        keepalive: query.keepalive,
        backend: query.backend,
        header: query.header,
        pool: query.pool,
        listen: query.listen,
        redis: query.redis,
    };
    let options = ExportOptions::check(format, &ring, settings).map_err(refusal)?;
    let (version, placement) = state.service.rings().placement(&ring, version).await?;
    let text = proxy_config::render(&ring, version, &placement, &options).map_err(refusal)?;
    let digest = Sha256::digest(text.as_bytes());
    let short: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    let opaque = format!("{version}-{short}");
    let tag = HeaderValue::from_str(&format!("\"{opaque}\"")).expect("digits are a valid header");
    if if_none_match_names(&headers, &opaque) {
        return Ok((StatusCode::NOT_MODIFIED, [(header::ETAG, tag)]).into_response());
    }
    let content_type = HeaderValue::from_static("text/plain; charset=utf-8");
    Ok((
        [(header::CONTENT_TYPE, content_type), (header::ETAG, tag)],
        text,
    )
        .into_response())
}

fn refusal(e: ExportRefusal) -> ApiError {
    match e {
        ExportRefusal::Invalid { field, message } => ApiError::invalid(field, message),
        ExportRefusal::Unexportable(detail) => ApiError::new(ProblemKind::NotExportable, detail),
    }
}

/// The export route with its OpenAPI operation.
pub(super) fn routes() -> utoipa_axum::router::OpenApiRouter<AppState> {
    utoipa_axum::router::OpenApiRouter::new().routes(utoipa_axum::routes!(export))
}
