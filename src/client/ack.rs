//! Tells the server which version this client routes on, so operators see
//! convergence (`GET /v1/rings/{ring}/clients`).

use std::sync::Arc;
use std::time::Duration;

use reqwest::Method;
use tokio::sync::watch;

use crate::placement::Fingerprint;
use crate::ring::{ApplyFailure, ClientId, ClientKind};
use crate::wire::{AckInput, ApplyFailureInput};

use super::backoff::Backoff;
use super::http::Endpoints;
use super::settings::AckSettings;
use super::Shared;

/// What the client tells the server next: the version it applied with
/// its fingerprint, and a newer version it could not apply. The watch
/// writes `applied` as it swaps versions in, unless the application
/// confirms each one itself ([`super::RingClient::confirm`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Report {
    pub(crate) applied: Option<(u64, Fingerprint)>,
    pub(crate) failure: Option<ApplyFailure>,
}

pub(crate) struct Acker {
    shared: Arc<Shared>,
    endpoints: Endpoints,
    path: String,
    interval: Duration,
    backoff: Backoff,
    kind: ClientKind,
    /// Versions are acked when the application confirms them, not when
    /// the watch swaps them in.
    confirmed: bool,
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
            kind: settings.kind,
            confirmed: settings.confirmed,
        }
    }

    /// Acks each new version once it is applied (only the newest if several
    /// arrive while an ack is in flight), and the current one again every
    /// interval so it does not expire on the server.
    pub(crate) async fn run(mut self, mut reports: watch::Receiver<Report>) {
        loop {
            let report = reports.borrow_and_update().clone();
            let Some((version, fingerprint)) = report.applied else {
                if reports.changed().await.is_err() {
                    return;
                }
                continue;
            };
            let ack = AckInput {
                version: Some(version),
                fingerprint: Some(fingerprint.to_string()),
                // Left out for a library, so that acks stay readable by
                // servers from before kinds existed (they refuse unknown
                // fields).
                kind: (self.kind != ClientKind::Library).then_some(self.kind),
                // The server takes only a failure newer than the version
                // applied; an older one was overtaken.
                failure: report
                    .failure
                    .clone()
                    .filter(|f| f.version > version)
                    .map(|f| ApplyFailureInput {
                        version: Some(f.version),
                        error: Some(f.error),
                    }),
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
                    // Only while that version is still the one routed on (or,
                    // confirmed, the one confirmed): a late answer must not
                    // mark a recreated ring as acked.
                    let still = if self.confirmed {
                        reports.borrow().applied == Some((version, fingerprint))
                    } else {
                        let current = self.shared.current.load();
                        current.as_ref().is_some_and(|v| {
                            v.version() == version && v.fingerprint() == fingerprint
                        })
                    };
                    if still {
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
            // A newer version (or failure) cuts the wait short.
            if let Ok(Err(_)) = tokio::time::timeout(wait, reports.changed()).await {
                return;
            }
        }
    }
}
