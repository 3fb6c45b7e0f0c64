//! Why `ringd serve` could not start, or stopped.

use std::io;

use thiserror::Error;

use super::TlsError;
use crate::store::StoreError;

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

impl ServeError {
    /// Whether the settings themselves are wrong, so that starting again
    /// unchanged fails the same way (exit code 2; the packaged unit does
    /// not restart on it). A store that cannot be reached or a port in use
    /// may pass, and are not.
    pub fn is_configuration(&self) -> bool {
        matches!(
            self,
            Self::InvalidListen { .. }
                | Self::Insecure { .. }
                | Self::UnsupportedStore(_)
                | Self::EtcdAccess(_)
                | Self::Setting(_)
                | Self::Tls(_)
        )
    }
}
