//! Running the service: open the store, bind, serve until told to stop.
//!
//! - [`config`]: [`ServeConfig`] and [`LogFormat`];
//! - [`error`]: [`ServeError`];
//! - [`startup`]: resolving and binding the listen address;
//! - [`connection`]: serving each connection through hyper;
//! - [`store_url`]: opening the store `--store` names;
//! - [`tls`]: HTTPS on the listener;
//! - [`telemetry`] and [`signal`]: log lines, and the signals that stop it.

use std::future::Future;
use std::io::{self, Write as _};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::api::auth::AuthConfig;
use crate::api::{router, AppState};
use crate::service::RingService;

mod config;
mod connection;
mod error;
mod signal;
mod startup;
mod store_url;
mod telemetry;
pub mod tls;

use config::check_settings;
pub use config::{LogFormat, ServeConfig};
pub use error::ServeError;
pub use signal::shutdown_signal;
use startup::{bind, resolve};
use store_url::open_store;
pub use store_url::{parse_store_url, sqlite_path, EtcdAccess, StoreUrl};
pub use telemetry::init_logging;
pub use tls::{TlsError, TlsFiles};

pub use crate::ring::durations::parse_duration;

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
