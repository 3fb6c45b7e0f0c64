//! Requests to a set of equivalent ringd servers, failing over between them.
//!
//! Every ringd instance in front of the same store answers the same, so a
//! client names several and uses whichever answers. The last one that
//! answered is tried first next time; the others follow in the order given.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use reqwest::{Method, Response, StatusCode};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::error::{error_chain, ClientError};
use super::problem::problem_of;
use crate::ring::Snapshot;
use crate::wire::SnapshotView;

/// How long a plain request may take, unless the caller says otherwise.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// One or more ringd base URLs, an optional bearer token and a connection
/// pool. Cheap to clone; clones share the pool and the preferred server.
#[derive(Clone)]
pub struct Endpoints {
    inner: Arc<Inner>,
    /// Requests go through [`Inner::one_shot`]: see
    /// [`Endpoints::without_keep_alive`].
    one_shot: bool,
}

struct Inner {
    urls: Vec<String>,
    token: Option<String>,
    http: reqwest::Client,
    /// The same settings, keeping no idle connection.
    one_shot: reqwest::Client,
    /// Index into `urls` of the server that answered last.
    preferred: AtomicUsize,
    timeout: Duration,
}

impl std::fmt::Debug for Endpoints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The token stays out of logs and panics.
        f.debug_struct("Endpoints")
            .field("urls", &self.inner.urls)
            .field("token", &self.inner.token.as_ref().map(|_| "…"))
            .finish()
    }
}

/// Splits comma-separated lists, trims, checks the scheme and drops a
/// trailing slash.
fn parse_urls<S: AsRef<str>>(urls: &[S]) -> Result<Vec<String>, ClientError> {
    let mut out = Vec::new();
    for item in urls {
        for url in item.as_ref().split(',') {
            let url = url.trim().trim_end_matches('/');
            if url.is_empty() {
                continue;
            }
            let rest = url
                .strip_prefix("http://")
                .or_else(|| url.strip_prefix("https://"))
                .ok_or_else(|| ClientError::InvalidUrl(url.to_owned()))?;
            if rest.is_empty() || rest.contains(char::is_whitespace) {
                return Err(ClientError::InvalidUrl(url.to_owned()));
            }
            out.push(url.to_owned());
        }
    }
    if out.is_empty() {
        return Err(ClientError::InvalidUrl(String::new()));
    }
    Ok(out)
}

/// Settings of an [`Endpoints`]; all but the URLs have defaults.
pub struct EndpointsBuilder {
    urls: Vec<String>,
    token: Option<String>,
    timeout: Duration,
    #[cfg(feature = "tls")]
    tls: super::tls::TlsSettings,
}

impl EndpointsBuilder {
    /// Bearer token sent as `Authorization: Bearer …` (none by default; an
    /// empty one counts as none).
    pub fn token(mut self, token: Option<String>) -> Self {
        self.token = token;
        self
    }

    /// Time limit of a plain request (default [`DEFAULT_REQUEST_TIMEOUT`]).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// A private CA to trust and a client certificate, for `https://`.
    #[cfg(feature = "tls")]
    pub fn tls(mut self, tls: super::tls::TlsSettings) -> Self {
        self.tls = tls;
        self
    }

    /// Checks the URLs and builds the connection pool.
    pub fn build(self) -> Result<Endpoints, ClientError> {
        let urls = parse_urls(&self.urls)?;
        let http = self.client(usize::MAX)?;
        let one_shot = self.client(0)?;
        Ok(Endpoints {
            inner: Arc::new(Inner {
                urls,
                token: self.token.filter(|t| !t.is_empty()),
                http,
                one_shot,
                preferred: AtomicUsize::new(0),
                timeout: self.timeout,
            }),
            one_shot: false,
        })
    }

    /// An HTTP client keeping at most `idle` idle connections per server.
    fn client(&self, idle: usize) -> Result<reqwest::Client, ClientError> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(3))
            .tcp_nodelay(true)
            .pool_max_idle_per_host(idle);
        #[cfg(feature = "tls")]
        let http = self.tls.apply(http)?;
        http.build()
            .map_err(|e| ClientError::InvalidSetting(format!("HTTP client: {}", error_chain(&e))))
    }
}

impl Endpoints {
    /// Servers from `urls` (each may itself be a comma-separated list, as
    /// `RINGD_ADDR` is), with an optional token sent as
    /// `Authorization: Bearer …`.
    pub fn new<S: AsRef<str>>(urls: &[S], token: Option<String>) -> Result<Self, ClientError> {
        Self::with_timeout(urls, token, DEFAULT_REQUEST_TIMEOUT)
    }

    /// Like [`Endpoints::new`], with the time a plain request may take.
    pub fn with_timeout<S: AsRef<str>>(
        urls: &[S],
        token: Option<String>,
        timeout: Duration,
    ) -> Result<Self, ClientError> {
        Self::builder(urls).token(token).timeout(timeout).build()
    }

    /// Servers from `urls`, with every other setting to choose.
    pub fn builder<S: AsRef<str>>(urls: &[S]) -> EndpointsBuilder {
        EndpointsBuilder {
            urls: urls.iter().map(|u| u.as_ref().to_owned()).collect(),
            token: None,
            timeout: DEFAULT_REQUEST_TIMEOUT,
            #[cfg(feature = "tls")]
            tls: super::tls::TlsSettings::default(),
        }
    }

    /// The servers, in the order given.
    pub fn urls(&self) -> &[String] {
        &self.inner.urls
    }

    /// The same servers (sharing which is preferred), through connections
    /// closed after each request. For requests made about once a minute
    /// beside a watch, acks above all: on HTTP/1.1 the watch holds its
    /// connection, so an ack opens a second one, which a pool would keep
    /// open. Across a fleet that doubles the server's connections (and
    /// its descriptors: 10,000 watchers held 20,000, and a restarted
    /// instance ran out of them while the fleet came back). A fresh
    /// connection a minute costs the client one handshake.
    pub fn without_keep_alive(&self) -> Endpoints {
        Endpoints {
            inner: self.inner.clone(),
            one_shot: true,
        }
    }

    /// The server tried first: the one that answered last.
    pub fn preferred(&self) -> &str {
        &self.inner.urls[self.inner.preferred.load(Ordering::Relaxed) % self.inner.urls.len()]
    }

    /// Makes `url` (one of [`Endpoints::urls`]) the next one tried; used by
    /// watchers that lost their stream on it to move on to the next.
    pub fn demote(&self, url: &str) {
        let urls = &self.inner.urls;
        if let Some(i) = urls.iter().position(|u| u == url) {
            let _ = self.inner.preferred.compare_exchange(
                i,
                (i + 1) % urls.len(),
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
        }
    }

    /// Sends a request to the preferred server, then to each other one
    /// while the failure says nothing about the request itself: the server
    /// could not be reached, or answered 502, 503 or 504.
    ///
    /// A request that reached a server but got no answer (a timeout) is
    /// only retried elsewhere if it is a GET or carries an
    /// `Idempotency-Key`, since it may have taken effect.
    ///
    /// `timeout: None` means the endpoints' default; `Some(Duration::ZERO)`
    /// means none, for streams. Returns the response for 2xx and 304, with the URL of the
    /// server that gave it; other statuses become [`ClientError::Problem`]
    /// (or [`ClientError::Status`] without a problem body).
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        headers: &[(&str, &str)],
        timeout: Option<Duration>,
    ) -> Result<(Response, String), ClientError> {
        let urls = &self.inner.urls;
        let start = self.inner.preferred.load(Ordering::Relaxed) % urls.len();
        let replayable = method == Method::GET
            || headers
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case("idempotency-key"));
        let mut last: Option<ClientError> = None;
        for i in 0..urls.len() {
            let idx = (start + i) % urls.len();
            let url = format!("{}{}", urls[idx], path);
            let http = if self.one_shot {
                &self.inner.one_shot
            } else {
                &self.inner.http
            };
            let mut req = http.request(method.clone(), &url);
            let limit = timeout.unwrap_or(self.inner.timeout);
            if !limit.is_zero() {
                req = req.timeout(limit);
            }
            if let Some(t) = &self.inner.token {
                req = req.bearer_auth(t);
            }
            for (k, v) in headers {
                req = req.header(*k, *v);
            }
            if let Some(b) = body {
                req = req.json(b);
            }
            match req.send().await {
                Ok(resp) => {
                    let status = resp.status();
                    if status.is_success() || status == StatusCode::NOT_MODIFIED {
                        self.inner.preferred.store(idx, Ordering::Relaxed);
                        return Ok((resp, urls[idx].clone()));
                    }
                    let err = problem_of(resp, &url).await;
                    let retry_elsewhere = matches!(status.as_u16(), 502..=504);
                    if !retry_elsewhere {
                        self.inner.preferred.store(idx, Ordering::Relaxed);
                        return Err(err);
                    }
                    last = Some(err);
                }
                Err(e) => {
                    let transport = ClientError::Unreachable {
                        urls: urls.join(","),
                        last: format!("{url}: {}", error_chain(&e)),
                    };
                    if !(e.is_connect() || replayable) {
                        return Err(transport);
                    }
                    last = Some(transport);
                }
            }
        }
        Err(last.unwrap_or(ClientError::Closed))
    }

    /// `GET path`, decoding a JSON body.
    pub async fn get_json<T: DeserializeOwned>(&self, path: &str) -> Result<T, ClientError> {
        self.send_json(Method::GET, path, None, &[]).await
    }

    /// `GET path`, a snapshot body (`…/snapshot`, `…/snapshots/{v}`), as
    /// the domain's snapshot.
    pub async fn get_snapshot(&self, path: &str) -> Result<Snapshot, ClientError> {
        let (resp, url) = self.send(Method::GET, path, None, &[], None).await?;
        decode_snapshot(resp, &url).await
    }

    /// `GET path`, the body as bytes.
    pub async fn get_bytes(&self, path: &str) -> Result<Vec<u8>, ClientError> {
        let (resp, url) = self.send(Method::GET, path, None, &[], None).await?;
        let bytes = resp
            .bytes()
            .await
            .map_err(|e| ClientError::decode(&url, e))?;
        Ok(bytes.to_vec())
    }

    /// Sends a request with an optional JSON body and decodes the JSON answer.
    pub async fn send_json<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        headers: &[(&str, &str)],
    ) -> Result<T, ClientError> {
        let (resp, url) = self.send(method, path, body, headers, None).await?;
        decode(resp, &url).await
    }
}

/// Decodes a JSON body, naming the URL on failure.
pub(crate) async fn decode<T: DeserializeOwned>(
    resp: Response,
    url: &str,
) -> Result<T, ClientError> {
    let bytes = resp
        .bytes()
        .await
        .map_err(|e| ClientError::decode(url, e))?;
    serde_json::from_slice(&bytes).map_err(|e| ClientError::decode(url, e))
}

/// Decodes a snapshot body, naming the URL on failure: read as the wire
/// view, as the CLI reads it too, then turned into the domain's snapshot
/// by the wire's one conversion.
pub(crate) async fn decode_snapshot(resp: Response, url: &str) -> Result<Snapshot, ClientError> {
    let view: SnapshotView = decode(resp, url).await?;
    Snapshot::try_from(view).map_err(|e| ClientError::decode(url, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_split_trimmed_and_checked() {
        let u = parse_urls(&["http://a:1/, http://b:2", "https://c"]).unwrap();
        assert_eq!(u, vec!["http://a:1", "http://b:2", "https://c"]);
        assert!(matches!(parse_urls(&["a:1"]), Err(ClientError::InvalidUrl(u)) if u == "a:1"));
        assert!(matches!(
            parse_urls::<&str>(&[]),
            Err(ClientError::InvalidUrl(_))
        ));
        assert!(matches!(
            parse_urls(&["http://"]),
            Err(ClientError::InvalidUrl(_))
        ));
    }

    #[test]
    fn demote_moves_to_the_next_url() {
        let e = Endpoints::new(&["http://a:1,http://b:2,http://c:3"], None).unwrap();
        assert_eq!(e.preferred(), "http://a:1");
        e.demote("http://a:1");
        assert_eq!(e.preferred(), "http://b:2");
        // Demoting a server that is not the preferred one changes nothing.
        e.demote("http://a:1");
        assert_eq!(e.preferred(), "http://b:2");
        e.demote("http://b:2");
        e.demote("http://c:3");
        assert_eq!(e.preferred(), "http://a:1");
    }
}
