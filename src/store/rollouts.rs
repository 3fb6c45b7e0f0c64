//! Rollout records: the part of the store that keeps each ring's
//! rollouts, so that a restart or another instance resumes them.
//!
//! A record is written whole. Each write names the revision it read and
//! fails with [`StoreError::RolloutConflict`] if another write came
//! between (the driver's progress and an operator's `pause` may race);
//! the loser reads again. A ring holds at most one active rollout, which
//! the store enforces when a rollout is created.

use async_trait::async_trait;

use super::StoreError;
use crate::ring::rollout::{RolloutId, RolloutRecord};
use crate::ring::RingName;

/// Finished rollouts a ring keeps; older ones are pruned.
pub const ROLLOUT_RETENTION: usize = 100;

/// The rollouts of every ring.
#[async_trait]
pub trait RolloutStore: Send + Sync {
    /// Stores `record` as the ring's next rollout: its id becomes one past
    /// the ring's last and its revision 1, and it is returned so. Refused
    /// with `RolloutActive` while the ring has an active rollout, and with
    /// `RingNotFound` for a ring that does not exist.
    async fn create_rollout(&self, record: RolloutRecord) -> Result<RolloutRecord, StoreError>;

    /// Replaces the rollout with `record`, whose `revision` must be one
    /// past the stored one (`RolloutConflict` otherwise). A record that is
    /// no longer active releases its ring for the next rollout.
    async fn update_rollout(&self, record: &RolloutRecord) -> Result<(), StoreError>;

    /// One rollout; `RolloutNotFound` if the ring has none of that id.
    async fn rollout(&self, ring: &RingName, id: RolloutId) -> Result<RolloutRecord, StoreError>;

    /// The ring's rollouts, newest first.
    async fn rollouts(&self, ring: &RingName) -> Result<Vec<RolloutRecord>, StoreError>;

    /// The ring's newest rollout, active or finished, if it has any: what
    /// the metrics and the watch's `rollout` events follow. Each backend
    /// reads the one record; this default reads them all.
    async fn latest_rollout(&self, ring: &RingName) -> Result<Option<RolloutRecord>, StoreError> {
        Ok(self.rollouts(ring).await?.into_iter().next())
    }

    /// The ring's active rollout, if it has one.
    async fn active_rollout(&self, ring: &RingName) -> Result<Option<RolloutRecord>, StoreError>;

    /// Every ring's active rollout.
    async fn active_rollouts(&self) -> Result<Vec<RolloutRecord>, StoreError>;
}
