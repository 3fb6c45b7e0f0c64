//! Tells the server which version this client routes on, so operators see
//! convergence (`GET /v1/rings/{ring}/clients`).

use std::sync::Arc;
use std::time::Duration;

use reqwest::Method;
use tokio::sync::watch;

use crate::placement::Fingerprint;
use crate::ring::ClientId;
use crate::wire::AckInput;

use super::backoff::Backoff;
use super::http::Endpoints;
use super::settings::AckSettings;
use super::Shared;

/// The latest applied version and its fingerprint, as the watch publishes it.
pub(crate) type Applied = Option<(u64, Fingerprint)>;

pub(crate) struct Acker {
    shared: Arc<Shared>,
    endpoints: Endpoints,
    path: String,
    interval: Duration,
    backoff: Backoff,
}

impl Acker {
    pub(crate) fn new(
        shared: Arc<Shared>,
        endpoints: Endpoints,
        client_id: ClientId,
        settings: AckSettings,
    ) -> Self {
        let path = format!(
            "/v1/rings/{}/clients/{}/ack",
            shared.ring,
            client_id.as_str()
        );
        Self {
            shared,
            endpoints,
            path,
            interval: settings.interval,
            backoff: settings.backoff,
        }
    }

    /// Acks each new version once it is applied (only the newest if several
    /// arrive while an ack is in flight), and the current one again every
    /// interval so it does not expire on the server.
    pub(crate) async fn run(mut self, mut applied: watch::Receiver<Applied>) {
        loop {
            let Some((version, fingerprint)) = *applied.borrow_and_update() else {
                if applied.changed().await.is_err() {
                    return;
                }
                continue;
            };
            let ack = AckInput {
                version: Some(version),
                fingerprint: Some(fingerprint.to_string()),
            };
            // Serializing plain data into memory cannot fail.
            let body = serde_json::to_value(ack).unwrap_or_default();
            let wait = match self
                .endpoints
                .send(Method::POST, &self.path, Some(&body), &[], None)
                .await
            {
                Ok(_) => {
                    self.backoff.reset();
                    // Only while that version is still the one routed on: a
                    // late answer must not mark a recreated ring as acked.
                    let current = self.shared.current.load();
                    if current
                        .as_ref()
                        .is_some_and(|v| v.version() == version && v.fingerprint() == fingerprint)
                    {
                        self.shared.status.send_modify(|s| s.acked = Some(version));
                    }
                    self.interval
                }
                Err(e) => {
                    // 4xx: the ring was deleted or recreated below this
                    // version; the watch will deliver what replaces it, so
                    // wait for that rather than insist.
                    tracing::debug!(ring = %self.shared.ring, version, error = %e, "ack failed");
                    match e.status() {
                        Some(400..=499) => self.interval,
                        _ => self.backoff.next_wait(),
                    }
                }
            };
            // A newer version cuts the wait short.
            if let Ok(Err(_)) = tokio::time::timeout(wait, applied.changed()).await {
                return;
            }
        }
    }
}
