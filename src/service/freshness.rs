//! What a partition may do to an answer: the read barrier, which tells
//! whether an answer about to be served is current, and the deadline that
//! keeps a write from waiting for a heal.
//!
//! With several instances on one etcd, a change acknowledged through one
//! reaches the others through their watches a few milliseconds later;
//! after a partition heals, many seconds later. The instance-wide state
//! ([`Freshness::is_current`]) tells when the watch is known to lag,
//! but not that it has delivered the very change a client just made
//! elsewhere. So a read first learns every ring's latest version from a
//! linearizable read sent after the read began, and waits until the cache
//! holds at least that (normally at once). That is etcd's own recipe for
//! linearizable reads (ReadIndex), and like etcd, reads arriving together
//! share one round trip: a reader waits for the first round sent after it
//! arrived. A reader that cannot confirm within `BARRIER_WAIT` answers
//! anyway, marked stale, so reads keep answering during an outage.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use super::background::{Stop, Ticks};
use super::rings::Rings;
use super::ServiceError;
use crate::ring::RingName;
use crate::store::{Store, StoreError};

/// How long a read may wait to confirm that it is current before it
/// answers marked stale: a round trip to etcd's quorum and the watch's
/// delivery normally take milliseconds.
const BARRIER_WAIT: Duration = Duration::from_millis(750);

/// How often [`Freshness::follow`] looks at the store.
const CURRENCY_EVERY: Duration = Duration::from_millis(50);

/// A write's deadline while the store is current: under 3 s, with room
/// for the answer itself. Commits normally take tens of milliseconds, and
/// an etcd election about a second.
const WRITE_DEADLINE: Duration = Duration::from_millis(2500);

/// A write's deadline while the instance knows it is not current: within
/// 1 s, it either gets through or is refused, instead of waiting for a
/// heal the client knows nothing of.
const CUT_OFF_WRITE_DEADLINE: Duration = Duration::from_millis(800);

/// What a round learnt: every ring's latest version, or `None` when the
/// store did not answer in time.
type Confirmed = Option<Arc<BTreeMap<RingName, u64>>>;

/// One finished round.
#[derive(Debug, Clone, Default)]
struct Round {
    /// Every ticket up to this one was taken before the round's read was
    /// sent, so the round answers for it.
    covers: u64,
    confirmed: Confirmed,
}

/// The part of the service that tells whether its answers are current.
pub struct Freshness {
    store: Arc<dyn Store>,
    rings: Arc<Rings>,
    barrier: Arc<Barrier>,
    /// Whether the cache was last found current (see [`Freshness::follow`]).
    currency: watch::Sender<bool>,
}

/// The read barrier's rounds.
#[derive(Debug)]
struct Barrier {
    /// Tickets taken by readers, one each.
    tickets: AtomicU64,
    /// Held by the round in flight: one at a time.
    leading: Arc<tokio::sync::Mutex<()>>,
    rounds: watch::Sender<Round>,
}

impl Default for Barrier {
    fn default() -> Self {
        Self {
            tickets: AtomicU64::new(0),
            leading: Arc::new(tokio::sync::Mutex::new(())),
            rounds: watch::Sender::new(Round::default()),
        }
    }
}

impl Barrier {
    /// What the first round sent after this call began confirmed.
    async fn confirm(self: &Arc<Self>, store: &Arc<dyn Store>) -> Confirmed {
        let ticket = self.tickets.fetch_add(1, Ordering::SeqCst) + 1;
        let mut rounds = self.rounds.subscribe();
        loop {
            {
                let round = rounds.borrow_and_update();
                if round.covers >= ticket {
                    return round.confirmed.clone();
                }
            }
            if let Ok(guard) = self.leading.clone().try_lock_owned() {
                // Run by a task of its own, so a reader that gives up does
                // not leave the others waiting for a round nobody sends.
                let barrier = self.clone();
                let store = store.clone();
                tokio::spawn(async move {
                    let covers = barrier.tickets.load(Ordering::SeqCst);
                    let confirmed = store.confirmed_versions().await.ok().map(Arc::new);
                    // Released before the round is announced, so that a
                    // reader it does not cover can lead the next one.
                    drop(guard);
                    barrier.rounds.send_replace(Round { covers, confirmed });
                });
            }
            if rounds.changed().await.is_err() {
                return None;
            }
        }
    }
}

impl Freshness {
    /// The freshness of `rings`, as kept in step with `store`.
    pub(crate) fn new(store: Arc<dyn Store>, rings: Arc<Rings>) -> Self {
        Self {
            store,
            rings,
            barrier: Arc::default(),
            currency: watch::Sender::new(true),
        }
    }

    /// Whether an answer computed from now on about `ring` (about every
    /// ring when `None`) may be served as current: the store is current
    /// and the cache holds every version that was committed, by any
    /// instance, before this call began. Waits at most `BARRIER_WAIT`;
    /// false means answer, marked stale.
    pub async fn confirm(&self, ring: Option<&RingName>) -> bool {
        if !self.store.shared() {
            return true;
        }
        if !self.store.is_current() {
            return false;
        }
        let mut cache_moved = self.rings.moves();
        let confirmed = async {
            let Some(versions) = self.barrier.confirm(&self.store).await else {
                return false;
            };
            loop {
                cache_moved.borrow_and_update();
                if self.rings.holds(&versions, ring) {
                    return true;
                }
                if cache_moved.changed().await.is_err() {
                    return false;
                }
            }
        };
        tokio::time::timeout(BARRIER_WAIT, confirmed)
            .await
            .unwrap_or(false)
    }

    /// Whether what this service holds in memory is known to be current:
    /// false at once while the store is not (it cannot be reached, or its
    /// events lag), and true again only once the cache holds every version
    /// the store confirmed after that (see `Freshness::follow`).
    /// Never waits on the store.
    pub fn is_current(&self) -> bool {
        self.store.is_current() && *self.currency.borrow()
    }

    /// [`Freshness::is_current`] as it changes, for watch streams that
    /// tell their clients.
    pub fn currency(&self) -> watch::Receiver<bool> {
        self.currency.subscribe()
    }

    /// Follows whether the store is current, every `CURRENCY_EVERY`,
    /// until `stop`; one loop per service (see `service/background.rs`),
    /// which returns at once unless the store is shared. Coming back, it
    /// first confirms that the cache caught up: the store's events reach
    /// the cache a moment after the store counts them.
    pub(crate) async fn follow(self: Arc<Self>, stop: Stop) {
        if !self.store.shared() {
            return;
        }
        // Not current until the store has caught up once; said quietly,
        // since every instance starts so.
        self.currency.send_replace(false);
        let mut ticks = Ticks::every(CURRENCY_EVERY, stop);
        while ticks.next().await {
            let was = *self.currency.borrow();
            let now = self.store.is_current() && (was || self.confirm(None).await);
            if now != was {
                self.currency.send_replace(now);
                if now {
                    tracing::info!("caught up with the store: answers are current again");
                } else {
                    tracing::warn!("the store is not current: answers are marked stale");
                }
            }
        }
    }

    /// How long a write may take before it is answered 503, unless its
    /// client set its own deadline: none with an embedded store, which
    /// no partition can cut off; `WRITE_DEADLINE` while the store is
    /// current, so that a write caught by a partition the instance has not
    /// yet noticed is refused within 3 s; `CUT_OFF_WRITE_DEADLINE` once
    /// the instance knows it is not current.
    pub fn write_deadline(&self) -> Option<Duration> {
        if !self.store.shared() {
            None
        } else if self.is_current() {
            // As `/readyz` says: a client that saw 503 there is answered
            // within 1 s.
            Some(WRITE_DEADLINE)
        } else {
            Some(CUT_OFF_WRITE_DEADLINE)
        }
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
}

#[cfg(test)]
mod tests {
    use crate::service::test_support::service;

    #[tokio::test]
    async fn an_embedded_store_is_current_and_answering_makes_it_ready() {
        let (service, _clock, _dir) = service(1_000);
        assert!(service.freshness().is_current());
        assert_eq!(service.freshness().write_deadline(), None);
        service.freshness().ready().await.unwrap();
    }
}
