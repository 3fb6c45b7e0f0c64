//! Running the service: open the store, bind, serve until told to stop.
//!
//! - `config` holds [`ServeConfig`], [`LogFormat`] and the defaults;
//! - `error` holds [`ServeError`];
//! - `startup` holds [`Server`], bound first, then run;
//! - `connection` serves each connection through hyper;
//! - `descriptors` raises the open-file limit and refuses connections
//!   cleanly once it is reached;
//! - `store_url` opens the store `--store` names;
//! - [`tls`] serves HTTPS on the listener;
//! - `secret` holds [`Secret`], a token or password that never prints;
//! - `xds_listener` serves the xDS server on its own port;
//! - `telemetry` and `signal`: log lines, and the signals that stop it.

use std::future::Future;
use std::io::{self, Write as _};

mod config;
mod connection;
mod descriptors;
mod error;
mod secret;
mod signal;
mod startup;
mod store_url;
mod telemetry;
pub mod tls;
mod xds_listener;

pub use config::XdsListen;
pub use config::{
    check_advertise_url, check_election_ttl, LogFormat, ServeConfig, DEFAULT_CLIENT_TTL,
    DEFAULT_ELECTION_TTL, DEFAULT_LISTEN, DEFAULT_PREFIX, DEFAULT_RETENTION, DEFAULT_STORE,
    DEFAULT_WATCH_KEEPALIVE,
};
pub use error::ServeError;
pub use secret::Secret;
pub use signal::shutdown_signal;
pub use startup::Server;
pub use store_url::{parse_store_url, sqlite_path, EtcdAccess, StoreUrl};
pub use telemetry::init_logging;
pub use tls::{TlsError, TlsFiles};

pub use crate::ring::durations::parse_duration;

/// Binds (see [`Server::bind`]), prints one line to stdout,
/// `ringd listening on http://<address>` (`https://` with TLS), with the
/// real port when the configured one is 0, and with `--xds-listen` a
/// second, `ringd serving xDS on <address>`; then serves until `shutdown`
/// completes (see [`Server::run`]).
pub async fn serve(
    config: ServeConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let server = Server::bind(config).await?;
    {
        let mut out = io::stdout().lock();
        writeln!(out, "ringd listening on {}", server.url())?;
        if let Some(xds) = server.xds_addr() {
            writeln!(out, "ringd serving xDS on {xds}")?;
        }
        out.flush()?;
    }
    server.run(shutdown).await;
    Ok(())
}
