//! The rings and their changes: the part of the service that owns each
//! ring's latest version in memory (`cache.rs`), applies changes to it
//! (`apply.rs`, with each instance's writers queued per ring), recognises
//! a retried change by its idempotency key (`idempotency.rs`), and serves
//! the lifecycle and the reads: create, delete, list, and a ring's
//! snapshots, placements and history.

mod apply;
mod cache;
mod change;
mod current;
mod idempotency;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub use change::{ChangeOutcome, ChangeRequest, Effect};
pub use current::{BaseConfig, Current};

use crate::hub::Hub;
use crate::placement::{Placement, RingConfig};
use crate::ring::{Clock, MembershipPolicy, RingName, Role, Snapshot};
use crate::service::ServiceError;
use crate::store::leadership::Leadership;
use crate::store::{HistoryEntry, Store, StoreError};
use cache::Cache;

/// Whether [`Rings::create`] made a ring or found an identical one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Created {
    /// A new ring.
    New,
    /// The ring already existed with the same config.
    Existing,
}

/// The rings part of the service.
pub struct Rings {
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    /// Fences the decision-maker's commits (see `service/leadership.rs`).
    leadership: Arc<dyn Leadership>,
    cache: Cache,
    /// The idempotency keys found in each ring's history so far.
    keys: Mutex<HashMap<RingName, idempotency::KeyIndex>>,
    /// One change per ring at a time in this instance, first come first
    /// served: concurrent writers would all read, propose and send a
    /// compare-and-swap of which only one can win, and on a small machine
    /// the losers' retries starve the winner. What the queue holds is how
    /// this instance's writers have lately fared against other instances'.
    writers: Mutex<HashMap<RingName, Arc<tokio::sync::Mutex<apply::Contention>>>>,
}

impl Rings {
    /// The rings of `store`, published to `hub` as the cache takes them.
    pub(crate) fn new(
        store: Arc<dyn Store>,
        hub: Arc<Hub>,
        clock: Arc<dyn Clock>,
        leadership: Arc<dyn Leadership>,
    ) -> Self {
        Self {
            store,
            clock,
            leadership,
            cache: Cache::new(hub),
            keys: Mutex::default(),
            writers: Mutex::default(),
        }
    }

    /// Creates a ring at version 1 with the default membership policy, or
    /// finds an identical one.
    pub async fn create(
        &self,
        ring: RingName,
        config: RingConfig,
        role: Role,
    ) -> Result<(Created, Arc<Current>), ServiceError> {
        self.create_with(ring, config, MembershipPolicy::default(), role)
            .await
    }

    /// Creates a ring at version 1 with `membership` as its policy, or
    /// finds an identical one (same config and policy).
    pub async fn create_with(
        &self,
        ring: RingName,
        config: RingConfig,
        membership: MembershipPolicy,
        role: Role,
    ) -> Result<(Created, Arc<Current>), ServiceError> {
        let (first, placement) =
            Snapshot::first_with(ring.clone(), config, membership, role, self.clock.now())?;
        match self.store.create_ring(&first).await {
            Ok(()) => {
                let current = Arc::new(Current {
                    snapshot: Arc::new(first),
                    placement: Arc::new(placement),
                });
                self.cache.remember(current.clone());
                Ok((Created::New, current))
            }
            Err(StoreError::RingExists(existing)) => {
                if existing.config == first.config && existing.membership == first.membership {
                    Ok((Created::Existing, self.current(&ring).await?))
                } else {
                    Err(ServiceError::ConfigConflict { ring, existing })
                }
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Deletes a ring and its history from the store; with
    /// `expected_version`, only if the ring is still at that version. The
    /// caller, `RingService::delete_ring`, then has every part forget it.
    pub(crate) async fn delete(
        &self,
        ring: &RingName,
        expected_version: Option<u64>,
    ) -> Result<(), ServiceError> {
        match self.store.delete_ring(ring, expected_version).await {
            Ok(()) => Ok(()),
            Err(StoreError::VersionConflict { expected, current }) => {
                Err(ServiceError::PreconditionFailed { expected, current })
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The latest snapshot of every ring.
    pub async fn list(&self) -> Result<Vec<Snapshot>, ServiceError> {
        Ok(self.store.list_rings().await?)
    }

    /// A ring's latest version and placement, from memory when possible.
    pub async fn current(&self, ring: &RingName) -> Result<Arc<Current>, ServiceError> {
        if let Some(c) = self.cache.get(ring) {
            return Ok(c);
        }
        self.refresh(ring).await
    }

    /// The ring's latest version, read from the store when the cache holds
    /// one older than `seen`: a client may have seen `seen` on another
    /// instance before this one heard of it through the store's events.
    pub async fn current_at_least(
        &self,
        ring: &RingName,
        seen: Option<u64>,
    ) -> Result<Arc<Current>, ServiceError> {
        let current = self.current(ring).await?;
        if seen.is_some_and(|s| s > current.snapshot.version) {
            return self.refresh(ring).await;
        }
        Ok(current)
    }

    /// A retained snapshot.
    pub async fn snapshot(
        &self,
        ring: &RingName,
        version: u64,
    ) -> Result<Arc<Snapshot>, ServiceError> {
        let current = self.current(ring).await?;
        if current.snapshot.version == version {
            return Ok(current.snapshot.clone());
        }
        Ok(Arc::new(self.store.snapshot(ring, version).await?))
    }

    /// The placement of a version (the latest when `None`).
    pub async fn placement(
        &self,
        ring: &RingName,
        version: Option<u64>,
    ) -> Result<(u64, Arc<Placement>), ServiceError> {
        let current = self.current(ring).await?;
        let version = match version {
            None => return Ok((current.snapshot.version, current.placement.clone())),
            Some(v) if v == current.snapshot.version => return Ok((v, current.placement.clone())),
            Some(v) => v,
        };
        if let Some(p) = self.cache.older(ring, version) {
            return Ok((version, p));
        }
        let placement = Arc::new(self.store.snapshot(ring, version).await?.placement()?);
        self.cache.keep_older(ring, version, placement.clone());
        Ok((version, placement))
    }

    /// The retained history, oldest first.
    pub async fn history(&self, ring: &RingName) -> Result<Vec<HistoryEntry>, ServiceError> {
        Ok(self.store.history(ring).await?)
    }

    /// Whether every ring in memory (or `ring` alone) is at least at the
    /// version `versions` names for it: see `service/freshness.rs`.
    pub(crate) fn holds(
        &self,
        versions: &std::collections::BTreeMap<RingName, u64>,
        ring: Option<&RingName>,
    ) -> bool {
        self.cache.holds(versions, ring)
    }

    /// Touched whenever the cache takes or drops a version.
    pub(crate) fn moves(&self) -> tokio::sync::watch::Receiver<()> {
        self.cache.moves()
    }
}
