//! Following a ring over its Server-Sent Events stream.

use std::time::Duration;

use futures_util::StreamExt;
use reqwest::header::CONTENT_TYPE;
use reqwest::Method;

use crate::client::error::error_chain;
use crate::client::sse::{SseDecoder, SseEvent};
use crate::client::Transport;
use crate::placement::Fingerprint;
use crate::ring::Snapshot;
use crate::wire::{KeepaliveEvent, SnapshotView};

use super::{Failure, Watch};

impl Watch {
    /// One stream: open it after the version held, apply events until it
    /// breaks.
    pub(super) async fn stream(&mut self) -> Result<(), Failure> {
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
            "snapshot" | "reset" => match snapshot_of(&event.data) {
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
        let Ok(KeepaliveEvent {
            version: Some(version),
            fingerprint: Some(fingerprint),
            ..
        }) = serde_json::from_str(data)
        else {
            return;
        };
        let Ok(fingerprint) = fingerprint.parse::<Fingerprint>() else {
            return;
        };
        let Some(held) = self.shared.current.load_full() else {
            return;
        };
        let diverged = (version == held.version() && fingerprint != held.fingerprint())
            || version < held.version();
        if !diverged || self.rejected == Some((version, fingerprint)) {
            return;
        }
        let path = format!("/v1/rings/{}/snapshot", self.shared.ring);
        match self.endpoints.get_snapshot(&path).await {
            Ok(snapshot) => self.apply(snapshot, true).await,
            Err(e) => self.set_error(e.to_string()),
        }
    }
}

/// An event's snapshot, read as the wire view and turned into the
/// domain's snapshot, as every snapshot body is.
fn snapshot_of(data: &str) -> Result<Snapshot, String> {
    let view: SnapshotView = serde_json::from_str(data).map_err(|e| e.to_string())?;
    Snapshot::try_from(view).map_err(|e| e.to_string())
}
