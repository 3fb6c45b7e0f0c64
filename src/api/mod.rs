//! The REST API v1: routes, shared state and cross-cutting layers.
//!
//! One file per resource; each handler carries its own OpenAPI annotation
//! and each file ends with the `routes()` that register its handlers in
//! the route table, [`routes`], from which the router and the OpenAPI
//! document both come. Every error is a problem+json body
//! built by [`problem::ApiError`], including axum's own rejections, unknown
//! routes and wrong methods.

pub mod access;
pub mod admission;
pub mod auth;
pub mod changes;
pub mod clients;
pub mod cluster;
mod config_body;
mod consistency;
pub mod console;
pub mod export;
pub mod extract;
pub mod headers;
pub mod health;
pub mod inspection;
pub mod keys;
pub mod leases;
pub mod membership;
pub mod metrics;
pub mod nodes;
pub mod openapi;
pub mod paths;
pub mod problem;
mod problem_from;
pub mod reason;
pub mod rings;
pub mod rollout_metrics;
pub mod rollouts;
pub mod snapshots;
pub mod watch;

use std::any::Any;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use axum::extract::{DefaultBodyLimit, MatchedPath, Request, State};
use axum::http::Method;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;
use tower_http::catch_panic::CatchPanicLayer;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;

use self::admission::Admission;
use self::auth::AuthConfig;
use self::metrics::Metrics;
use self::problem::{ApiError, ProblemKind};
use crate::ring::durations::{DEFAULT_CLIENT_TTL, DEFAULT_WATCH_KEEPALIVE};
use crate::service::RingService;

/// What the `Idempotency-Key` header does, for the OpenAPI descriptions.
pub const IDEMPOTENCY_KEY_DOC: &str = "A name for this change, 1–255 visible ASCII characters (e.g. a UUID). A retry with the same key, after a lost response, answers with the version the first attempt committed (`replayed: true`) instead of applying the change again; keys are recognised while that version is retained. The same key with different ops is refused with 422.";

/// Allowed ring names, for the OpenAPI descriptions.
pub const RING_NAME_RULES: &str = "Ring name: 1–63 characters of `a-z`, `0-9`, `.`, `_` and `-`, starting with a lowercase letter or digit.";
pub use crate::wire::schema::NODE_ID_RULES;

/// Response header set to `true` while the store is not known to be
/// current (etcd unreachable): the answer comes from the last snapshot held
/// in memory and may be stale. Absent otherwise.
pub use crate::wire::headers::STALE_HEADER;

/// What every handler shares.
#[derive(Clone)]
pub struct AppState {
    /// The ring service.
    pub service: Arc<RingService>,
    /// Which tokens are required.
    pub auth: Arc<AuthConfig>,
    /// Request metrics.
    pub metrics: Arc<Metrics>,
    /// Cleared when shutdown begins, so `/readyz` turns away new traffic.
    pub ready: Arc<AtomicBool>,
    /// Tunables of watches, long-polls and client acks.
    pub settings: Arc<Settings>,
    /// The watchers open and the cap on them (`--max-watchers`).
    pub admission: Arc<Admission>,
}

/// Tunables of the notification and convergence endpoints, and where the
/// console's files come from.
#[derive(Debug, Clone)]
pub struct Settings {
    /// How often an idle watch stream gets a keep-alive event.
    pub keepalive: std::time::Duration,
    /// How long a client's ack counts after it was sent.
    pub client_ttl: std::time::Duration,
    /// Serve the console from this folder instead of the copy built in
    /// (`--console-dir`, for work on the console).
    pub console_dir: Option<std::path::PathBuf>,
}

/// Watchers (watch streams and waiting long-polls) one instance serves at
/// most, unless configured: a fleet's worth, with room for it on the
/// descriptors `ringd serve` raises its limit to (see
/// `docs/benchmarks.md`). The server lowers it to what its open-file
/// limit leaves room for.
pub const DEFAULT_MAX_WATCHERS: u64 = 100_000;

impl Default for Settings {
    fn default() -> Self {
        Self {
            keepalive: DEFAULT_WATCH_KEEPALIVE,
            client_ttl: DEFAULT_CLIENT_TTL,
            console_dir: None,
        }
    }
}

impl AppState {
    /// State for `service` with `auth`, ready to serve.
    pub fn new(service: Arc<RingService>, auth: AuthConfig) -> Self {
        Self {
            service,
            auth: Arc::new(auth),
            metrics: Arc::new(Metrics::new()),
            ready: Arc::new(AtomicBool::new(true)),
            settings: Arc::new(Settings::default()),
            admission: Admission::new(DEFAULT_MAX_WATCHERS),
        }
    }
}

/// The route table: every documented route, each resource file
/// contributing its own with the handlers' OpenAPI operations. The router
/// and the OpenAPI document are both split from it, so a route cannot be
/// served without being documented, nor documented without being served.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .merge(rings::routes())
        .merge(nodes::routes())
        .merge(leases::routes())
        .merge(membership::routes())
        .merge(changes::routes())
        .merge(rollouts::routes())
        .merge(snapshots::routes())
        .merge(export::routes())
        .merge(inspection::routes())
        .merge(watch::routes())
        .merge(clients::routes())
        .merge(cluster::routes())
        .merge(health::routes())
        .merge(access::routes())
}

/// Every route served, before state and layers: the route table's and
/// the document's own ([`openapi::UNDOCUMENTED_ROUTES`]), with the
/// document. `openapi_drift` reads the served routes off this router.
pub fn routes_and_document() -> (Router<AppState>, utoipa::openapi::OpenApi) {
    let (api, mut document) = routes().split_for_parts();
    openapi::finish(&mut document);
    let api = api
        .merge(openapi::docs_router(document.clone()))
        .merge(console::router());
    (api, document)
}

/// The complete application: API routes, operations endpoints, the
/// OpenAPI document and Swagger UI, with body limit, metrics and logging.
pub fn router(state: AppState) -> Router {
    let (routes, _) = routes_and_document();
    routes
        .fallback(route_not_found)
        .method_not_allowed_fallback(method_not_allowed)
        // Last line of defence: a bug that panics in a handler still gets
        // a problem+json 500 (and a log line) instead of a dropped connection.
        .layer(CatchPanicLayer::custom(|_: Box<dyn Any + Send>| {
            ApiError::new(
                ProblemKind::Internal,
                "the server hit a bug while handling this request",
            )
            .into_response()
        }))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            consistency::bound_writes,
        ))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            consistency::mark_stale,
        ))
        .layer(middleware::from_fn_with_state(state.clone(), observe))
        // axum buffers bodies through this limit; `extract::ApiJson` turns
        // the overflow into a 413 problem.
        .layer(DefaultBodyLimit::max(extract::MAX_BODY))
        .with_state(state)
}

async fn route_not_found(request: Request) -> ApiError {
    ApiError::new(
        ProblemKind::RouteNotFound,
        format!(
            "no route for `{}`; see /openapi.json or /docs for the API",
            request.uri().path()
        ),
    )
}

async fn method_not_allowed(request: Request) -> ApiError {
    ApiError::new(
        ProblemKind::MethodNotAllowed,
        format!(
            "`{}` does not accept {}; see /openapi.json for the methods it does",
            request.uri().path(),
            request.method()
        ),
    )
}

/// Records metrics and writes one log line per request. Logs the route
/// template and path but never headers, so tokens stay out of the logs.
async fn observe(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let start = Instant::now();
    // Methods are a label: only standard ones, so clients cannot create
    // unbounded series by inventing methods.
    let method = match *request.method() {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::PATCH => "PATCH",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    };
    let path = request.uri().path().to_owned();
    // The template, not the path: a bounded set of labels.
    let matched = request.extensions().get::<MatchedPath>().cloned();
    let route = matched.as_ref().map_or("unmatched", MatchedPath::as_str);
    let response = next.run(request).await;
    let latency = start.elapsed();
    let status = response.status().as_u16();
    state.metrics.observe(method, route, status, latency);
    macro_rules! request_line {
        ($level:expr) => {
            tracing::event!(
                target: "ringd::http",
                $level,
                method,
                route,
                path = %path,
                status,
                latency_ms = latency.as_secs_f64() * 1e3,
                "request"
            )
        };
    }
    // Heartbeats are by far the most frequent request (10,000 nodes
    // renewing every 3 s are 3,333 a second), so an accepted one is logged
    // at debug: at the default level the log does not grow with the fleet.
    // Their count and latency are in /metrics; refusals stay at info.
    if status == 200 && route.ends_with("/renew") {
        request_line!(tracing::Level::DEBUG);
    } else {
        request_line!(tracing::Level::INFO);
    }
    response
}
