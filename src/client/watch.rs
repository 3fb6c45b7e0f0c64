//! The background task that follows a ring: a Server-Sent Events stream,
//! or long-polls when streams cannot get through; resumes from the version
//! held after any disconnect, on whichever server answers.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use reqwest::header::CONTENT_TYPE;
use reqwest::{Method, StatusCode};
use tokio::sync::watch;
use tokio::time::Instant;

use crate::placement::Fingerprint;
use crate::ring::Snapshot;

use super::ack::Applied;
use super::backoff::Backoff;
use super::builder::{ClientBuilder, WatchMode};
use super::error::ClientError;
use super::events::{summarize, RingEvent, VersionChange};
use super::http::{decode, error_chain, Endpoints};
use super::sse::{SseDecoder, SseEvent};
use super::view::RingView;
use super::{Shared, Transport};

/// Most missing versions a long-poll client fetches one by one; a larger
/// gap is bridged by jumping to the newest version.
const MAX_GAP: u64 = 64;

/// Why one watch attempt ended.
enum Failure {
    /// The stream cannot be used through this server or a proxy in front
    /// of it: the route is missing, refused, or delivers nothing.
    Unsupported(String),
    /// Anything else: try again after a backoff, on another server first.
    Retry {
        server: Option<String>,
        error: String,
    },
}

pub(crate) struct Watch {
    shared: Arc<Shared>,
    endpoints: Endpoints,
    mode: WatchMode,
    long_poll_wait: Duration,
    idle_timeout: Duration,
    sse_retry: Duration,
    backoff: Backoff,
    applied: watch::Sender<Applied>,
    /// The newest version refused, and its stated fingerprint. Watching
    /// resumes after it: fetching it again would only fail again (a
    /// tampered copy, or rules this client does not share), so the client
    /// waits for the next version instead.
    rejected: Option<(u64, Fingerprint)>,
}

/// The body of a keep-alive event.
#[derive(serde::Deserialize)]
struct Keepalive {
    version: u64,
    fingerprint: Fingerprint,
}

impl Watch {
    pub(crate) fn new(
        shared: Arc<Shared>,
        endpoints: Endpoints,
        settings: &ClientBuilder,
        applied: watch::Sender<Applied>,
    ) -> Self {
        Self {
            shared,
            endpoints,
            mode: settings.mode,
            long_poll_wait: settings.long_poll_wait,
            idle_timeout: settings.idle_timeout,
            sse_retry: settings.sse_retry,
            backoff: Backoff::new(settings.backoff_min, settings.backoff_max),
            applied,
            rejected: None,
        }
    }

    pub(crate) async fn run(mut self) {
        let mut use_stream = self.mode != WatchMode::LongPoll;
        let mut stream_again_at: Option<Instant> = None;
        loop {
            if stream_again_at.is_some_and(|t| Instant::now() >= t) {
                use_stream = true;
                stream_again_at = None;
            }
            let outcome = if use_stream {
                self.stream().await
            } else {
                self.long_poll().await
            };
            let (server, error) = match outcome {
                Ok(()) => continue,
                // Only a stream falls back; a long-poll that is refused
                // backs off like any other failure.
                Err(Failure::Unsupported(error)) if use_stream && self.mode == WatchMode::Auto => {
                    tracing::info!(ring = %self.shared.ring, %error, "watch stream unusable; long-polling");
                    use_stream = false;
                    stream_again_at = Some(Instant::now() + self.sse_retry);
                    self.set_error(error);
                    continue;
                }
                Err(Failure::Unsupported(error)) => (None, error),
                Err(Failure::Retry { server, error }) => (server, error),
            };
            tracing::debug!(ring = %self.shared.ring, %error, "watch attempt failed");
            if let Some(server) = server {
                self.endpoints.demote(&server);
            }
            self.shared.status.send_modify(|s| {
                s.transport = Transport::Connecting;
                s.server = None;
                s.last_error = Some(error);
            });
            tokio::time::sleep(self.backoff.next_wait()).await;
        }
    }

    fn held_version(&self) -> Option<u64> {
        self.shared.current.load().as_ref().map(|v| v.version())
    }

    /// Where to resume: after the version held, or after a newer one
    /// that was refused.
    fn resume_after(&self) -> Option<u64> {
        let refused = self.rejected.map(|(v, _)| v);
        self.held_version().max(refused)
    }

    fn set_error(&self, error: String) {
        self.shared
            .status
            .send_modify(|s| s.last_error = Some(error));
    }

    fn connected(&self, transport: Transport, server: &str) {
        self.shared.status.send_if_modified(|s| {
            let changed = s.transport != transport || s.server.as_deref() != Some(server);
            s.transport = transport;
            s.server = Some(server.to_owned());
            changed
        });
    }

    /// Turns a refused request into a [`Failure`], noting a deleted ring.
    fn refused(&self, e: ClientError) -> Failure {
        let error = e.to_string();
        match &e {
            ClientError::Problem(p)
                if p.slug() == "ring-not-found" && self.held_version().is_some() =>
            {
                self.mark_deleted();
            }
            ClientError::Problem(p) if p.slug() == "ring-not-found" => {}
            ClientError::Problem(p) if matches!(p.status, 404 | 405 | 406 | 501) => {
                return Failure::Unsupported(error)
            }
            // A proxy's own error page: no problem document.
            ClientError::Status {
                status: 404 | 405 | 406 | 501,
                ..
            } => return Failure::Unsupported(error),
            _ => {}
        }
        Failure::Retry {
            server: None,
            error,
        }
    }

    fn mark_deleted(&self) {
        let newly = self.shared.status.send_if_modified(|s| {
            let changed = !s.deleted;
            s.deleted = true;
            changed
        });
        if newly {
            let _ = self.shared.events.send(RingEvent::Deleted);
        }
    }

    /// One stream: open it after the version held, apply events until it
    /// breaks.
    async fn stream(&mut self) -> Result<(), Failure> {
        let mut path = format!("/v1/rings/{}/watch", self.shared.ring);
        if let Some(v) = self.resume_after() {
            path.push_str(&format!("?after={v}"));
        }
        let (resp, server) = self
            .endpoints
            .send(
                Method::GET,
                &path,
                None,
                &[("accept", "text/event-stream")],
                Some(Duration::ZERO),
            )
            .await
            .map_err(|e| self.refused(e))?;
        let content_type = resp
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        if !content_type.starts_with("text/event-stream") {
            return Err(Failure::Unsupported(format!(
                "{server} answered the watch with `{content_type}`, not an event stream"
            )));
        }
        self.connected(Transport::Sse, &server);
        let mut body = resp.bytes_stream();
        let mut decoder = SseDecoder::new();
        let mut events = Vec::new();
        let mut got_any = false;
        loop {
            let retry = |error: String| Failure::Retry {
                server: Some(server.clone()),
                error,
            };
            let chunk = match tokio::time::timeout(self.idle_timeout, body.next()).await {
                Err(_) if !got_any => {
                    return Err(Failure::Unsupported(format!(
                        "{server} sent no event within {:?} (a buffering proxy?)",
                        self.idle_timeout
                    )))
                }
                Err(_) => {
                    return Err(retry(format!(
                        "{server} sent nothing for {:?}",
                        self.idle_timeout
                    )))
                }
                Ok(None) => return Err(retry(format!("{server} ended the stream"))),
                Ok(Some(Err(e))) => {
                    return Err(retry(format!("stream from {server}: {}", error_chain(&e))))
                }
                Ok(Some(Ok(chunk))) => chunk,
            };
            decoder
                .feed(&chunk, &mut events)
                .map_err(|e| retry(format!("{server}: {e}")))?;
            for event in events.drain(..) {
                if !got_any {
                    got_any = true;
                    self.backoff.reset();
                }
                self.on_event(event).await;
            }
        }
    }

    async fn on_event(&mut self, event: SseEvent) {
        match event.event.as_str() {
            "snapshot" | "reset" => match serde_json::from_str::<Snapshot>(&event.data) {
                Ok(snapshot) => self.apply(snapshot, event.event == "reset").await,
                Err(e) => self.reject(
                    event.id.and_then(|id| id.parse().ok()).unwrap_or(0),
                    None,
                    format!("undecodable snapshot: {e}"),
                ),
            },
            "deleted" => self.mark_deleted(),
            "keepalive" => self.check_keepalive(&event.data).await,
            _ => {}
        }
    }

    /// A keep-alive names the ring's newest version and fingerprint. If the
    /// client holds that version number with another fingerprint, or a newer
    /// number, the ring was deleted and recreated while the client was away:
    /// its history does not continue the client's, so the current snapshot
    /// replaces what the client holds.
    async fn check_keepalive(&mut self, data: &str) {
        let Ok(k) = serde_json::from_str::<Keepalive>(data) else {
            return;
        };
        let Some(held) = self.shared.current.load_full() else {
            return;
        };
        let diverged = (k.version == held.version() && k.fingerprint != held.fingerprint())
            || k.version < held.version();
        if !diverged || self.rejected == Some((k.version, k.fingerprint)) {
            return;
        }
        let path = format!("/v1/rings/{}/snapshot", self.shared.ring);
        match self.endpoints.get_json::<Snapshot>(&path).await {
            Ok(snapshot) => self.apply(snapshot, true).await,
            Err(e) => self.set_error(e.to_string()),
        }
    }

    /// One long-poll: returns after a new version was applied or the wait
    /// ran out.
    async fn long_poll(&mut self) -> Result<(), Failure> {
        let ring = self.shared.ring.clone();
        let held = self.resume_after();
        let wait = self.long_poll_wait;
        let path = match held {
            Some(v) => format!(
                "/v1/rings/{ring}/snapshot?after={v}&wait={}ms",
                wait.as_millis()
            ),
            None => format!("/v1/rings/{ring}/snapshot"),
        };
        // The server may add up to 1/16 of the wait as jitter.
        let limit = wait + wait / 16 + Duration::from_secs(10);
        let (resp, server) = self
            .endpoints
            .send(Method::GET, &path, None, &[], Some(limit))
            .await
            .map_err(|e| self.refused(e))?;
        self.connected(Transport::LongPoll, &server);
        if resp.status() == StatusCode::NOT_MODIFIED {
            self.backoff.reset();
            return Ok(());
        }
        let mut reset = resp
            .headers()
            .get("ringd-reset")
            .is_some_and(|v| v.as_bytes() == b"true");
        let snapshot: Snapshot = decode(resp, &server).await.map_err(|e| Failure::Retry {
            server: Some(server.clone()),
            error: e.to_string(),
        })?;
        self.backoff.reset();
        if let (Some(h), false) = (held, reset) {
            // A long-poll answers with the newest version; fetch the ones in
            // between so subscribers see every version, as on a stream.
            if snapshot.version > h + 1 + MAX_GAP {
                reset = true;
            } else {
                for v in h + 1..snapshot.version {
                    let path = format!("/v1/rings/{ring}/snapshots/{v}");
                    match self.endpoints.get_json::<Snapshot>(&path).await {
                        Ok(s) => self.apply(s, false).await,
                        Err(e) if matches!(e.status(), Some(404 | 410)) => {
                            reset = true;
                            break;
                        }
                        Err(e) => return Err(self.refused(e)),
                    }
                }
            }
        }
        self.apply(snapshot, reset).await;
        Ok(())
    }

    fn reject(&mut self, version: u64, stated: Option<Fingerprint>, error: String) {
        if let Some(fp) = stated {
            if self.rejected == Some((version, fp)) {
                return;
            }
            if self.rejected.is_none_or(|(v, _)| v <= version) {
                self.rejected = Some((version, fp));
            }
        }
        tracing::warn!(ring = %self.shared.ring, version, %error, "snapshot refused; keeping the previous version");
        self.set_error(error.clone());
        let _ = self
            .shared
            .events
            .send(RingEvent::Rejected { version, error });
    }

    /// Verifies `snapshot` and, if it holds, routes on it from now on.
    async fn apply(&mut self, snapshot: Snapshot, reset: bool) {
        let held = self.shared.current.load_full();
        if let Some(h) = &held {
            let same = snapshot.version == h.version() && snapshot.fingerprint == h.fingerprint();
            if same || (!reset && snapshot.version <= h.version()) {
                return;
            }
        }
        let version = snapshot.version;
        let stated = snapshot.fingerprint;
        // Building a large placement takes milliseconds: keep it off the
        // runtime's worker threads.
        let view = match tokio::task::spawn_blocking(move || RingView::verify(snapshot)).await {
            Ok(Ok(view)) => Arc::new(view),
            Ok(Err(e)) => return self.reject(version, Some(stated), e.to_string()),
            Err(e) => {
                return self.reject(version, Some(stated), format!("verification failed: {e}"))
            }
        };
        if reset || self.rejected.is_some_and(|(v, _)| v <= version) {
            // Past the refused version, or on a history that no longer
            // contains it.
            self.rejected = None;
        }
        let previous = self.shared.swap(view.clone());
        self.applied
            .send_replace(Some((version, view.fingerprint())));
        if self.shared.events.receiver_count() == 0 {
            return;
        }
        let diff = match &previous {
            Some(p) => {
                let (p, v) = (p.clone(), view.clone());
                tokio::task::spawn_blocking(move || summarize(&p, &v))
                    .await
                    .ok()
            }
            None => None,
        };
        let _ = self.shared.events.send(RingEvent::Applied(VersionChange {
            from: previous.map(|p| p.version()),
            to: version,
            reset,
            diff,
            view,
        }));
    }
}
