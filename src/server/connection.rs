//! Serving connections: every connection, watch streams included, goes
//! through hyper's HTTP/1.1 server and the axum router, so every request
//! gets the same parsing, limits, layers (metrics, the request log line,
//! the stale marker), `Date` header and graceful shutdown.
//!
//! An idle watch stream through hyper costs 10–12 KiB of server memory
//! (see docs/benchmarks.md), within the 16 KiB per watcher the service
//! aims for; hyper's request head limit keeps a client from making it
//! more.

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::{GracefulShutdown, Watcher as ConnectionWatcher};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};

use super::descriptors::Spare;
use super::tls::Tls;
use crate::api::problem::RETRY_AFTER_SECONDS;
use crate::api::problem::{ApiError, ProblemKind, PROBLEM_JSON};

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
    let mut spare = Spare::new();
    let mut refused: u64 = 0;
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
                Err(e) if Spare::is_exhaustion(&e) => {
                    // Out of descriptors: the connections we have are
                    // served on; a new one is taken off the backlog with
                    // the spare descriptor and refused, rather than left
                    // to hang until the client's own timeout.
                    let plain = tls.is_none();
                    let freed = spare.release_for(|| refuse_one(&listener, plain)).await;
                    refused += 1;
                    // Once per power of two, so a storm does not flood the log.
                    if refused.is_power_of_two() {
                        tracing::warn!(error = %e, refused, "out of file descriptors: refusing new connections");
                    }
                    if !freed {
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                }
                Err(e) => {
                    // A connection reset before it was accepted, or the
                    // like: back off rather than spin.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(10)).await;
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

/// What a connection refused for want of descriptors is told, on plain
/// HTTP: 503 with a problem document, written once. Over TLS it is only
/// closed, since answering would take a handshake.
static OUT_OF_DESCRIPTORS: LazyLock<Vec<u8>> = LazyLock::new(|| {
    let problem = ApiError::new(
        ProblemKind::AtCapacity,
        "this instance has no file descriptor left for a new connection; retry after the time Retry-After gives, or connect to another instance",
    )
    .problem();
    let body = serde_json::to_vec(&problem).unwrap_or_default();
    let mut out = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: {PROBLEM_JSON}\r\nretry-after: {}\r\nconnection: close\r\ncontent-length: {}\r\n\r\n",
        RETRY_AFTER_SECONDS.end(),
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(&body);
    out
});

/// Takes one connection off the backlog, if one is waiting, and closes
/// it, after the 503 of [`OUT_OF_DESCRIPTORS`] when `plain`.
async fn refuse_one(listener: &TcpListener, plain: bool) {
    let accepted =
        std::future::poll_fn(|cx| std::task::Poll::Ready(listener.poll_accept(cx))).await;
    let std::task::Poll::Ready(Ok((tcp, _))) = accepted else {
        return;
    };
    if plain {
        // A fresh socket's send buffer takes it whole; if not, the client
        // only sees the connection close.
        let _ = tcp.try_write(&OUT_OF_DESCRIPTORS);
    }
}
