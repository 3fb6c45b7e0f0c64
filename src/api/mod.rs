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
pub mod lookup_answer;
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

/// What every handler shares, behind one reference count: a request clones
/// the state for each extractor and layer that takes it, and one counter
/// is one atomic increment and decrement per clone where six were six,
/// on cache lines every worker thread writes (dropping the six was 4% of
/// the server's CPU under `GET …/lookup` load, the largest item outside
/// the kernel).
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

impl std::ops::Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

/// The contents of [`AppState`].
pub struct Shared {
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
        Self(Arc::new(Shared {
            service,
            auth: Arc::new(auth),
            metrics: Arc::new(Metrics::new()),
            ready: Arc::new(AtomicBool::new(true)),
            settings: Arc::new(Settings::default()),
            admission: Admission::new(DEFAULT_MAX_WATCHERS),
        }))
    }

    /// The state with `settings` in place of the defaults.
    ///
    /// # Panics
    /// Once the state has been cloned (it is set up before serving).
    #[must_use]
    pub fn with_settings(mut self, settings: Settings) -> Self {
        self.setup().settings = Arc::new(settings);
        self
    }

    /// The state with `admission` in place of the default cap.
    ///
    /// # Panics
    /// Once the state has been cloned (it is set up before serving).
    #[must_use]
    pub fn with_admission(mut self, admission: Arc<Admission>) -> Self {
        self.setup().admission = admission;
        self
    }

    fn setup(&mut self) -> &mut Shared {
        Arc::get_mut(&mut self.0).expect("the state is set up before it is shared")
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
    if routine(method, route, status) {
        request_line!(tracing::Level::DEBUG);
    } else {
        request_line!(tracing::Level::INFO);
    }
    response
}

/// Whether a request is routine traffic, logged at debug: an answered read
/// (lookups above all, which a fleet routing over HTTP sends by the tens of
/// thousands a second) or an accepted heartbeat (10,000 nodes renewing
/// every 3 s are 3,333 a second). At the default level the log then grows
/// with what operators and failures do, not with the fleet: one line per
/// lookup was a `write(2)` on a worker thread per request, 14% of the
/// lookup throughput (docs/benchmarks.md, "HTTP service"). Their counts and
/// latencies are in /metrics; writes and every refusal stay at info, as in
/// etcd's and Consul's logs.
fn routine(method: &str, route: &str, status: u16) -> bool {
    let answered = (200..400).contains(&status);
    match method {
        "GET" | "HEAD" => answered,
        "POST" => answered && (route.ends_with("/lookup") || route.ends_with("/renew")),
        _ => false,
    }
}
