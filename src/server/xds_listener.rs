//! The xDS server's own port (`--xds-listen`): gRPC over HTTP/2, with the
//! HTTP API's TLS files (offered with ALPN `h2`, which gRPC clients
//! require) and its tokens, sent as `authorization: Bearer …` metadata.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::server::TlsStream;
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::CancellationToken;
use tonic::transport::server::Connected;

use super::tls::Tls;
use crate::api::auth::AuthConfig;
use crate::service::RingService;
use crate::xds::{Authorize, Xds, XdsSettings};

/// How long a TLS handshake may take.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// HTTP/2 pings on idle streams, so that a proxy behind a NAT or a load
/// balancer that drops idle connections keeps its stream, and a dead
/// proxy's stream is closed.
const KEEPALIVE: Duration = Duration::from_secs(30);

/// The xDS listener, bound, with what it serves.
pub(super) struct XdsListener {
    pub(super) listener: TcpListener,
    pub(super) settings: XdsSettings,
}

/// A connection, plain or TLS.
struct Connection(tokio_util::either::Either<TcpStream, Box<TlsStream<TcpStream>>>);

impl Connected for Connection {
    type ConnectInfo = ();

    fn connect_info(&self) -> Self::ConnectInfo {}
}

impl AsyncRead for Connection {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl AsyncWrite for Connection {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.0.is_write_vectored()
    }
}

/// Serves xDS on `bound` until `stop` is cancelled, then lets the open
/// streams end (the hub's closing ends them).
pub(super) async fn serve(
    bound: XdsListener,
    service: Arc<RingService>,
    auth: Arc<AuthConfig>,
    tls: Option<Arc<Tls>>,
    stop: CancellationToken,
) {
    let authorize: Authorize = Arc::new(move |headers| {
        auth.authorize_read(headers).map_err(|e| {
            format!(
                "{} (send the token as `authorization: Bearer <token>` metadata)",
                e.detail
            )
        })
    });
    let (connections, incoming) = mpsc::channel::<io::Result<Connection>>(64);
    let accepting = tokio::spawn(accept(bound.listener, tls, connections, stop.clone()));
    let served = tonic::transport::Server::builder()
        .http2_keepalive_interval(Some(KEEPALIVE))
        .http2_keepalive_timeout(Some(KEEPALIVE))
        .add_service(Xds::new(service, bound.settings, authorize))
        .serve_with_incoming_shutdown(ReceiverStream::new(incoming), stop.cancelled_owned())
        .await;
    if let Err(e) = served {
        tracing::error!(error = %e, "the xDS server stopped");
    }
    accepting.abort();
}

/// Accepts connections, completing TLS handshakes in their own tasks, and
/// hands them to the gRPC server.
async fn accept(
    listener: TcpListener,
    tls: Option<Arc<Tls>>,
    connections: mpsc::Sender<io::Result<Connection>>,
    stop: CancellationToken,
) {
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = stop.cancelled() => return,
        };
        let tcp = match accepted {
            Ok((tcp, _)) => tcp,
            Err(e) => {
                // Out of descriptors, or a connection reset before it was
                // accepted: back off rather than spin.
                tracing::warn!(error = %e, "xDS accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let _ = tcp.set_nodelay(true);
        let Some(tls) = tls.clone() else {
            let plain = Connection(tokio_util::either::Either::Left(tcp));
            if connections.send(Ok(plain)).await.is_err() {
                return;
            }
            continue;
        };
        let connections = connections.clone();
        tokio::spawn(async move {
            let peer = tcp.peer_addr().ok();
            match tokio::time::timeout(HANDSHAKE_TIMEOUT, tls.grpc_acceptor().accept(tcp)).await {
                Ok(Ok(stream)) => {
                    let secure = Connection(tokio_util::either::Either::Right(Box::new(stream)));
                    let _ = connections.send(Ok(secure)).await;
                }
                Ok(Err(e)) => tracing::debug!(peer = ?peer, error = %e, "xDS TLS handshake failed"),
                Err(_) => tracing::debug!(peer = ?peer, "xDS TLS handshake timed out"),
            }
        });
    }
}

/// The address a bound xDS listener serves on.
pub(super) fn local_addr(bound: &XdsListener) -> io::Result<SocketAddr> {
    bound.listener.local_addr()
}
