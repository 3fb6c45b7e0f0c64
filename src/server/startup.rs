//! Starting the service: resolving the listen address and binding it.

use std::io;
use std::net::SocketAddr;

use tokio::net::TcpListener;

use super::{ServeConfig, ServeError};

/// Resolves `--listen` and applies the loopback rule.
pub(super) async fn resolve(config: &ServeConfig) -> Result<Vec<SocketAddr>, ServeError> {
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

pub(super) async fn bind(addrs: &[SocketAddr]) -> io::Result<TcpListener> {
    let mut last = None;
    for addr in addrs {
        match TcpListener::bind(addr).await {
            Ok(l) => return Ok(l),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no address to bind")))
}
