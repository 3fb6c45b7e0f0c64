//! A forwarding HTTP proxy in front of a ringd, for the client tests: the
//! proxies a client meets in the field, made to misbehave on purpose. It
//! forwards every request (headers and body, `Host` aside) to the upstream
//! and streams the response back, and a test can have it answer some
//! requests itself, forward a request to another path or query, or see
//! each chunk of a response on its way back.

use std::sync::Arc;

use axum::body::{to_bytes, Body};
use axum::extract::Request;
use axum::http::Uri;
use axum::response::Response;
use futures::StreamExt;

/// Answers a request in the proxy's place, or `None` to forward it.
type Answer = Arc<dyn Fn(&Request) -> Option<Response> + Send + Sync>;
/// The path and query a request is forwarded to.
type Target = Arc<dyn Fn(&Uri) -> String + Send + Sync>;
/// Something to see a forwarded response's chunks, or `None` for none.
type Tap = Arc<dyn Fn(&Uri) -> Option<Box<dyn FnMut(&[u8]) + Send>> + Send + Sync>;

/// Largest request body the proxy forwards, as the server's own limit.
const MAX_BODY: usize = 1 << 20;

/// A proxy to be started in front of one upstream.
pub(crate) struct Proxy {
    upstream: String,
    answer: Answer,
    target: Target,
    tap: Tap,
}

impl Proxy {
    /// A proxy that forwards everything to `upstream` (`http://host:port`)
    /// unchanged.
    pub(crate) fn to(upstream: &str) -> Self {
        Self {
            upstream: upstream.trim_end_matches('/').to_owned(),
            answer: Arc::new(|_| None),
            target: Arc::new(|uri| uri.path_and_query().map_or("/", |p| p.as_str()).to_owned()),
            tap: Arc::new(|_| None),
        }
    }

    /// Answers with what `answer` returns for a request, instead of
    /// forwarding it; a request it returns `None` for is forwarded.
    pub(crate) fn answering(
        mut self,
        answer: impl Fn(&Request) -> Option<Response> + Send + Sync + 'static,
    ) -> Self {
        self.answer = Arc::new(answer);
        self
    }

    /// Forwards each request to the path and query `target` gives for its
    /// URI, instead of its own.
    pub(crate) fn forwarding_to(
        mut self,
        target: impl Fn(&Uri) -> String + Send + Sync + 'static,
    ) -> Self {
        self.target = Arc::new(target);
        self
    }

    /// Shows each chunk of a forwarded response, as it passes, to the tap
    /// `tap` makes for the request's URI (none when it returns `None`).
    pub(crate) fn tapping(
        mut self,
        tap: impl Fn(&Uri) -> Option<Box<dyn FnMut(&[u8]) + Send>> + Send + Sync + 'static,
    ) -> Self {
        self.tap = Arc::new(tap);
        self
    }

    /// Binds a free loopback port and serves on it for the rest of the
    /// test; returns the proxy's URL. An upstream that cannot be reached
    /// is answered with a bare 502.
    pub(crate) async fn start(self) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the proxy");
        let url = format!(
            "http://{}",
            listener.local_addr().expect("the proxy's address")
        );
        let proxy = Arc::new(self);
        let http = reqwest::Client::new();
        let app = axum::Router::new().fallback(move |request: Request| {
            let (proxy, http) = (proxy.clone(), http.clone());
            async move { proxy.handle(&http, request).await }
        });
        tokio::spawn(async move { axum::serve(listener, app).await.expect("the proxy serves") });
        url
    }

    async fn handle(&self, http: &reqwest::Client, request: Request) -> Response {
        if let Some(answer) = (self.answer)(&request) {
            return answer;
        }
        let uri = request.uri().clone();
        let method =
            reqwest::Method::from_bytes(request.method().as_str().as_bytes()).expect("a method");
        let mut out = http.request(method, format!("{}{}", self.upstream, (self.target)(&uri)));
        for (name, value) in request.headers() {
            if name.as_str() != "host" {
                out = out.header(name.as_str(), value.as_bytes());
            }
        }
        let body = to_bytes(request.into_body(), MAX_BODY)
            .await
            .expect("a request body within the limit");
        let Ok(upstream) = out.body(body.to_vec()).send().await else {
            return Response::builder()
                .status(502)
                .body(Body::empty())
                .expect("a 502");
        };
        let mut back = Response::builder().status(upstream.status().as_u16());
        for (name, value) in upstream.headers() {
            // Hop by hop: the proxy's own connection sets them.
            if !matches!(
                name.as_str(),
                "content-length" | "transfer-encoding" | "connection"
            ) {
                back = back.header(name.as_str(), value.as_bytes());
            }
        }
        let mut tap = (self.tap)(&uri);
        let chunks = upstream.bytes_stream().map(move |chunk| {
            if let (Some(tap), Ok(bytes)) = (tap.as_mut(), &chunk) {
                tap(bytes);
            }
            chunk
        });
        back.body(Body::from_stream(chunks)).expect("the response")
    }
}
