//! Where ring snapshots live: the [`Store`] trait and its backends.
//!
//! A store keeps, per ring, a gapless sequence of immutable snapshots, of
//! which it retains the newest `retention` versions. Every write is a
//! compare-and-swap on the ring's current version, so two writers can never
//! produce two different snapshots with the same number.

pub mod etcd;
pub mod sqlite;

use async_trait::async_trait;
use thiserror::Error;
use tokio::sync::broadcast;

use crate::ring::{ChangeRecord, ClientAck, RingName, Snapshot};

/// Default number of versions kept per ring.
pub const DEFAULT_RETENTION: u64 = 1_000;

/// One version in a ring's history, without its node list.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct HistoryEntry {
    /// The version.
    pub version: u64,
    /// When it was committed.
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: time::OffsetDateTime,
    /// Its fingerprint.
    pub fingerprint: crate::placement::Fingerprint,
    /// What produced it.
    pub change: ChangeRecord,
}

impl From<&Snapshot> for HistoryEntry {
    fn from(s: &Snapshot) -> Self {
        Self {
            version: s.version,
            created_at: s.created_at,
            fingerprint: s.fingerprint,
            change: s.change.clone(),
        }
    }
}

/// What a store reports to subscribers.
#[derive(Debug, Clone)]
pub enum StoreEvent {
    /// A new version was committed (including version 1 of a new ring).
    Committed(std::sync::Arc<Snapshot>),
    /// A ring was deleted.
    Deleted(RingName),
}

/// Why a store operation failed.
#[derive(Debug, Error)]
pub enum StoreError {
    /// No ring of that name.
    #[error("ring `{0}` does not exist")]
    RingNotFound(RingName),
    /// `create_ring` on a name that is taken; carries the ring's latest snapshot.
    #[error("ring `{}` already exists", .0.ring)]
    RingExists(Box<Snapshot>),
    /// The ring is not at the version the write expected.
    #[error("ring is at version {current}, not {expected}")]
    VersionConflict {
        /// The version the write was based on.
        expected: u64,
        /// The ring's actual version.
        current: u64,
    },
    /// The ring never had that version.
    #[error("version {version} does not exist; the latest is {latest}")]
    VersionNotFound {
        /// The requested version.
        version: u64,
        /// The ring's latest version.
        latest: u64,
    },
    /// The version existed but has been pruned.
    #[error("version {version} has been pruned; the oldest retained is {oldest}")]
    VersionPruned {
        /// The requested version.
        version: u64,
        /// The oldest retained version.
        oldest: u64,
    },
    /// The stored data is newer than this binary understands.
    #[error("the store's schema version {found} is newer than this binary supports ({supported}); upgrade ringd")]
    SchemaTooNew {
        /// Schema version found in the store.
        found: u64,
        /// Newest schema this binary knows.
        supported: u64,
    },
    /// The backend cannot be reached or failed.
    #[error("store unavailable: {0}")]
    Unavailable(String),
    /// Stored data could not be decoded.
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
}

/// The seam between the service and its storage.
#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// Stores version 1 of a new ring; `RingExists` if the name is taken.
    async fn create_ring(&self, first: &Snapshot) -> Result<(), StoreError>;

    /// Deletes a ring and all its versions; with `expected_version`, only
    /// if the ring is still at that version (`VersionConflict` otherwise),
    /// checked in the same atomic step as the deletion.
    async fn delete_ring(
        &self,
        ring: &RingName,
        expected_version: Option<u64>,
    ) -> Result<(), StoreError>;

    /// The latest snapshot of every ring, by name.
    async fn list_rings(&self) -> Result<Vec<Snapshot>, StoreError>;

    /// The latest snapshot of a ring.
    async fn latest(&self, ring: &RingName) -> Result<Snapshot, StoreError>;

    /// A retained version of a ring.
    async fn snapshot(&self, ring: &RingName, version: u64) -> Result<Snapshot, StoreError>;

    /// The retained history of a ring, oldest first.
    async fn history(&self, ring: &RingName) -> Result<Vec<HistoryEntry>, StoreError> {
        self.history_after(ring, 0).await
    }

    /// The retained versions newer than `after`, oldest first.
    async fn history_after(
        &self,
        ring: &RingName,
        after: u64,
    ) -> Result<Vec<HistoryEntry>, StoreError>;

    /// Commits `next` only if the ring is still at `next.version - 1`
    /// (compare-and-swap), then prunes versions beyond the retention limit.
    async fn commit(&self, next: &Snapshot) -> Result<(), StoreError>;

    /// Events for every commit and deletion from now on.
    fn subscribe(&self) -> broadcast::Receiver<StoreEvent>;

    /// Whether the events from [`Store::subscribe`] are known to be
    /// current: false while the backend cannot be reached, when what a
    /// reader holds in memory may be stale. Never waits on the backend.
    /// An embedded store is always current.
    fn is_current(&self) -> bool {
        true
    }

    /// Records `ack` as the client's latest report for `ring`, replacing
    /// its previous one; `RingNotFound` if the ring does not exist (checked
    /// in the same atomic step, so a deleted ring never keeps acks). The
    /// ack stops being listed at `ack.expires_at`; the backend may keep
    /// the expired record a little longer before purging it.
    async fn put_ack(&self, ring: &RingName, ack: &ClientAck) -> Result<(), StoreError>;

    /// The acks of `ring` still live at `now`, sorted by client id; empty
    /// for a ring that does not exist. Deleting a ring deletes its acks.
    async fn list_acks(
        &self,
        ring: &RingName,
        now: time::OffsetDateTime,
    ) -> Result<Vec<ClientAck>, StoreError>;
}
