//! TLS on ringd's own listener: the certificate and key from PEM files,
//! optional client-certificate verification against a CA (mutual TLS),
//! and reloading all three on SIGHUP. A reload that fails keeps the
//! configuration in use, so a half-written or mistyped file never takes
//! the listener down.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arc_swap::ArcSwap;
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use thiserror::Error;
use tokio_rustls::TlsAcceptor;

/// The files of `--tls-cert`, `--tls-key` and `--tls-client-ca`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// PEM certificate chain, the server's own certificate first.
    pub cert: PathBuf,
    /// PEM private key of the certificate (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
    /// PEM certificates of the CAs a client certificate must chain to;
    /// with it, clients without such a certificate are refused.
    pub client_ca: Option<PathBuf>,
}

/// Why the TLS configuration could not be loaded.
#[derive(Debug, Error)]
pub enum TlsError {
    /// A file could not be read or is not PEM.
    #[error("cannot read {what} {path}: {source}")]
    Pem {
        /// Which file it is.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        source: rustls_pki_types::pem::Error,
    },
    /// A file holds no item of the kind it should.
    #[error("{what} {path} holds no {expected}")]
    Empty {
        /// Which file it is.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// What it should hold.
        expected: &'static str,
    },
    /// rustls refused the certificates or key (e.g. a key that does not
    /// match the certificate).
    #[error("invalid TLS setup from {cert} and {key}: {reason}")]
    Invalid {
        /// The certificate file.
        cert: PathBuf,
        /// The key file.
        key: PathBuf,
        /// Why.
        reason: String,
    },
    /// The client CA file cannot verify client certificates.
    #[error("--tls-client-ca {path}: {reason}")]
    ClientCa {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

fn certificates(what: &'static str, path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let pem = |source| TlsError::Pem {
        what,
        path: path.to_owned(),
        source,
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(pem)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(pem)?;
    if certs.is_empty() {
        return Err(TlsError::Empty {
            what,
            path: path.to_owned(),
            expected: "PEM certificate",
        });
    }
    Ok(certs)
}

/// Reads the files into a rustls server configuration.
pub fn load(files: &TlsFiles) -> Result<Arc<ServerConfig>, TlsError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let chain = certificates("--tls-cert", &files.cert)?;
    let key = PrivateKeyDer::from_pem_file(&files.key).map_err(|source| match source {
        rustls_pki_types::pem::Error::NoItemsFound => TlsError::Empty {
            what: "--tls-key",
            path: files.key.clone(),
            expected: "PEM private key",
        },
        source => TlsError::Pem {
            what: "--tls-key",
            path: files.key.clone(),
            source,
        },
    })?;
    let invalid = |reason: String| TlsError::Invalid {
        cert: files.cert.clone(),
        key: files.key.clone(),
        reason,
    };
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| invalid(e.to_string()))?;
    let builder = match &files.client_ca {
        None => builder.with_no_client_auth(),
        Some(path) => {
            let mut roots = RootCertStore::empty();
            for ca in certificates("--tls-client-ca", path)? {
                roots.add(ca).map_err(|e| TlsError::ClientCa {
                    path: path.clone(),
                    reason: e.to_string(),
                })?;
            }
            // Refuses clients without a certificate, as well as clients
            // whose certificate does not chain to these CAs.
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .map_err(|e| TlsError::ClientCa {
                    path: path.clone(),
                    reason: e.to_string(),
                })?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let mut config = builder
        .with_single_cert(chain, key)
        .map_err(|e| invalid(e.to_string()))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// The configuration in use, replaced whole on a successful reload;
/// connections already open keep the one they were accepted with.
pub struct Tls {
    files: TlsFiles,
    current: ArcSwap<ServerConfig>,
}

impl Tls {
    /// Loads the files; fails if they do not make a usable configuration.
    pub fn new(files: TlsFiles) -> Result<Self, TlsError> {
        let config = load(&files)?;
        Ok(Self {
            files,
            current: ArcSwap::new(config),
        })
    }

    /// An acceptor with the current configuration, for one connection.
    pub fn acceptor(&self) -> TlsAcceptor {
        TlsAcceptor::from(self.current.load_full())
    }

    /// An acceptor for the xDS port: the same certificate, offering HTTP/2
    /// (ALPN `h2`), which gRPC clients insist on.
    pub fn grpc_acceptor(&self) -> TlsAcceptor {
        let mut config = ServerConfig::clone(&self.current.load_full());
        config.alpn_protocols = vec![b"h2".to_vec()];
        TlsAcceptor::from(Arc::new(config))
    }

    /// Reads the files again. On success new connections use them; on
    /// failure the configuration in use stays, and the error says why.
    pub fn reload(&self) -> Result<(), TlsError> {
        self.current.store(load(&self.files)?);
        Ok(())
    }
}

/// Reloads `tls` on every SIGHUP, logging the outcome, until the task is
/// aborted. Without TLS a SIGHUP is logged and changes nothing: the
/// handler is installed all the same, so `systemctl reload` never ends
/// the process with SIGHUP's default action. The handler is installed before this returns, so a SIGHUP
/// that arrives as soon as the server says it is listening reloads rather
/// than ends the process.
#[cfg(unix)]
pub fn reload_on_hangup(
    tls: Option<Arc<Tls>>,
) -> impl std::future::Future<Output = ()> + Send + 'static {
    use tokio::signal::unix::{signal, SignalKind};
    let hangups = signal(SignalKind::hangup());
    async move {
        let mut hangups = match hangups {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for SIGHUP: TLS files will not be reloaded");
                return;
            }
        };
        while hangups.recv().await.is_some() {
            let Some(tls) = &tls else {
                tracing::info!("SIGHUP: no TLS files to reload; other settings take a restart");
                continue;
            };
            match tls.reload() {
                Ok(()) => tracing::info!(
                    cert = %tls.files.cert.display(),
                    "SIGHUP: TLS certificate reloaded"
                ),
                Err(e) => tracing::error!(
                    error = %e,
                    "SIGHUP: TLS reload failed; keeping the certificate in use"
                ),
            }
        }
    }
}

/// Without SIGHUP there is nothing to wait for.
#[cfg(not(unix))]
pub fn reload_on_hangup(
    tls: Option<Arc<Tls>>,
) -> impl std::future::Future<Output = ()> + Send + 'static {
    drop(tls);
    std::future::pending::<()>()
}
