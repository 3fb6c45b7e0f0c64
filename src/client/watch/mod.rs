//! The background task that follows a ring: a Server-Sent Events stream,
//! or long-polls when streams cannot get through; resumes from the version
//! held after any disconnect, on whichever server answers.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

use crate::placement::Fingerprint;
use crate::ring::Snapshot;

use super::ack::Report;
use super::backoff::Backoff;
use super::error::ClientError;
use super::events::{summarize, RingEvent, VersionChange};
use super::http::Endpoints;
use super::settings::{WatchMode, WatchSettings};
use super::table_fetch::{self, Built};
use super::{Shared, Transport};

mod long_poll;
mod stream;

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
    /// Every server refused for now and said when to come back (a 503 at
    /// capacity, or a 429, with `Retry-After`): wait at least that long.
    Refused {
        error: String,
        retry_after: Duration,
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
    /// Where applied versions go to be acked; `None` when the application
    /// confirms each version itself ([`super::RingClient::confirm`]).
    reports: Option<watch::Sender<Report>>,
    /// The newest version refused, and its stated fingerprint. Watching
    /// resumes after it: fetching it again would only fail again (a
    /// tampered copy, or rules this client does not share), so the client
    /// waits for the next version instead.
    rejected: Option<(u64, Fingerprint)>,
}

impl Watch {
    pub(crate) fn new(
        shared: Arc<Shared>,
        endpoints: Endpoints,
        settings: WatchSettings,
        reports: Option<watch::Sender<Report>>,
    ) -> Self {
        let WatchSettings {
            mode,
            long_poll_wait,
            idle_timeout,
            sse_retry,
            backoff,
        } = settings;
        Self {
            shared,
            endpoints,
            mode,
            long_poll_wait,
            idle_timeout,
            sse_retry,
            backoff,
            reports,
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
            let (server, error, wait) = match outcome {
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
                Err(Failure::Unsupported(error)) => (None, error, self.backoff.next_wait()),
                Err(Failure::Retry { server, error }) => (server, error, self.backoff.next_wait()),
                Err(Failure::Refused { error, retry_after }) => {
                    (None, error, self.backoff.after_refusal(retry_after))
                }
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
            tokio::time::sleep(wait).await;
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
            ClientError::Problem(p) if matches!(p.status, 429 | 503) && p.retry_after.is_some() => {
                return Failure::Refused {
                    retry_after: Duration::from_secs(p.retry_after.unwrap_or(0)),
                    error,
                }
            }
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
        let view = match table_fetch::verified(&self.endpoints, held.clone(), snapshot).await {
            Ok((view, built)) => {
                self.shared.status.send_modify(|s| match built {
                    Built::Moves => s.table_moves_applied += 1,
                    Built::Download => s.table_downloads += 1,
                    Built::Snapshot => {}
                });
                Arc::new(view)
            }
            // A table download that did not get through says nothing about
            // the version: keep the one held, and take the next version
            // (or this one again after reconnecting) as it comes.
            Err(e @ (ClientError::Unreachable { .. } | ClientError::Status { .. })) => {
                tracing::warn!(ring = %self.shared.ring, version, error = %e, "table download failed; keeping the previous version");
                return self.set_error(e.to_string());
            }
            Err(e) if e.status().is_some_and(|s| s >= 500) => {
                return self.set_error(e.to_string());
            }
            Err(e) => return self.reject(version, Some(stated), e.to_string()),
        };
        if reset || self.rejected.is_some_and(|(v, _)| v <= version) {
            // Past the refused version, or on a history that no longer
            // contains it.
            self.rejected = None;
        }
        let previous = self.shared.swap(view.clone());
        if let Some(reports) = &self.reports {
            reports.send_modify(|r| r.applied = Some((version, view.fingerprint())));
        }
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
