//! Serving connections. Every request goes through hyper (HTTP/1.1) and
//! the axum router, except a watch stream opened as a connection's first
//! request: that connection is answered by hand and then carries nothing
//! but the stream.
//!
//! Why: a watch stream lives for hours and most of the time sends
//! nothing, and a deployment may hold tens of thousands. Through hyper,
//! each costs its connection's read and write buffers and the per-request
//! machinery for as long as it lives (about 40 KiB, measured). On the bare
//! socket it costs the stream's own small state. Anything the fast path
//! does not fully understand, or would refuse, goes to the router, which
//! gives the usual answer (401, 404, 400, …) with the usual problem body.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, HeaderName, HeaderValue, Uri};
use axum::Router;
use bytes::Bytes;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::{GracefulShutdown, Watcher as ConnectionWatcher};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

use crate::api::watch::{WatchQuery, Watcher};
use crate::api::AppState;

/// Largest request head read before handing the connection to hyper,
/// which then answers 431 for a head that is too large.
const MAX_HEAD: usize = 16 * 1024;

/// How long a connection may take to send its first request head, so
/// connections that never send one do not pile up (hyper applies its own
/// limit to later requests).
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);

/// Accepts connections until `shutdown` completes, then waits for the
/// requests in flight on hyper connections to finish.
pub(super) async fn serve(
    listener: TcpListener,
    app: Router,
    state: AppState,
    shutdown: impl std::future::Future<Output = ()>,
) {
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => {
                    let _ = tcp.set_nodelay(true);
                    let handle = handle(tcp, app.clone(), state.clone(), graceful.watcher());
                    tokio::spawn(handle);
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

/// Serves one connection.
async fn handle(mut tcp: TcpStream, app: Router, state: AppState, watcher: ConnectionWatcher) {
    let mut head = Vec::with_capacity(1024);
    let deadline = tokio::time::Instant::now() + HEAD_TIMEOUT;
    let complete = loop {
        match tokio::time::timeout_at(deadline, tcp.read_buf(&mut head)).await {
            Ok(Ok(0)) | Ok(Err(_)) | Err(_) => return,
            Ok(Ok(_)) => {}
        }
        if head.windows(4).any(|w| w == b"\r\n\r\n") {
            break true;
        }
        if head.len() >= MAX_HEAD {
            break false;
        }
    };
    if complete {
        if let Some(stream) = open_watch(&head, &state).await {
            drop(head);
            stream.run(tcp).await;
            return;
        }
    }
    let io = Rewind {
        prefix: Some(Bytes::from(head)),
        inner: tcp,
    };
    let service = TowerToHyperService::new(app);
    let conn = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .serve_connection(TokioIo::new(io), service);
    let _ = watcher.watch(conn).await;
}

/// A watch stream accepted on the fast path.
struct RawWatch {
    watcher: Watcher,
    state: AppState,
    path: String,
    started: Instant,
}

/// The watch stream `head` asks for, if it is one the fast path serves:
/// a complete, valid, authorized `GET …/watch` of an existing ring.
async fn open_watch(head: &[u8], state: &AppState) -> Option<RawWatch> {
    let started = Instant::now();
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut request = httparse::Request::new(&mut headers);
    if !matches!(request.parse(head), Ok(httparse::Status::Complete(n)) if n == head.len()) {
        return None;
    }
    if request.method != Some("GET") || request.version != Some(1) {
        return None;
    }
    let uri: Uri = request.path?.parse().ok()?;
    let ring = uri
        .path()
        .strip_prefix("/v1/rings/")?
        .strip_suffix("/watch")
        .filter(|r| !r.is_empty() && !r.contains('/'))?;
    let mut map = HeaderMap::new();
    for h in request.headers.iter() {
        let name = HeaderName::from_bytes(h.name.as_bytes()).ok()?;
        map.append(name, HeaderValue::from_bytes(h.value).ok()?);
    }
    // A body, or a protocol switch, is for the router to refuse.
    for name in ["content-length", "transfer-encoding", "upgrade", "expect"] {
        if map.contains_key(name) {
            return None;
        }
    }
    state.auth.authorize_read(&map).ok()?;
    let query = axum::extract::Query::<WatchQuery>::try_from_uri(&uri)
        .ok()?
        .0;
    let watcher = Watcher::open(state.clone(), ring, query, &map).await.ok()?;
    Some(RawWatch {
        watcher,
        state: state.clone(),
        path: uri.path().to_owned(),
        started,
    })
}

impl RawWatch {
    /// Writes the response head and then every event as one chunk, until
    /// the client goes away or the server shuts down.
    async fn run(mut self, tcp: TcpStream) {
        let (mut reader, mut writer) = tcp.into_split();
        let stale = if self.state.service.store().is_current() {
            ""
        } else {
            "ringd-stale: true\r\n"
        };
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\
             x-accel-buffering: no\r\ntransfer-encoding: chunked\r\n{stale}\r\n"
        );
        let route = "/v1/rings/{ring}/watch";
        let latency = self.started.elapsed();
        self.state.metrics.observe("GET", route, 200, latency);
        tracing::info!(
            target: "ringd::http",
            method = "GET",
            route,
            path = %self.path,
            status = 200,
            latency_ms = latency.as_secs_f64() * 1e3,
            "request"
        );
        if writer.write_all(head.as_bytes()).await.is_err() {
            return;
        }
        // Nothing more is expected from the client; a read that ends
        // tells us it closed the connection.
        let mut scratch = [0u8; 64];
        loop {
            tokio::select! {
                event = self.watcher.next_event() => {
                    let Some(event) = event else {
                        let _ = writer.write_all(b"0\r\n\r\n").await;
                        return;
                    };
                    let mut chunk = Vec::with_capacity(event.len() + 12);
                    chunk.extend_from_slice(format!("{:x}\r\n", event.len()).as_bytes());
                    chunk.extend_from_slice(&event);
                    chunk.extend_from_slice(b"\r\n");
                    if writer.write_all(&chunk).await.is_err() {
                        return;
                    }
                }
                read = reader.read(&mut scratch) => {
                    if matches!(read, Ok(0) | Err(_)) {
                        return;
                    }
                }
            }
        }
    }
}

/// A connection whose first bytes were already read: they are replayed
/// to hyper before the rest of the socket.
struct Rewind {
    prefix: Option<Bytes>,
    inner: TcpStream,
}

impl AsyncRead for Rewind {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if let Some(mut prefix) = self.prefix.take() {
            let n = prefix.len().min(buf.remaining());
            buf.put_slice(&prefix.split_to(n));
            if !prefix.is_empty() {
                self.prefix = Some(prefix);
            }
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for Rewind {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}
