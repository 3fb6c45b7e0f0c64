//! The notification hub: where watchers and long-polls learn of new
//! versions.
//!
//! The service publishes every version it learns of, from its own commits
//! and from the store's events (so, with etcd, from every instance), in
//! increasing order per ring. For each ring the hub keeps the newest
//! version in a `tokio::sync::watch` channel and the last
//! [`RECENT_VERSIONS`] versions in memory. A watcher holds only a receiver
//! and the number of the last version it sent: nothing is queued per
//! watcher, so a slow or dead watcher costs no memory and never delays
//! another. When it wakes up it sends the versions it missed from the
//! recent list, or, if it fell too far behind, one reset to the newest.
//!
//! Health transitions travel on a second channel per ring, a
//! `tokio::sync::broadcast` made when the first watcher asks for them:
//! they are not versions, so they never touch the head or the recent list,
//! and a ring nobody watches for health costs nothing. A watcher that
//! reads too slowly loses the oldest of them, never a version. Rollout
//! events travel the same way, on a third channel (`rollouts.rs`).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;
use time::OffsetDateTime;
use tokio::sync::{broadcast, watch};

use crate::placement::NodeId;
use crate::ring::{LeaseId, NodeHealth, RingName, Snapshot};

mod rings_feed;
mod rollouts;

pub use rings_feed::{RingsChange, RINGS_BACKLOG};
pub use rollouts::{PublishedRollout, RolloutMark, ROLLOUT_BACKLOG};

/// Versions per ring kept in memory for watchers that are a little behind.
pub const RECENT_VERSIONS: usize = 64;

/// Health transitions per ring a watcher may fall behind by before it
/// loses the oldest.
pub const HEALTH_BACKLOG: usize = 256;

/// One node's health transition, as the health monitor saw it. Not a
/// version: nothing in the ring's record changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HealthChange {
    /// The ring.
    pub ring: RingName,
    /// The node.
    pub node: NodeId,
    /// Its health now; `None` once it has no lease any more (it was
    /// removed from the ring).
    pub health: Option<NodeHealth>,
    /// Its health before; `None` when it had no lease (new in the ring, or
    /// an operator's node that registered itself).
    pub previous: Option<NodeHealth>,
    /// The lease the transition is about: the new one after a new
    /// registration, the last one after a removal.
    pub lease: LeaseId,
    /// That lease's last registration or renewal.
    pub last_heartbeat: OffsetDateTime,
    /// That lease's deadline.
    pub deadline: OffsetDateTime,
}

impl HealthChange {
    /// The metric label of where it went: the health's name, or `removed`.
    pub fn to_label(&self) -> &'static str {
        self.health.map_or("removed", NodeHealth::as_str)
    }
}

/// A health transition as sent to watchers, encoded once for every stream.
#[derive(Debug)]
pub struct PublishedHealth {
    /// The transition.
    pub change: HealthChange,
    frame: OnceLock<Bytes>,
}

impl PublishedHealth {
    /// Its encoding, made by `encode` on first use.
    pub fn frame(&self, encode: impl FnOnce(&HealthChange) -> Bytes) -> Bytes {
        self.frame.get_or_init(|| encode(&self.change)).clone()
    }
}

/// A version as sent to watchers, with its encodings made once and shared
/// by every stream.
#[derive(Debug)]
pub struct Published {
    /// The snapshot.
    pub snapshot: Arc<Snapshot>,
    full: OnceLock<Bytes>,
    light: OnceLock<Bytes>,
}

impl Published {
    /// Wraps a snapshot; its encodings are made on first use.
    pub fn new(snapshot: Arc<Snapshot>) -> Arc<Self> {
        Arc::new(Self {
            snapshot,
            full: OnceLock::new(),
            light: OnceLock::new(),
        })
    }

    /// The version.
    pub fn version(&self) -> u64 {
        self.snapshot.version
    }

    /// The full encoding, made by `encode` on first use.
    pub fn full(&self, encode: impl FnOnce(&Snapshot) -> Bytes) -> Bytes {
        self.full.get_or_init(|| encode(&self.snapshot)).clone()
    }

    /// The light encoding, made by `encode` on first use.
    pub fn light(&self, encode: impl FnOnce(&Snapshot) -> Bytes) -> Bytes {
        self.light.get_or_init(|| encode(&self.snapshot)).clone()
    }
}

/// What a ring's channel says now.
#[derive(Debug, Clone)]
pub enum Head {
    /// Nothing published yet in this instance.
    Unknown,
    /// The newest version.
    At(Arc<Published>),
    /// The ring was deleted.
    Deleted,
    /// The server is shutting down: streams end so that graceful shutdown
    /// does not wait on them forever, and clients reconnect elsewhere.
    Closing,
}

impl Head {
    /// The newest version's number, if any.
    pub fn version(&self) -> Option<u64> {
        match self {
            Head::At(p) => Some(p.version()),
            _ => None,
        }
    }
}

struct Channel {
    head: watch::Sender<Head>,
    recent: Mutex<VecDeque<Arc<Published>>>,
    /// Made by the first health subscriber; until then transitions are
    /// counted and dropped.
    health: OnceLock<broadcast::Sender<Arc<PublishedHealth>>>,
    /// Made by the first rollout subscriber, like `health`.
    rollouts: OnceLock<broadcast::Sender<Arc<PublishedRollout>>>,
    /// The last rollout event announced, so a repeat is not announced.
    rollout_mark: Mutex<Option<RolloutMark>>,
}

/// Counters shown on `/metrics`.
#[derive(Debug, Default)]
pub struct HubStats {
    /// Watch streams open now.
    pub open_streams: AtomicU64,
    /// Events written to watch streams (keep-alives included).
    pub events_sent: AtomicU64,
    /// Resets sent to watch streams.
    pub resets: AtomicU64,
    /// Long-polls waiting now.
    pub long_polls_waiting: AtomicU64,
    /// Health transitions published, by ring and by where they went
    /// ([`HealthChange::to_label`]).
    pub health_transitions: Mutex<BTreeMap<(RingName, &'static str), u64>>,
}

/// Counts one in on a gauge of the hub's [`HubStats`] and out again when
/// dropped, so a closed stream or an abandoned long-poll is always counted
/// out.
pub struct GaugeGuard {
    hub: Arc<Hub>,
    gauge: fn(&HubStats) -> &AtomicU64,
}

impl GaugeGuard {
    /// Counts one in on `gauge` of `hub`'s stats.
    pub fn enter(hub: Arc<Hub>, gauge: fn(&HubStats) -> &AtomicU64) -> Self {
        gauge(&hub.stats).fetch_add(1, Ordering::Relaxed);
        Self { hub, gauge }
    }
}

impl Drop for GaugeGuard {
    fn drop(&mut self) {
        (self.gauge)(&self.hub.stats).fetch_sub(1, Ordering::Relaxed);
    }
}

/// The hub.
#[derive(Default)]
pub struct Hub {
    rings: Mutex<HashMap<RingName, Arc<Channel>>>,
    /// Every ring's changes, for `GET /v1/watch`; made by the first reader.
    all_rings: OnceLock<broadcast::Sender<RingsChange>>,
    closing: std::sync::atomic::AtomicBool,
    /// Counters.
    pub stats: HubStats,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub").field("stats", &self.stats).finish()
    }
}

impl Hub {
    /// An empty hub.
    pub fn new() -> Self {
        Self::default()
    }

    fn channel(&self, ring: &RingName) -> Arc<Channel> {
        let mut rings = self.rings.lock().expect("hub lock");
        // Looked up first so the hot path (every event of every watcher)
        // copies no ring name.
        if let Some(channel) = rings.get(ring) {
            return channel.clone();
        }
        rings
            .entry(ring.clone())
            .or_insert_with(|| {
                let head = if self.closing.load(Ordering::Relaxed) {
                    Head::Closing
                } else {
                    Head::Unknown
                };
                Arc::new(Channel {
                    head: watch::channel(head).0,
                    recent: Mutex::new(VecDeque::new()),
                    health: OnceLock::new(),
                    rollouts: OnceLock::new(),
                    rollout_mark: Mutex::new(None),
                })
            })
            .clone()
    }

    /// Announces `snapshot` if it is newer than what the ring's channel
    /// holds. Callers publish in increasing order per ring; an older or
    /// equal version is ignored, so publishing twice is harmless.
    pub fn publish(&self, snapshot: &Arc<Snapshot>) {
        let channel = self.channel(&snapshot.ring);
        let version = snapshot.version;
        let mut recent = channel.recent.lock().expect("hub lock");
        let last = recent.back().map(|p| p.version());
        if last.is_some_and(|l| l >= version)
            && channel
                .head
                .borrow()
                .version()
                .is_some_and(|h| h >= version)
        {
            return;
        }
        let published = Published::new(snapshot.clone());
        // Only consecutive versions go in the list, so a watcher can trust
        // that it holds every version from its front to its back.
        if last.is_some_and(|l| l + 1 != version) {
            recent.clear();
        }
        recent.push_back(published.clone());
        while recent.len() > RECENT_VERSIONS {
            recent.pop_front();
        }
        // Sent while holding `recent`, so the list and the head never
        // disagree for a reader that takes the same lock.
        let sent = channel.head.send_if_modified(|head| {
            if matches!(head, Head::Closing) {
                return false;
            }
            *head = Head::At(published);
            true
        });
        if sent {
            self.tell_rings(RingsChange::Version(snapshot.clone()));
        }
    }

    /// Announces a health transition to the ring's health subscribers and
    /// counts it. Never blocks: a subscriber that fell
    /// [`HEALTH_BACKLOG`] behind loses the oldest transitions.
    pub fn publish_health(&self, change: HealthChange) {
        *self
            .stats
            .health_transitions
            .lock()
            .expect("hub lock")
            .entry((change.ring.clone(), change.to_label()))
            .or_default() += 1;
        let channel = self.channel(&change.ring);
        if let Some(sender) = channel.health.get() {
            // An error only says nobody listens now.
            let _ = sender.send(Arc::new(PublishedHealth {
                change,
                frame: OnceLock::new(),
            }));
        }
    }

    /// A receiver of `ring`'s health transitions from now on.
    pub fn subscribe_health(&self, ring: &RingName) -> broadcast::Receiver<Arc<PublishedHealth>> {
        self.channel(ring)
            .health
            .get_or_init(|| broadcast::channel(HEALTH_BACKLOG).0)
            .subscribe()
    }

    /// Announces that `ring` was deleted.
    pub fn deleted(&self, ring: &RingName) {
        self.stats
            .health_transitions
            .lock()
            .expect("hub lock")
            .retain(|(r, _), _| r != ring);
        let channel = self.channel(ring);
        // A ring created again under the name numbers its rollouts from 1.
        *channel.rollout_mark.lock().expect("hub lock") = None;
        let mut recent = channel.recent.lock().expect("hub lock");
        recent.clear();
        let told = channel.head.send_if_modified(|head| {
            if matches!(head, Head::Closing | Head::Deleted) {
                return false;
            }
            *head = Head::Deleted;
            true
        });
        if told {
            self.tell_rings(RingsChange::Deleted(ring.clone()));
        }
    }

    /// Ends every watch stream and long-poll, now and from now on.
    pub fn close(&self) {
        self.closing.store(true, Ordering::Relaxed);
        for channel in self.rings.lock().expect("hub lock").values() {
            channel.head.send_replace(Head::Closing);
        }
        self.tell_rings(RingsChange::Closing);
    }

    /// Whether [`Hub::close`] was called.
    pub fn is_closing(&self) -> bool {
        self.closing.load(Ordering::Relaxed)
    }

    /// A receiver of `ring`'s head.
    pub fn subscribe(&self, ring: &RingName) -> watch::Receiver<Head> {
        self.channel(ring).head.subscribe()
    }

    /// Version `version` of `ring`, if it is among the recent ones.
    pub fn recent(&self, ring: &RingName, version: u64) -> Option<Arc<Published>> {
        let channel = self.channel(ring);
        let recent = channel.recent.lock().expect("hub lock");
        let front = recent.front()?.version();
        let index = usize::try_from(version.checked_sub(front)?).ok()?;
        recent.get(index).cloned()
    }
}

#[cfg(test)]
mod tests;
