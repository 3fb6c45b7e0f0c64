//! What the outside sees of rollouts: the watch's `rollout` events and
//! the records the metrics read.
//!
//! The events come from two places, because only the decision-maker
//! drives rollouts and any instance may hold the watchers:
//!
//! - Every write this instance makes to a record (a start, an operator's
//!   control, the driver's progress) is announced right after it, under
//!   one lock with the write, so this instance's watchers hear each
//!   revision it writes, in order, none skipped (on SQLite, every write).
//! - Every instance looks at the newest record of each ring someone
//!   watches rollouts on every [`TICK`], and announces it when its
//!   revision or its pending gate's reading changed. That is how a
//!   watcher on an instance that does not drive hears of the driver's
//!   steps (with etcd, from another instance), and how everybody hears a
//!   gate move as clients ack, which writes no record. Writes that land
//!   between two looks reach such a watcher as one event, the newer.
//!
//! Polling rather than a store watch keeps the stores as they are, and
//! costs only rings that have a rollout watcher: one read of the newest
//! record (and while a step waits, of the ring's acks) per ring and look.
//! Nobody watching rollouts costs nothing beyond the hub's list of rings.
//! The hub drops whatever is no news, so the two sources never repeat an
//! event.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{Rollouts, TICK};
use crate::hub::PublishedRollout;
use crate::ring::rollout::RolloutRecord;
use crate::ring::{RingName, Snapshot};
use crate::service::background::{Stop, Ticks};
use crate::service::ServiceError;
use crate::store::StoreError;

impl Rollouts {
    /// The newest rollout of `ring` as a watcher is told of it, its
    /// pending gate read now; `None` if the ring has had none.
    pub async fn event(
        &self,
        ring: &RingName,
    ) -> Result<Option<Arc<PublishedRollout>>, ServiceError> {
        match self.store.latest_rollout(ring).await? {
            Some(r) => Ok(Some(self.published(r).await?)),
            None => Ok(None),
        }
    }

    /// `r` as an event: its gate read now, while a step waits for one.
    async fn published(&self, r: RolloutRecord) -> Result<Arc<PublishedRollout>, ServiceError> {
        if let Some(a) = r.last_applied() {
            // The version the record names reaches the hub first, so a
            // watcher hears of a step after the step's version, never
            // before, even where the version arrives through the store.
            self.rings
                .current_at_least(&r.ring, Some(a.version))
                .await?;
        }
        let gate = if r.state.is_active() && r.gate_pending {
            Some(self.gate_reading(&r).await?)
        } else {
            None
        };
        Ok(PublishedRollout::new(r, gate, self.clock.now()))
    }

    /// Stores a new rollout and announces it; see the module's comment.
    pub(super) async fn create_rollout_announced(
        &self,
        record: RolloutRecord,
    ) -> Result<RolloutRecord, StoreError> {
        let _turn = self.writes.lock().await;
        let record = self.store.create_rollout(record).await?;
        self.announce(&record).await;
        Ok(record)
    }

    /// Writes `r` (its revision one past the stored one) and announces it.
    pub(super) async fn write_rollout(&self, r: &RolloutRecord) -> Result<(), StoreError> {
        let _turn = self.writes.lock().await;
        self.store.update_rollout(r).await?;
        self.announce(r).await;
        Ok(())
    }

    /// Announces a record this instance just wrote, if anyone listens. A
    /// failed read of its gate leaves it to the next look.
    async fn announce(&self, r: &RolloutRecord) {
        if !self.hub.rollouts_watched(&r.ring) {
            return;
        }
        match self.published(r.clone()).await {
            Ok(p) => {
                self.hub.publish_rollout(p);
            }
            Err(e) => {
                tracing::debug!(ring = %r.ring, rollout = %r.id, error = %e, "rollout not announced; the next look does");
            }
        }
    }

    /// Looks at the rollouts of every ring someone watches them on, every
    /// [`TICK`], until `stop`; one loop per service (see
    /// `service/background.rs`).
    pub(crate) async fn observe(self: Arc<Self>, stop: Stop) {
        let mut ticks = Ticks::every(TICK, stop);
        while ticks.next().await {
            for ring in self.hub.watched_rollout_rings() {
                // Under the writes' lock: a reading taken before a write
                // is never announced after it.
                let _turn = self.writes.lock().await;
                match self.event(&ring).await {
                    Ok(Some(p)) => {
                        self.hub.publish_rollout(p);
                    }
                    Ok(None) => {}
                    Err(e) => {
                        tracing::debug!(ring = %ring, error = %e, "rollouts not read; the next look retries");
                    }
                }
            }
        }
    }

    /// The newest rollout of each of `rings` that has had one, for the
    /// metrics; a ring whose rollouts cannot be read is left out (and
    /// logged).
    pub async fn latest(&self, rings: &[Snapshot]) -> Vec<RolloutRecord> {
        let mut out = Vec::new();
        for s in rings {
            match self.store.latest_rollout(&s.ring).await {
                Ok(Some(r)) => out.push(r),
                Ok(None) => {}
                Err(e) => tracing::warn!(ring = %s.ring, error = %e, "cannot read rollouts"),
            }
        }
        out
    }

    /// Rollout versions this instance committed, per ring.
    pub fn commits(&self) -> BTreeMap<RingName, u64> {
        self.commits.lock().expect("commits lock").clone()
    }

    /// Counts one version this instance committed for a rollout of `ring`.
    pub(super) fn count_commit(&self, ring: &RingName) {
        *self
            .commits
            .lock()
            .expect("commits lock")
            .entry(ring.clone())
            .or_default() += 1;
    }
}
