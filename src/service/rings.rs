//! Ring lifecycle and reads: create, delete, list, and the snapshots,
//! placements and history of a ring.

use std::sync::Arc;

use super::{Created, Current, RingService, ServiceError, VERSION_CACHE};
use crate::placement::{Placement, RingConfig};
use crate::ring::{MembershipPolicy, RingName, Role, Snapshot};
use crate::store::{HistoryEntry, StoreError};

impl RingService {
    /// Creates a ring at version 1 with the default membership policy, or
    /// finds an identical one.
    pub async fn create_ring(
        &self,
        ring: RingName,
        config: RingConfig,
        role: Role,
    ) -> Result<(Created, Arc<Current>), ServiceError> {
        self.create_ring_with(ring, config, MembershipPolicy::default(), role)
            .await
    }

    /// Creates a ring at version 1 with `membership` as its policy, or
    /// finds an identical one (same config and policy).
    pub async fn create_ring_with(
        &self,
        ring: RingName,
        config: RingConfig,
        membership: MembershipPolicy,
        role: Role,
    ) -> Result<(Created, Arc<Current>), ServiceError> {
        let (first, placement) =
            Snapshot::first_with(ring.clone(), config, membership, role, self.now())?;
        match self.store.create_ring(&first).await {
            Ok(()) => {
                let current = Arc::new(Current {
                    snapshot: Arc::new(first),
                    placement: Arc::new(placement),
                });
                self.remember(current.clone());
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

    /// Deletes a ring and its history; with `expected_version`, only if
    /// the ring is still at that version.
    pub async fn delete_ring(
        &self,
        ring: &RingName,
        expected_version: Option<u64>,
    ) -> Result<(), ServiceError> {
        match self.store.delete_ring(ring, expected_version).await {
            Ok(()) => {
                self.forget(ring);
                Ok(())
            }
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
        if let Some(c) = self.cached(ring) {
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
        let hit = self
            .older
            .lock()
            .expect("cache lock")
            .iter()
            .find(|(r, v, _)| r == ring && *v == version)
            .map(|(_, _, p)| p.clone());
        if let Some(p) = hit {
            return Ok((version, p));
        }
        let placement = Arc::new(self.store.snapshot(ring, version).await?.placement()?);
        let mut older = self.older.lock().expect("cache lock");
        if older.len() == VERSION_CACHE {
            older.pop_front();
        }
        older.push_back((ring.clone(), version, placement.clone()));
        Ok((version, placement))
    }

    /// The retained history, oldest first.
    pub async fn history(&self, ring: &RingName) -> Result<Vec<HistoryEntry>, ServiceError> {
        Ok(self.store.history(ring).await?)
    }
}
