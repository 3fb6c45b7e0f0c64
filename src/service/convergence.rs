//! Client convergence: clients report the version they applied and the
//! fingerprint they computed; the service keeps the latest report per
//! client (in the store, for a TTL) and judges it against the ring, so
//! operators see who is behind or divergent. See `docs/convergence.md`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use super::{RingService, ServiceError};
use crate::placement::Fingerprint;
use crate::ring::{ClientAck, ClientId, RingName, Snapshot};
use crate::store::StoreError;

/// Longest TTL honoured: keeps `now + ttl` far from the calendar's end
/// whatever the configuration says.
const MAX_TTL: Duration = Duration::from_secs(366 * 24 * 3600);

/// One client's latest ack, judged against the ring's current version.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientStatus {
    /// The ack as stored.
    pub ack: ClientAck,
    /// How many versions the client is behind the ring's current version.
    pub lag: u64,
    /// Whether it applied the current version.
    pub on_latest: bool,
    /// Whether its fingerprint equals the server's for that version;
    /// `None` when the version has been pruned, so the server cannot tell.
    pub matches: Option<bool>,
    /// `matches` is false: the client computed a different placement for
    /// the same version.
    pub divergent: bool,
}

impl ClientStatus {
    fn judge(ack: &ClientAck, current: &Snapshot, known: &BTreeMap<u64, Fingerprint>) -> Self {
        let matches = known.get(&ack.version).map(|f| *f == ack.fingerprint);
        Self {
            ack: ack.clone(),
            lag: current.version.saturating_sub(ack.version),
            on_latest: ack.version >= current.version,
            matches,
            divergent: matches == Some(false),
        }
    }
}

/// Counts over a ring's live clients.
#[derive(Debug, Clone, PartialEq)]
pub struct ConvergenceSummary {
    /// Clients with a live ack.
    pub clients: u64,
    /// Of those, how many applied the current version.
    pub on_latest: u64,
    /// `on_latest / clients`; `None` when there are no clients (a share
    /// of nobody is undefined).
    pub on_latest_share: Option<f64>,
    /// Clients whose fingerprint differs from the server's.
    pub divergent: u64,
}

impl ConvergenceSummary {
    /// The counts over `clients`.
    pub fn of(clients: &[ClientStatus]) -> Self {
        let count = |f: fn(&ClientStatus) -> bool| clients.iter().filter(|c| f(c)).count() as u64;
        let on_latest = count(|c| c.on_latest);
        Self {
            clients: clients.len() as u64,
            on_latest,
            on_latest_share: (!clients.is_empty()).then(|| on_latest as f64 / clients.len() as f64),
            divergent: count(|c| c.divergent),
        }
    }
}

/// A ring's live clients and how far they have converged.
#[derive(Debug, Clone, PartialEq)]
pub struct Convergence {
    /// The version the clients are judged against.
    pub current: Arc<Snapshot>,
    /// Every client with a live ack, sorted by id.
    pub clients: Vec<ClientStatus>,
    /// Counts over `clients`.
    pub summary: ConvergenceSummary,
}

impl RingService {
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
        client_id: ClientId,
        version: u64,
        fingerprint: Fingerprint,
        ttl: Duration,
    ) -> Result<(Arc<Snapshot>, ClientStatus), ServiceError> {
        let mut current = self.current(ring).await?.snapshot.clone();
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
        let last_seen = self.now();
        let ttl = time::Duration::try_from(ttl.min(MAX_TTL)).unwrap_or(time::Duration::ZERO);
        let ack = ClientAck {
            client_id,
            version,
            fingerprint,
            last_seen,
            expires_at: last_seen + ttl,
        };
        let known = self
            .known_fingerprints(ring, &current, std::slice::from_ref(&ack))
            .await?;
        self.store.put_ack(ring, &ack).await?;
        let status = ClientStatus::judge(&ack, &current, &known);
        Ok((current, status))
    }

    /// The live clients of `ring`, judged against its current version.
    pub async fn clients(&self, ring: &RingName) -> Result<Convergence, ServiceError> {
        let current = self.current(ring).await?.snapshot.clone();
        self.convergence(ring, current).await
    }

    /// The convergence of every ring, for the metrics: a ring whose acks
    /// cannot be read is left out (and logged), as are all of them when
    /// the rings cannot be listed.
    pub async fn convergence_all(&self) -> Vec<Convergence> {
        let rings = match self.list().await {
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

    /// Whether the store answers: one cheap round trip, reading a ring
    /// that normally does not exist, so no real ring is loaded.
    pub async fn ready(&self) -> Result<(), ServiceError> {
        let probe = RingName::new("readyz-probe").expect("a valid ring name");
        match self.store.latest(&probe).await {
            Ok(_) | Err(StoreError::RingNotFound(_)) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// The live clients of `ring`, judged against `current` (or a newer
    /// version, if some client already acked one this instance has not
    /// seen).
    async fn convergence(
        &self,
        ring: &RingName,
        mut current: Arc<Snapshot>,
    ) -> Result<Convergence, ServiceError> {
        let acks = self.store.list_acks(ring, self.now()).await?;
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
mod tests {
    use std::time::Duration;

    use super::super::test_support::{at, create, service};
    use super::*;
    use crate::ring::Clock;

    fn client(id: &str) -> ClientId {
        ClientId::new(id).expect("a valid client id")
    }

    #[tokio::test]
    async fn an_ack_counts_from_its_arrival_until_exactly_its_ttl_has_passed() {
        let (service, clock, _dir) = service(1_000);
        let ring = create(&service, "r").await;
        let fp = service.current(&ring).await.unwrap().snapshot.fingerprint;
        clock.set(at(10, 0));
        let (current, status) = service
            .record_ack(&ring, client("c1"), 1, fp, Duration::from_secs(30))
            .await
            .unwrap();
        assert_eq!(current.version, 1);
        let ack = ClientAck {
            client_id: client("c1"),
            version: 1,
            fingerprint: fp,
            last_seen: at(10, 0),
            expires_at: at(40, 0),
        };
        let live = ClientStatus {
            ack: ack.clone(),
            lag: 0,
            on_latest: true,
            matches: Some(true),
            divergent: false,
        };
        assert_eq!(status, live);

        // One microsecond before the expiry the ack still counts ...
        clock.set(at(39, 999_999));
        let c = service.clients(&ring).await.unwrap();
        assert_eq!(c.clients, vec![live]);
        assert_eq!(
            c.summary,
            ConvergenceSummary {
                clients: 1,
                on_latest: 1,
                on_latest_share: Some(1.0),
                divergent: 0,
            }
        );
        // ... and at the expiry it no longer does.
        clock.set(at(40, 0));
        let c = service.clients(&ring).await.unwrap();
        assert_eq!(c.clients, Vec::new());
        assert_eq!(
            c.summary,
            ConvergenceSummary {
                clients: 0,
                on_latest: 0,
                on_latest_share: None,
                divergent: 0,
            }
        );
        assert_eq!(c.current.version, 1);
    }

    #[tokio::test]
    async fn a_renewed_ack_moves_the_expiry_and_a_huge_ttl_is_capped_at_366_days() {
        let (service, clock, _dir) = service(1_000);
        let ring = create(&service, "r").await;
        let fp = service.current(&ring).await.unwrap().snapshot.fingerprint;
        service
            .record_ack(&ring, client("c1"), 1, fp, Duration::from_secs(30))
            .await
            .unwrap();
        clock.set(at(25, 0));
        let (_, renewed) = service
            .record_ack(&ring, client("c1"), 1, fp, Duration::from_secs(30))
            .await
            .unwrap();
        assert_eq!(renewed.ack.last_seen, at(25, 0));
        assert_eq!(renewed.ack.expires_at, at(55, 0));
        clock.set(at(54, 0));
        assert_eq!(service.clients(&ring).await.unwrap().clients.len(), 1);

        let ten_years = Duration::from_secs(10 * 365 * 24 * 3600);
        let (_, capped) = service
            .record_ack(&ring, client("c2"), 1, fp, ten_years)
            .await
            .unwrap();
        assert_eq!(capped.ack.expires_at, at(54 + 366 * 24 * 3600, 0));
    }

    #[tokio::test]
    async fn acks_are_judged_against_the_ring_and_a_future_version_is_refused() {
        let (service, clock, _dir) = service(1_000);
        let ring = create(&service, "r").await;
        let v1 = service.current(&ring).await.unwrap().snapshot.fingerprint;
        let ttl = Duration::from_secs(60);
        let other: Fingerprint = "ab".repeat(32).parse().unwrap();
        service
            .record_ack(&ring, client("good"), 1, v1, ttl)
            .await
            .unwrap();
        service
            .record_ack(&ring, client("odd"), 1, other, ttl)
            .await
            .unwrap();
        let err = service
            .record_ack(&ring, client("early"), 2, v1, ttl)
            .await
            .unwrap_err();
        assert!(
            matches!(
                &err,
                ServiceError::AckAheadOfRing {
                    version: 2,
                    current: 1,
                    ..
                }
            ),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "ring `r` is at version 1; version 2 does not exist yet: ack only versions the server sent"
        );
        clock.set(at(1, 0));
        let c = service.clients(&ring).await.unwrap();
        let judged: Vec<(&str, Option<bool>, bool)> = c
            .clients
            .iter()
            .map(|s| (s.ack.client_id.as_str(), s.matches, s.divergent))
            .collect();
        assert_eq!(
            judged,
            vec![("good", Some(true), false), ("odd", Some(false), true)]
        );
        assert_eq!(c.summary.divergent, 1);
        assert_eq!(c.summary.on_latest_share, Some(1.0));
        assert_eq!(clock.now(), at(1, 0));
        assert_eq!(service.convergence_all().await, vec![c]);
    }

    #[tokio::test]
    async fn the_store_answering_makes_the_service_ready() {
        let (service, _clock, _dir) = service(1_000);
        assert!(service.is_current());
        service.ready().await.unwrap();
    }
}
