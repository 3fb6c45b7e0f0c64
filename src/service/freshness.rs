//! What a partition may do to an answer: the read barrier, which tells
//! whether an answer about to be served is current, and the deadline that
//! keeps a write from waiting for a heal.
//!
//! With several instances on one etcd, a change acknowledged through one
//! reaches the others through their watches a few milliseconds later;
//! after a partition heals, many seconds later. The instance-wide state
//! ([`RingService::is_current`]) tells when the watch is known to lag,
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

use super::RingService;
use crate::ring::RingName;
use crate::store::Store;

/// How long a read may wait to confirm that it is current before it
/// answers marked stale: a round trip to etcd's quorum and the watch's
/// delivery normally take milliseconds.
const BARRIER_WAIT: Duration = Duration::from_millis(750);

/// How often [`RingService::follow_currency`] looks at the store.
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

/// The barrier's shared state.
#[derive(Debug)]
pub(super) struct Barrier {
    /// Tickets taken by readers, one each.
    tickets: AtomicU64,
    /// Held by the round in flight: one at a time.
    leading: Arc<tokio::sync::Mutex<()>>,
    rounds: watch::Sender<Round>,
    /// Touched whenever the cache takes or drops a version, so that
    /// readers waiting for it look again.
    cache_moved: watch::Sender<()>,
    /// Whether the cache was last found current (see
    /// [`RingService::follow_currency`]).
    currency: watch::Sender<bool>,
}

impl Default for Barrier {
    fn default() -> Self {
        Self {
            tickets: AtomicU64::new(0),
            leading: Arc::new(tokio::sync::Mutex::new(())),
            rounds: watch::Sender::new(Round::default()),
            cache_moved: watch::Sender::new(()),
            currency: watch::Sender::new(true),
        }
    }
}

impl Barrier {
    /// The cache changed.
    pub(super) fn cache_moved(&self) {
        self.cache_moved.send_replace(());
    }

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

impl RingService {
    /// Whether an answer computed from now on about `ring` (about every
    /// ring when `None`) may be served as current: the store is current
    /// and the cache holds every version that was committed, by any
    /// instance, before this call began. Waits at most `BARRIER_WAIT`;
    /// false means answer, marked stale.
    pub async fn confirm_current(&self, ring: Option<&RingName>) -> bool {
        if !self.store.shared() {
            return true;
        }
        if !self.store.is_current() {
            return false;
        }
        let mut cache_moved = self.barrier.cache_moved.subscribe();
        let confirmed = async {
            let Some(versions) = self.barrier.confirm(&self.store).await else {
                return false;
            };
            loop {
                cache_moved.borrow_and_update();
                if self.cache_holds(&versions, ring) {
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

    /// Whether every ring the cache holds (or `ring` alone) is at least at
    /// the version `versions` confirmed, and none that the store no longer
    /// has is still served. A ring not in the cache is read from the store
    /// when asked for, so it is current by construction.
    fn cache_holds(&self, versions: &BTreeMap<RingName, u64>, ring: Option<&RingName>) -> bool {
        let latest = self.latest.lock().expect("cache lock");
        let current =
            |name: &RingName, version: u64| versions.get(name).is_some_and(|&v| version >= v);
        match ring {
            Some(name) => latest
                .get(name)
                .is_none_or(|c| current(name, c.snapshot.version)),
            None => latest
                .iter()
                .all(|(name, c)| current(name, c.snapshot.version)),
        }
    }

    /// Whether what this service holds in memory is known to be current:
    /// false at once while the store is not (it cannot be reached, or its
    /// events lag), and true again only once the cache holds every version
    /// the store confirmed after that (see [`RingService::follow_currency`]).
    /// Never waits on the store.
    pub fn is_current(&self) -> bool {
        self.store.is_current() && *self.barrier.currency.borrow()
    }

    /// [`RingService::is_current`] as it changes, for watch streams that
    /// tell their clients.
    pub fn currency(&self) -> watch::Receiver<bool> {
        self.barrier.currency.subscribe()
    }

    /// Follows whether the store is current, every `CURRENCY_EVERY`,
    /// forever; spawn it once per service with a shared store. Coming back,
    /// it first confirms that the cache caught up: the store's events
    /// reach the cache a moment after the store counts them.
    pub async fn follow_currency(self: Arc<Self>) {
        if !self.store.shared() {
            return;
        }
        // Not current until the store has caught up once; said quietly,
        // since every instance starts so.
        self.barrier.currency.send_replace(false);
        let mut tick = tokio::time::interval(CURRENCY_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let was = *self.barrier.currency.borrow();
            let now = self.store.is_current() && (was || self.confirm_current(None).await);
            if now != was {
                self.barrier.currency.send_replace(now);
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
}
