//! Client settings and start-up.

use std::sync::Arc;
use std::time::Duration;

use crate::ring::durations::LONG_POLL_WAIT;
use crate::ring::{ClientId, ClientKind, RingName};

use super::backoff::Backoff;
use super::error::ClientError;
use super::http::Endpoints;
use super::settings::{AckSettings, WatchMode, WatchSettings};
use super::{ack, watch, RingClient, Shared, Tasks};

/// Settings of a [`RingClient`]; every one has a default.
#[derive(Debug, Clone)]
pub struct ClientBuilder {
    urls: Vec<String>,
    ring: String,
    pub(crate) token: Option<String>,
    pub(crate) client_id: Option<String>,
    pub(crate) ack: bool,
    pub(crate) ack_interval: Duration,
    pub(crate) kind: ClientKind,
    pub(crate) ack_on_confirm: bool,
    pub(crate) mode: WatchMode,
    pub(crate) backoff_min: Duration,
    pub(crate) backoff_max: Duration,
    pub(crate) long_poll_wait: Duration,
    pub(crate) idle_timeout: Duration,
    pub(crate) sse_retry: Duration,
    pub(crate) request_timeout: Duration,
    #[cfg(feature = "tls")]
    tls: super::tls::TlsSettings,
}

impl ClientBuilder {
    pub(crate) fn new<S: AsRef<str>>(urls: &[S], ring: &str) -> Self {
        Self {
            urls: urls.iter().map(|u| u.as_ref().to_owned()).collect(),
            ring: ring.to_owned(),
            token: None,
            client_id: None,
            ack: true,
            ack_interval: Duration::from_secs(60),
            kind: ClientKind::Library,
            ack_on_confirm: false,
            mode: WatchMode::Auto,
            backoff_min: Duration::from_millis(100),
            backoff_max: Duration::from_secs(10),
            long_poll_wait: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(60),
            sse_retry: Duration::from_secs(300),
            request_timeout: super::http::DEFAULT_REQUEST_TIMEOUT,
            #[cfg(feature = "tls")]
            tls: super::tls::TlsSettings::default(),
        }
    }

    /// Bearer token (the read token is enough).
    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// The id this client acks under (default: the host name and process
    /// id, e.g. `web-3-4711`): 1–128 characters of `A-Z a-z 0-9 . _ - :`.
    pub fn client_id(mut self, id: impl Into<String>) -> Self {
        self.client_id = Some(id.into());
        self
    }

    /// Whether to ack applied versions to the server (default on).
    pub fn ack(mut self, on: bool) -> Self {
        self.ack = on;
        self
    }

    /// What kind of client this is, as `GET …/clients` shows it (default
    /// [`ClientKind::Library`]; `ringd sync` says [`ClientKind::Proxy`]).
    pub fn kind(mut self, kind: ClientKind) -> Self {
        self.kind = kind;
        self
    }

    /// Ack a version only once the application has put it to use and says
    /// so with [`RingClient::confirm`], instead of as soon as it is
    /// verified (default off). An agent that rewrites and reloads a proxy
    /// confirms after the reload, so a rollout waits for the proxy; it
    /// reports a version it could not apply with
    /// [`RingClient::report_failure`].
    pub fn ack_on_confirm(mut self, on: bool) -> Self {
        self.ack_on_confirm = on;
        self
    }

    /// How often the current version is acked again while nothing changes,
    /// so the ack outlives the server's client TTL (default 60 s; keep it
    /// below `--client-ttl`).
    pub fn ack_interval(mut self, every: Duration) -> Self {
        self.ack_interval = every;
        self
    }

    /// Stream, long-poll, or stream with long-poll fallback (default).
    pub fn watch_mode(mut self, mode: WatchMode) -> Self {
        self.mode = mode;
        self
    }

    /// Wait after a failed attempt: starts at `min`, doubles up to `max`,
    /// jittered (defaults 100 ms and 10 s).
    pub fn backoff(mut self, min: Duration, max: Duration) -> Self {
        self.backoff_min = min;
        self.backoff_max = max;
        self
    }

    /// How long each long-poll waits on the server (default 30 s; 1 ms to
    /// 5 min, [`LONG_POLL_WAIT`]).
    pub fn long_poll_wait(mut self, wait: Duration) -> Self {
        self.long_poll_wait = wait;
        self
    }

    /// A stream that delivers nothing (not even a keep-alive) for this long
    /// is dropped and reopened (default 60 s; keep it above the server's
    /// `--watch-keepalive`). Also bounds the wait for a stream's first event.
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// In [`WatchMode::Auto`], how long to long-poll before trying the
    /// stream again (default 5 min).
    pub fn sse_retry(mut self, after: Duration) -> Self {
        self.sse_retry = after;
        self
    }

    /// A private CA to trust, and a client certificate to present, for
    /// `https://` servers (feature `tls`; see [`super::TlsSettings`]).
    #[cfg(feature = "tls")]
    pub fn tls(mut self, tls: super::tls::TlsSettings) -> Self {
        self.tls = tls;
        self
    }

    /// Time limit of plain requests such as acks (default 10 s).
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Validates the settings and starts watching. Must be called within a
    /// tokio runtime; returns at once (see [`RingClient::ready`]).
    pub fn start(self) -> Result<RingClient, ClientError> {
        let ring = RingName::new(&self.ring)?;
        let endpoints = Endpoints::builder(&self.urls)
            .token(self.token.clone())
            .timeout(self.request_timeout);
        #[cfg(feature = "tls")]
        let endpoints = endpoints.tls(self.tls.clone());
        let endpoints = endpoints.build()?;
        let client_id = match &self.client_id {
            Some(id) => ClientId::new(id.clone())?,
            None => default_client_id(),
        };
        let positive = |d: Duration, what: &str| {
            if d.is_zero() {
                Err(ClientError::InvalidSetting(format!(
                    "{what} must be more than zero"
                )))
            } else {
                Ok(())
            }
        };
        positive(self.backoff_min, "the minimum backoff")?;
        positive(self.idle_timeout, "the idle timeout")?;
        positive(self.ack_interval, "the ack interval")?;
        if self.backoff_max < self.backoff_min {
            return Err(ClientError::InvalidSetting(
                "the maximum backoff is below the minimum".into(),
            ));
        }
        if !LONG_POLL_WAIT.contains(self.long_poll_wait) {
            return Err(ClientError::InvalidSetting(format!(
                "the long-poll wait must be {}, the range the server accepts",
                LONG_POLL_WAIT.range()
            )));
        }
        let shared = Arc::new(Shared::new(ring));
        let (reports, reports_rx) = tokio::sync::watch::channel(ack::Report::default());
        let watch = WatchSettings {
            mode: self.mode,
            long_poll_wait: self.long_poll_wait,
            idle_timeout: self.idle_timeout,
            sse_retry: self.sse_retry,
            backoff: Backoff::new(self.backoff_min, self.backoff_max),
        };
        let mut tasks = vec![tokio::spawn(
            watch::Watch::new(
                shared.clone(),
                endpoints.clone(),
                watch,
                (!self.ack_on_confirm).then(|| reports.clone()),
            )
            .run(),
        )];
        if self.ack {
            let settings = AckSettings {
                interval: self.ack_interval,
                backoff: Backoff::new(self.backoff_min, self.backoff_max),
                kind: self.kind,
                confirmed: self.ack_on_confirm,
            };
            tasks.push(tokio::spawn(
                ack::Acker::new(
                    shared.clone(),
                    endpoints.without_keep_alive(),
                    client_id,
                    settings,
                )
                .run(reports_rx),
            ));
        }
        Ok(RingClient {
            shared,
            endpoints: Some(endpoints),
            confirmations: self.ack_on_confirm.then_some(reports),
            _tasks: Arc::new(Tasks(tasks)),
        })
    }
}

/// `<host>-<pid>`, cut to the client-id rules.
fn default_client_id() -> ClientId {
    let host = std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .unwrap_or_default();
    let host: String = host
        .trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .take(100)
        .collect();
    let host = host.trim_start_matches(|c: char| !c.is_ascii_alphanumeric());
    let id = if host.is_empty() {
        format!("client-{}", std::process::id())
    } else {
        format!("{host}-{}", std::process::id())
    };
    ClientId::new(id).unwrap_or_else(|_| {
        ClientId::new(format!("client-{}", std::process::id())).expect("a valid id")
    })
}
