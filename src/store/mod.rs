//! Where ring snapshots live: the [`Store`] trait and its backends.
//!
//! A store keeps, per ring, a gapless sequence of immutable snapshots, of
//! which it retains the newest `retention` versions. Every write is a
//! compare-and-swap on the ring's current version, so two writers can never
//! produce two different snapshots with the same number.

pub mod etcd;
#[cfg(test)]
mod golden;
pub mod leadership;
mod leases;
mod rollouts;
pub mod sqlite;

use std::borrow::Cow;

use async_trait::async_trait;
use thiserror::Error;
use tokio::sync::broadcast;

use self::leadership::{Fence, Instance, Leadership, SoleLeader, Term};
use crate::ring::{ChangeRecord, ClientAck, RingName, Snapshot};

pub use leases::{live, new_lease_id, span, Lease, LeaseError, LeaseMap, LeaseStore, LeaseTable};
pub use rollouts::{RolloutStore, ROLLOUT_RETENTION};

/// Default number of versions kept per ring.
pub const DEFAULT_RETENTION: u64 = 1_000;

/// One version in a ring's history, without its node list.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryEntry {
    /// The version.
    pub version: u64,
    /// When it was committed.
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
    #[error("store unavailable: {}", with_cause(.context, .source.as_deref()))]
    Unavailable {
        /// What failed, in words an operator can act on (may be empty when
        /// the cause says it all).
        context: Cow<'static, str>,
        /// The underlying error, when there is one.
        #[source]
        source: Option<Cause>,
    },
    /// A decision-maker's write was refused because its term is over:
    /// another instance took office (or this one lost it), so the
    /// automatic change it computed must not land. Nothing was written.
    #[error("term {0} of this instance as the decision-maker is over; its change was not written")]
    Deposed(Term),
    /// The ring has an active rollout already.
    #[error("ring `{ring}` is in rollout {id}; wait for it to finish, or abort it (POST /v1/rings/{ring}/rollouts/{id}/abort)")]
    RolloutActive {
        /// The ring.
        ring: RingName,
        /// The active rollout.
        id: crate::ring::rollout::RolloutId,
    },
    /// No rollout of that id in that ring.
    #[error("ring `{ring}` has no rollout {id}; GET /v1/rings/{ring}/rollouts lists them")]
    RolloutNotFound {
        /// The ring.
        ring: RingName,
        /// The id asked for.
        id: crate::ring::rollout::RolloutId,
    },
    /// Another write to the rollout came first.
    #[error("rollout {id} of ring `{ring}` changed meanwhile; read it again")]
    RolloutConflict {
        /// The ring.
        ring: RingName,
        /// The rollout.
        id: crate::ring::rollout::RolloutId,
    },
    /// Stored data could not be decoded.
    #[error("stored data is corrupt: {}", with_cause(.what, .source.as_deref()))]
    Corrupt {
        /// What is wrong, naming the ring, version or key.
        what: Cow<'static, str>,
        /// The decoding error, when there is one.
        #[source]
        source: Option<Cause>,
    },
}

/// The error underneath a [`StoreError`]: the backend's own, kept whole so
/// code can inspect it (`downcast_ref`) and logs can show the chain.
pub type Cause = Box<dyn std::error::Error + Send + Sync + 'static>;

/// `context: cause`, or whichever of them there is. The cause's text is
/// part of the message (and not only reachable through `source()`)
/// because every place an operator reads a store error (a problem
/// detail, `ringd serve`'s stderr, a log line) shows its `Display`.
fn with_cause(context: &str, cause: Option<&(dyn std::error::Error + Send + Sync)>) -> String {
    match cause {
        None => context.to_owned(),
        Some(c) if context.is_empty() => c.to_string(),
        Some(c) => format!("{context}: {c}"),
    }
}

impl StoreError {
    /// The backend is unavailable, for the reason `context` gives.
    pub fn unavailable(context: impl Into<Cow<'static, str>>) -> Self {
        Self::Unavailable {
            context: context.into(),
            source: None,
        }
    }

    /// The backend is unavailable: `source` failed while doing `context`.
    pub fn unavailable_from(
        context: impl Into<Cow<'static, str>>,
        source: impl Into<Cause>,
    ) -> Self {
        Self::Unavailable {
            context: context.into(),
            source: Some(source.into()),
        }
    }

    /// Stored data is corrupt, as `what` describes.
    pub fn corrupt(what: impl Into<Cow<'static, str>>) -> Self {
        Self::Corrupt {
            what: what.into(),
            source: None,
        }
    }

    /// Stored data is corrupt: decoding `what` failed with `source`.
    pub fn corrupt_from(what: impl Into<Cow<'static, str>>, source: impl Into<Cause>) -> Self {
        Self::Corrupt {
            what: what.into(),
            source: Some(source.into()),
        }
    }
}

/// A ring's turn among the writers of every instance (see
/// [`Store::queue`]); dropping it hands the turn to the next writer.
pub struct WriteTurn {
    _release: Box<dyn Send + Sync>,
}

impl WriteTurn {
    /// A turn that ends when `release` is dropped.
    pub fn new(release: impl Send + Sync + 'static) -> Self {
        Self {
            _release: Box::new(release),
        }
    }
}

impl std::fmt::Debug for WriteTurn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteTurn").finish_non_exhaustive()
    }
}

/// The seam between the service and its storage. Leases are its
/// [`LeaseStore`] part.
#[async_trait]
pub trait Store: LeaseStore + RolloutStore + Send + Sync + 'static {
    /// Stores version 1 of a new ring; `RingExists` if the name is taken.
    async fn create_ring(&self, first: &Snapshot) -> Result<(), StoreError>;

    /// Deletes a ring and all its versions (and its acks and leases); with `expected_version`, only
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
    /// A `VersionConflict` whose `current` is the expected version means
    /// the ring did not move but writers queued for its turn (see
    /// [`Store::queue`]) go first.
    async fn commit(&self, next: &Snapshot) -> Result<(), StoreError>;

    /// [`Store::commit`] for a decision-maker: also refused, with
    /// `Deposed`, unless `fence`'s term is still the current one, checked in
    /// the same atomic step as the compare-and-swap. An embedded store has
    /// one instance, whose term never ends, so it only commits.
    async fn commit_fenced(&self, next: &Snapshot, fence: &Fence) -> Result<(), StoreError> {
        let _ = fence;
        self.commit(next).await
    }

    /// Starts `me`'s part in electing the decision-maker among the
    /// instances sharing this store, with a session of `ttl` where the
    /// backend has sessions. An embedded store has one instance, which
    /// always decides.
    fn elect(&self, me: Instance, ttl: std::time::Duration) -> std::sync::Arc<dyn Leadership> {
        let _ = ttl;
        SoleLeader::new(me)
    }

    /// Events for every commit and deletion from now on.
    fn subscribe(&self) -> broadcast::Receiver<StoreEvent>;

    /// Whether the events from [`Store::subscribe`] are known to be
    /// current: false while the backend cannot be reached, or while its
    /// events are known to lag more than a moment behind it, when what a
    /// reader holds in memory may be stale. Never waits on the backend.
    /// An embedded store is always current.
    fn is_current(&self) -> bool {
        true
    }

    /// Whether other ringd processes write through the same backend: then
    /// a reader must confirm that it heard of their commits
    /// ([`Store::confirmed_versions`]), and a writer may be cut off from
    /// the backend by a network partition. An embedded store has one
    /// instance, whose readers hear of each commit before it is
    /// acknowledged, on a local disk.
    fn shared(&self) -> bool {
        false
    }

    /// Every ring's latest version, read so that it includes every write
    /// acknowledged, by any instance, before the call: what a reader must
    /// hold to answer as current (the read barrier of
    /// `service/freshness.rs`). Asked of a [`Store::shared`] store only.
    /// One short attempt: a reader that cannot confirm answers marked
    /// stale rather than wait.
    async fn confirmed_versions(
        &self,
    ) -> Result<std::collections::BTreeMap<RingName, u64>, StoreError> {
        Err(StoreError::unavailable(
            "this store has one instance and confirms nothing",
        ))
    }

    /// Waits for `ring`'s turn among the writers of every instance sharing
    /// this store, for a writer that just lost a compare-and-swap: holding
    /// the turn, it is not raced by writers queued behind it. `None` when
    /// the store needs no turns (an embedded store has one instance, whose
    /// in-process queue already orders its writers) or could not give one
    /// in time; the compare-and-swap keeps writes correct either way.
    async fn queue(&self, ring: &RingName) -> Option<WriteTurn> {
        let _ = ring;
        None
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

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    #[test]
    fn the_message_carries_the_cause_and_source_keeps_it_whole() {
        let io = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "permission denied");
        let e = StoreError::unavailable_from("cannot open database /x/ringd.db", io);
        assert_eq!(
            e.to_string(),
            "store unavailable: cannot open database /x/ringd.db: permission denied"
        );
        let cause = e.source().and_then(|s| s.downcast_ref::<std::io::Error>());
        assert_eq!(
            cause.map(std::io::Error::kind),
            Some(std::io::ErrorKind::PermissionDenied)
        );
    }

    #[test]
    fn a_message_without_a_cause_or_without_a_context_reads_whole() {
        let alone = StoreError::corrupt("schema version -1 is invalid");
        assert_eq!(
            alone.to_string(),
            "stored data is corrupt: schema version -1 is invalid"
        );
        assert!(alone.source().is_none());
        let bare = StoreError::unavailable_from("", "database is locked");
        assert_eq!(bare.to_string(), "store unavailable: database is locked");
    }
}
