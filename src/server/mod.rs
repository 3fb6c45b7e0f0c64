//! Running the service: open the store, bind, serve until told to stop.

use std::fmt;
use std::future::Future;
use std::io::{self, IsTerminal as _, Write as _};
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use thiserror::Error;
use tokio::net::TcpListener;

use crate::api::auth::AuthConfig;
use crate::api::{router, AppState, Settings};
use crate::ring::durations::{format_duration, CLIENT_TTL, WATCH_KEEPALIVE};
use crate::service::RingService;
use crate::store::etcd::DEFAULT_PREFIX;
use crate::store::{StoreError, DEFAULT_RETENTION};

mod connection;
mod store_url;
pub mod tls;

pub use crate::ring::durations::parse_duration;
use store_url::open_store;
pub use store_url::{parse_store_url, sqlite_path, EtcdAccess, StoreUrl};
pub use tls::{TlsError, TlsFiles};

/// How log lines are written (to stderr).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line.
    Json,
}

/// Everything `ringd serve` needs.
#[derive(Clone)]
pub struct ServeConfig {
    /// `host:port` to listen on; port 0 picks a free port.
    pub listen: String,
    /// `sqlite://PATH` or `etcd://HOST:PORT[,HOST:PORT…]`.
    pub store_url: String,
    /// Prefix of every key in an etcd store.
    pub etcd_prefix: String,
    /// TLS files and user for an etcd store.
    pub etcd_access: EtcdAccess,
    /// Token required for mutations; none leaves them open.
    pub admin_token: Option<String>,
    /// Token required for reads; none leaves them open.
    pub read_token: Option<String>,
    /// Allow a non-loopback address without an admin token.
    pub insecure: bool,
    /// Serve HTTPS with these files; none serves plain HTTP.
    pub tls: Option<TlsFiles>,
    /// Versions kept per ring.
    pub retention: u64,
    /// Log line format.
    pub log_format: LogFormat,
    /// Watch keep-alive and client ack lifetime.
    pub settings: Settings,
}

impl Default for ServeConfig {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:7420".into(),
            store_url: "sqlite://./ringd-data/ringd.db".into(),
            etcd_prefix: DEFAULT_PREFIX.into(),
            etcd_access: EtcdAccess::default(),
            admin_token: None,
            read_token: None,
            insecure: false,
            tls: None,
            retention: DEFAULT_RETENTION,
            log_format: LogFormat::Text,
            settings: Settings::default(),
        }
    }
}

impl fmt::Debug for ServeConfig {
    // Tokens must never reach a log line, so they print as `<set>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let redact = |t: &Option<String>| t.as_ref().map(|_| "<set>");
        f.debug_struct("ServeConfig")
            .field("listen", &self.listen)
            .field("store_url", &self.store_url)
            .field("etcd_prefix", &self.etcd_prefix)
            .field("etcd_access", &self.etcd_access)
            .field("admin_token", &redact(&self.admin_token))
            .field("read_token", &redact(&self.read_token))
            .field("insecure", &self.insecure)
            .field("tls", &self.tls)
            .field("retention", &self.retention)
            .field("log_format", &self.log_format)
            .field("settings", &self.settings)
            .finish()
    }
}

/// Why `ringd serve` could not start or stopped with an error.
#[derive(Debug, Error)]
pub enum ServeError {
    /// `--listen` does not resolve to an address.
    #[error("invalid listen address `{addr}`: {reason}")]
    InvalidListen {
        /// As given.
        addr: String,
        /// Why it failed.
        reason: String,
    },
    /// A non-loopback address without an admin token or `--insecure`.
    #[error("refusing to listen on {addr}, which is not a loopback address, without an admin token: anyone who can reach it could change every ring. Set --admin-token (or RINGD_ADMIN_TOKEN), or pass --insecure to allow it anyway")]
    Insecure {
        /// The address.
        addr: String,
    },
    /// The store URL is not one this build supports.
    #[error("unsupported store `{0}`: use sqlite://PATH, e.g. sqlite://./ringd-data/ringd.db, or etcd://HOST:PORT[,HOST:PORT…]")]
    UnsupportedStore(String),
    /// Inconsistent or unreadable etcd credentials.
    #[error("etcd credentials: {0}")]
    EtcdAccess(String),
    /// The store could not be opened.
    #[error("cannot open the store {store}: {source}")]
    Store {
        /// The store URL.
        store: String,
        /// Why.
        source: StoreError,
    },
    /// Binding the listener failed.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: String,
        /// Why.
        source: io::Error,
    },
    /// A duration setting outside its bounds (see [`crate::ring::durations`]).
    #[error("{0}")]
    Setting(String),
    /// The TLS files could not be loaded.
    #[error("TLS: {0}")]
    Tls(#[from] TlsError),
    /// The server failed while running, or stdout could not be written.
    #[error("server I/O error: {0}")]
    Io(#[from] io::Error),
}

/// Installs the global tracing subscriber, writing to stderr. `RUST_LOG`
/// overrides the default `info` filter.
pub fn init_logging(format: LogFormat) {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        // Colour codes only for a person at a terminal, not in log files.
        .with_ansi(io::stderr().is_terminal())
        .with_writer(io::stderr);
    // A second call (tests running several servers in one process) keeps
    // the first subscriber; that is fine.
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}

/// Refuses durations outside their bounds. `ringd serve`'s flags are
/// checked when parsed; this covers a [`ServeConfig`] built in code.
fn check_settings(settings: &Settings) -> Result<(), ServeError> {
    for (bounds, value) in [
        (WATCH_KEEPALIVE, settings.keepalive),
        (CLIENT_TTL, settings.client_ttl),
    ] {
        if !bounds.contains(value) {
            return Err(ServeError::Setting(format!(
                "{} of {} is outside its bounds: use {}",
                bounds.name,
                format_duration(value),
                bounds.range()
            )));
        }
    }
    Ok(())
}

/// Resolves `--listen` and applies the loopback rule.
async fn resolve(config: &ServeConfig) -> Result<Vec<SocketAddr>, ServeError> {
    let invalid = |reason: String| ServeError::InvalidListen {
        addr: config.listen.clone(),
        reason,
    };
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host(&config.listen)
        .await
        .map_err(|e| invalid(format!("{e}; expected host:port, e.g. 127.0.0.1:7420")))?
        .collect();
    if addrs.is_empty() {
        return Err(invalid("it resolves to no address".into()));
    }
    let has_admin = config.admin_token.as_deref().is_some_and(|t| !t.is_empty());
    if let Some(open) = addrs.iter().find(|a| !a.ip().is_loopback()) {
        if !has_admin && !config.insecure {
            return Err(ServeError::Insecure {
                addr: open.to_string(),
            });
        }
        if !has_admin {
            tracing::warn!(addr = %open, "--insecure: serving a non-loopback address without an admin token; anyone who can reach it can change rings");
        } else if config.tls.is_none() {
            tracing::warn!(addr = %open, "serving a non-loopback address without TLS: the admin token and every request travel in clear text; set --tls-cert and --tls-key");
        }
    }
    Ok(addrs)
}

/// Runs the service until `shutdown` completes, then stops accepting
/// connections and lets in-flight requests finish.
///
/// After binding it prints exactly one line to stdout,
/// `ringd listening on http://<address>` (`https://` with TLS), with the
/// real port when the configured one is 0.
pub async fn serve(
    config: ServeConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    tracing::debug!(?config, "starting");
    // Refuse a bad store URL before resolving or touching anything.
    parse_store_url(&config.store_url)?;
    check_settings(&config.settings)?;
    config.etcd_access.validate()?;
    let addrs = resolve(&config).await?;
    // Before the store is opened or the port bound: a bad file stops here.
    let tls = config
        .tls
        .clone()
        .map(tls::Tls::new)
        .transpose()?
        .map(Arc::new);
    // SIGHUP's handler is in place before the server says it listens.
    let reloader = tls
        .clone()
        .map(|tls| tokio::spawn(tls::reload_on_hangup(tls)));
    let retention = config.retention;
    let service = RingService::new(open_store(&config).await?);
    let follower = tokio::spawn(service.clone().follow());
    let auth = AuthConfig::new(config.admin_token.as_deref(), config.read_token.as_deref());
    let mut state = AppState::new(service, auth);
    state.settings = Arc::new(config.settings.clone());
    let ready = state.ready.clone();
    let hub = state.service.hub().clone();

    let listener = bind(&addrs).await.map_err(|source| ServeError::Bind {
        addr: config.listen.clone(),
        source,
    })?;
    let local = listener.local_addr()?;
    {
        let mut out = io::stdout().lock();
        let scheme = if tls.is_some() { "https" } else { "http" };
        writeln!(out, "ringd listening on {scheme}://{local}")?;
        out.flush()?;
    }
    tracing::info!(addr = %local, store = %config.store_url, retention, tls = tls.is_some(), "serving");

    let app = router(state);
    connection::serve(listener, app, tls, async move {
        shutdown.await;
        ready.store(false, Ordering::Relaxed);
        // Watch streams never end on their own; end them so the
        // graceful shutdown, which awaits them, can finish.
        hub.close();
        tracing::info!("shutting down: finishing in-flight requests");
    })
    .await;
    follower.abort();
    if let Some(reloader) = reloader {
        reloader.abort();
    }
    tracing::info!("stopped");
    Ok(())
}

async fn bind(addrs: &[SocketAddr]) -> io::Result<TcpListener> {
    let mut last = None;
    for addr in addrs {
        match TcpListener::bind(addr).await {
            Ok(l) => return Ok(l),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no address to bind")))
}

/// Completes on SIGINT (Ctrl-C) or SIGTERM.
pub async fn shutdown_signal() {
    let interrupt = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => tracing::info!("SIGINT received"),
        () = terminate => tracing::info!("SIGTERM received"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn debug_hides_tokens() {
        let c = ServeConfig {
            admin_token: Some("s3cret".into()),
            ..ServeConfig::default()
        };
        assert!(!format!("{c:?}").contains("s3cret"));
    }

    #[test]
    fn settings_built_in_code_are_bounded_too() {
        assert!(check_settings(&Settings::default()).is_ok());
        let zero = Settings {
            keepalive: Duration::ZERO,
            ..Settings::default()
        };
        assert_eq!(
            check_settings(&zero).unwrap_err().to_string(),
            "--watch-keepalive of 0ms is outside its bounds: use 1s to 5m"
        );
        let long = Settings {
            client_ttl: Duration::from_secs(2 * 24 * 3600),
            ..Settings::default()
        };
        assert_eq!(
            check_settings(&long).unwrap_err().to_string(),
            "--client-ttl of 48h is outside its bounds: use 10s to 24h"
        );
    }
}
