//! Serving connections: every connection, watch streams included, goes
//! through hyper's HTTP/1.1 server and the axum router, so every request
//! gets the same parsing, limits, layers (metrics, the request log line,
//! the stale marker), `Date` header and graceful shutdown.
//!
//! An idle watch stream through hyper costs 10–12 KiB of server memory
//! (see docs/benchmarks.md), within the 16 KiB per watcher the service
//! aims for; hyper's request head limit keeps a client from making it
//! more.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::{GracefulShutdown, Watcher as ConnectionWatcher};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};

use super::tls::Tls;

/// Largest request head (request line and headers) accepted. A larger one
/// is answered with 431 and the connection is closed, before the rest of
/// it is read.
pub(super) const MAX_HEAD: usize = 16 * 1024;

/// How long a connection may take to send a request head, so connections
/// that never send one do not pile up.
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a TLS handshake may take, for the same reason.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Accepts connections until `shutdown` completes, then waits for every
/// request in flight, watch streams included (the hub ends them), to
/// finish. With `tls`, each connection is a TLS connection first.
pub(super) async fn serve(
    listener: TcpListener,
    app: Router,
    tls: Option<Arc<Tls>>,
    shutdown: impl std::future::Future<Output = ()>,
) {
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => {
                    let _ = tcp.set_nodelay(true);
                    let (app, watcher) = (app.clone(), graceful.watcher());
                    match &tls {
                        None => tokio::spawn(http(tcp, app, watcher)),
                        Some(tls) => tokio::spawn(https(tcp, tls.clone(), app, watcher)),
                    };
                }
                Err(e) => {
                    // Out of file descriptors, typically: back off rather
                    // than spin, and keep serving the connections we have.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            },
            () = &mut shutdown => break,
        }
    }
    drop(listener);
    graceful.shutdown().await;
}

/// Completes the TLS handshake (in the connection's own task, so a slow
/// client holds up no one else), then serves HTTP on it.
async fn https(tcp: TcpStream, tls: Arc<Tls>, app: Router, watcher: ConnectionWatcher) {
    let peer = tcp.peer_addr().ok();
    match tokio::time::timeout(HANDSHAKE_TIMEOUT, tls.acceptor().accept(tcp)).await {
        Ok(Ok(stream)) => http(stream, app, watcher).await,
        // A client that does not trust the certificate, or has no client
        // certificate the CA signed, ends here; it is the client's
        // problem, so it is not a warning.
        Ok(Err(e)) => tracing::debug!(peer = ?peer, error = %e, "TLS handshake failed"),
        Err(_) => tracing::debug!(peer = ?peer, "TLS handshake timed out"),
    }
}

/// Serves HTTP/1.1 on one connection until it closes, or until a graceful
/// shutdown has let its request in flight finish.
async fn http<I>(io: I, app: Router, watcher: ConnectionWatcher)
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = TowerToHyperService::new(app);
    let conn = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEAD_TIMEOUT)
        .max_header_size(MAX_HEAD)
        .serve_connection(TokioIo::new(io), service);
    if let Err(e) = watcher.watch(conn).await {
        tracing::debug!(error = %e, "connection ended with an error");
    }
}
