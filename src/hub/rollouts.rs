//! Rollout events: what watchers that asked for them (`rollouts=true`)
//! hear of a ring's rollouts, beside its versions.
//!
//! Like health transitions they travel on a `broadcast` channel per ring,
//! made for the first subscriber, and are not versions. The hub remembers
//! the newest it sent per ring ([`RolloutMark`]) and drops what is not
//! news, because the same record reaches it twice: from the writes this
//! instance makes and from the service's look at the store, which is how
//! an instance that does not drive rollouts learns of them.

use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use time::OffsetDateTime;
use tokio::sync::broadcast;

use super::Hub;
use crate::ring::rollout::{GateReading, RolloutId, RolloutRecord};
use crate::ring::RingName;

/// Rollout events per ring a watcher may fall behind by before it loses
/// the oldest.
pub const ROLLOUT_BACKLOG: usize = 64;

/// What one rollout event says, enough to tell news from a repeat: the
/// record's revision, bumped by every write, and the pending gate's
/// reading, which moves with the clients' acks between writes.
#[derive(Debug, Clone, PartialEq)]
pub struct RolloutMark {
    /// The rollout.
    pub id: RolloutId,
    /// The record's revision.
    pub revision: u64,
    /// The pending gate as read, if a step waits for one.
    pub gate: Option<GateReading>,
}

impl RolloutMark {
    /// Whether this is news to someone who last heard `seen`: a later
    /// rollout, a later revision, or the same revision with another gate
    /// reading. Never an older one, so nobody hears a rollout go back.
    pub fn is_news_after(&self, seen: Option<&RolloutMark>) -> bool {
        let Some(seen) = seen else {
            return true;
        };
        match (self.id, self.revision).cmp(&(seen.id, seen.revision)) {
            std::cmp::Ordering::Greater => true,
            std::cmp::Ordering::Less => false,
            std::cmp::Ordering::Equal => self.gate != seen.gate,
        }
    }
}

/// A rollout as sent to watchers: the record as stored, its pending
/// gate's reading and when it was read, encoded once for every stream.
#[derive(Debug)]
pub struct PublishedRollout {
    /// The record.
    pub record: RolloutRecord,
    /// The pending gate, read at `at`; `None` unless the rollout is
    /// active and a step waits for its gate.
    pub gate: Option<GateReading>,
    /// When it was read: the times in the event (time in the step, the
    /// estimate) are as of then, the same for every watcher.
    pub at: OffsetDateTime,
    frame: OnceLock<Bytes>,
}

impl PublishedRollout {
    /// Wraps a record and its gate, read at `at`.
    pub fn new(record: RolloutRecord, gate: Option<GateReading>, at: OffsetDateTime) -> Arc<Self> {
        Arc::new(Self {
            record,
            gate,
            at,
            frame: OnceLock::new(),
        })
    }

    /// What it says, to tell news from a repeat.
    pub fn mark(&self) -> RolloutMark {
        RolloutMark {
            id: self.record.id,
            revision: self.record.revision,
            gate: self.gate.clone(),
        }
    }

    /// Its encoding, made by `encode` on first use.
    pub fn frame(&self, encode: impl FnOnce(&Self) -> Bytes) -> Bytes {
        self.frame.get_or_init(|| encode(self)).clone()
    }
}

impl Hub {
    /// Announces a rollout to the ring's rollout subscribers, unless it
    /// is no news after the last one announced (see
    /// [`RolloutMark::is_news_after`]); returns whether it was news. Never
    /// blocks: a subscriber that fell [`ROLLOUT_BACKLOG`] behind loses the
    /// oldest.
    pub fn publish_rollout(&self, rollout: Arc<PublishedRollout>) -> bool {
        let channel = self.channel(&rollout.record.ring);
        let mark = rollout.mark();
        let mut last = channel.rollout_mark.lock().expect("hub lock");
        if !mark.is_news_after(last.as_ref()) {
            return false;
        }
        *last = Some(mark);
        if let Some(sender) = channel.rollouts.get() {
            // An error only says nobody listens now.
            let _ = sender.send(rollout);
        }
        true
    }

    /// A receiver of `ring`'s rollout events from now on.
    pub fn subscribe_rollouts(
        &self,
        ring: &RingName,
    ) -> broadcast::Receiver<Arc<PublishedRollout>> {
        self.channel(ring)
            .rollouts
            .get_or_init(|| broadcast::channel(ROLLOUT_BACKLOG).0)
            .subscribe()
    }

    /// Whether anyone listens to `ring`'s rollout events now: nothing
    /// about its rollouts needs reading otherwise.
    pub fn rollouts_watched(&self, ring: &RingName) -> bool {
        let rings = self.rings.lock().expect("hub lock");
        rings
            .get(ring)
            .and_then(|c| c.rollouts.get())
            .is_some_and(|s| s.receiver_count() > 0)
    }

    /// The rings whose rollout events someone listens to now, by name.
    pub fn watched_rollout_rings(&self) -> Vec<RingName> {
        let rings = self.rings.lock().expect("hub lock");
        let mut watched: Vec<RingName> = rings
            .iter()
            .filter(|(_, c)| c.rollouts.get().is_some_and(|s| s.receiver_count() > 0))
            .map(|(r, _)| r.clone())
            .collect();
        watched.sort();
        watched
    }
}
