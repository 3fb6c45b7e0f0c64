//! The clients part of the service, and their convergence: clients report
//! the version they applied and the fingerprint they computed; the
//! service keeps the latest report per client (in the store, for a TTL)
//! and judges it against the ring (`convergence.rs`), so operators see
//! who is behind or divergent. See `docs/convergence.md`.

mod convergence;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

pub use convergence::{ClientStatus, Convergence, ConvergenceSummary};

use super::rings::Rings;
use super::ServiceError;
use crate::placement::Fingerprint;
use crate::ring::{ApplyFailure, ClientAck, ClientId, ClientKind, Clock, RingName, Snapshot};
use crate::store::Store;

/// Longest TTL honoured: keeps `now + ttl` far from the calendar's end
/// whatever the configuration says.
const MAX_TTL: Duration = Duration::from_secs(366 * 24 * 3600);

/// One client's report, validated: the version it applied with the
/// fingerprint it computed, what kind of client it is, and the newer
/// version it could not apply, if any.
#[derive(Debug, Clone)]
pub struct AckReport {
    /// Who reports.
    pub client_id: ClientId,
    /// The version it applied.
    pub version: u64,
    /// The fingerprint it computed for that version.
    pub fingerprint: Fingerprint,
    /// A library or a proxy.
    pub kind: ClientKind,
    /// A version it tried and could not apply.
    pub failure: Option<ApplyFailure>,
}

/// The clients part: their acks, kept in the store, judged against the
/// rings. It holds no state of its own beyond the store's.
pub struct Clients {
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    rings: Arc<Rings>,
}

impl Clients {
    /// The clients of `rings`, whose acks `store` keeps.
    pub(crate) fn new(store: Arc<dyn Store>, clock: Arc<dyn Clock>, rings: Arc<Rings>) -> Self {
        Self {
            store,
            clock,
            rings,
        }
    }

    /// Records that `client` applied `version` of `ring` and computed
    /// `fingerprint` for it; the ack counts for `ttl` (capped at a year).
    /// Returns the ring's current version and the ack judged against it.
    ///
    /// A version newer than the ring's is refused with
    /// [`ServiceError::AckAheadOfRing`], after asking the store: the client
    /// may have it from another instance whose commit this one has not
    /// seen yet.
    pub async fn record_ack(
        &self,
        ring: &RingName,
        report: AckReport,
        ttl: Duration,
    ) -> Result<(Arc<Snapshot>, ClientStatus), ServiceError> {
        let AckReport {
            client_id,
            version,
            fingerprint,
            kind,
            failure,
        } = report;
        let mut current = self.rings.current(ring).await?.snapshot.clone();
        if version > current.version {
            current = Arc::new(self.store.latest(ring).await?);
            if version > current.version {
                return Err(ServiceError::AckAheadOfRing {
                    ring: ring.clone(),
                    version,
                    current: current.version,
                });
            }
        }
        let last_seen = self.clock.now();
        let ttl = time::Duration::try_from(ttl.min(MAX_TTL)).unwrap_or(time::Duration::ZERO);
        let ack = ClientAck {
            client_id,
            version,
            fingerprint,
            last_seen,
            expires_at: last_seen + ttl,
            kind,
            failure,
        };
        let known = self
            .known_fingerprints(ring, &current, std::slice::from_ref(&ack))
            .await?;
        self.store.put_ack(ring, &ack).await?;
        let status = ClientStatus::judge(&ack, &current, &known);
        Ok((current, status))
    }

    /// The live clients of `ring`, judged against its current version.
    pub async fn of(&self, ring: &RingName) -> Result<Convergence, ServiceError> {
        let current = self.rings.current(ring).await?.snapshot.clone();
        self.convergence(ring, current).await
    }

    /// The convergence of every ring, for the metrics: a ring whose acks
    /// cannot be read is left out (and logged), as are all of them when
    /// the rings cannot be listed.
    pub async fn all(&self) -> Vec<Convergence> {
        let rings = match self.rings.list().await {
            Ok(rings) => rings,
            Err(e) => {
                tracing::warn!(error = %e, "cannot list rings for client metrics");
                return Vec::new();
            }
        };
        let mut all = Vec::with_capacity(rings.len());
        for snapshot in rings {
            let ring = snapshot.ring.clone();
            match self.convergence(&ring, Arc::new(snapshot)).await {
                Ok(c) => all.push(c),
                Err(e) => tracing::warn!(ring = %ring, error = %e, "cannot read client acks"),
            }
        }
        all
    }

    /// The live clients of `ring`, judged against `current` (or a newer
    /// version, if some client already acked one this instance has not
    /// seen).
    async fn convergence(
        &self,
        ring: &RingName,
        mut current: Arc<Snapshot>,
    ) -> Result<Convergence, ServiceError> {
        let acks = self.store.list_acks(ring, self.clock.now()).await?;
        if acks.iter().any(|a| a.version > current.version) {
            current = Arc::new(self.store.latest(ring).await?);
        }
        let known = self.known_fingerprints(ring, &current, &acks).await?;
        let clients: Vec<ClientStatus> = acks
            .iter()
            .map(|a| ClientStatus::judge(a, &current, &known))
            .collect();
        Ok(Convergence {
            summary: ConvergenceSummary::of(&clients),
            current,
            clients,
        })
    }

    /// The server's fingerprint of every version `acks` name that is still
    /// retained: the current one from memory, older ones from one history
    /// read (never one read per client).
    async fn known_fingerprints(
        &self,
        ring: &RingName,
        current: &Snapshot,
        acks: &[ClientAck],
    ) -> Result<BTreeMap<u64, Fingerprint>, ServiceError> {
        let mut known = BTreeMap::from([(current.version, current.fingerprint)]);
        let oldest = acks
            .iter()
            .map(|a| a.version)
            .filter(|v| *v < current.version)
            .min();
        if let Some(oldest) = oldest {
            let history = self
                .store
                .history_after(ring, oldest.saturating_sub(1))
                .await?;
            known.extend(history.into_iter().map(|e| (e.version, e.fingerprint)));
        }
        Ok(known)
    }
}

#[cfg(test)]
mod tests;
