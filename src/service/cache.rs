//! The in-memory cache of each ring's latest version, kept in step with
//! the store: what this instance commits, what the store's events report,
//! and what a read finds in the store.

use std::sync::Arc;

use super::{Current, RingService, ServiceError};
use crate::ring::{RingName, Snapshot};
use crate::store::{StoreError, StoreEvent};

impl RingService {
    /// Applies store events to the in-memory cache until the store's event
    /// stream closes; spawn it once per service.
    pub async fn follow(self: Arc<Self>) {
        let mut events = self.store.subscribe();
        loop {
            match events.recv().await {
                Ok(StoreEvent::Committed(s)) => {
                    let newer = self
                        .cached(&s.ring)
                        .is_none_or(|c| c.snapshot.version < s.version);
                    if newer {
                        if let Ok(p) = s.placement() {
                            self.remember(Arc::new(Current {
                                placement: Arc::new(p),
                                snapshot: s,
                            }));
                        }
                    }
                }
                Ok(StoreEvent::Deleted(ring)) => self.forget(&ring),
                // Missed events: what the cache holds may be behind. Read
                // each ring's latest from the store; the cache only ever
                // moves forward, and a ring the store cannot serve now
                // keeps its last known version.
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                    let rings: Vec<RingName> = self
                        .latest
                        .lock()
                        .expect("cache lock")
                        .keys()
                        .cloned()
                        .collect();
                    for ring in rings {
                        match self.store.latest(&ring).await {
                            Ok(s) => {
                                let _ = self.load(s);
                            }
                            Err(StoreError::RingNotFound(_)) => self.forget(&ring),
                            Err(_) => {}
                        }
                    }
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            }
        }
    }

    pub(super) fn cached(&self, ring: &RingName) -> Option<Arc<Current>> {
        self.latest.lock().expect("cache lock").get(ring).cloned()
    }

    pub(super) fn remember(&self, current: Arc<Current>) {
        let mut latest = self.latest.lock().expect("cache lock");
        let ring = current.snapshot.ring.clone();
        // Never replace a newer version with an older one.
        if latest
            .get(&ring)
            .is_none_or(|c| c.snapshot.version <= current.snapshot.version)
        {
            // Under the cache lock, so the hub hears of versions in the
            // order the cache takes them.
            self.hub.publish(&current.snapshot);
            latest.insert(ring, current);
            self.barrier.cache_moved();
        }
    }

    pub(super) fn forget(&self, ring: &RingName) {
        {
            let mut latest = self.latest.lock().expect("cache lock");
            latest.remove(ring);
            self.hub.deleted(ring);
            self.barrier.cache_moved();
        }
        self.older
            .lock()
            .expect("cache lock")
            .retain(|(r, _, _)| r != ring);
        self.forget_keys(ring);
        self.forget_leases(ring);
        self.rollout_commits
            .lock()
            .expect("commits lock")
            .remove(ring);
    }

    /// Reads a ring's latest version from the store into the cache and
    /// returns the newest the cache then holds (another task may have put
    /// a newer one there meanwhile).
    pub(super) async fn refresh(&self, ring: &RingName) -> Result<Arc<Current>, ServiceError> {
        let snapshot = self.store.latest(ring).await?;
        self.load(snapshot)
    }

    /// Builds `snapshot`'s placement and remembers it unless the cache
    /// already holds a newer version; returns what the cache holds.
    pub(super) fn load(&self, snapshot: Snapshot) -> Result<Arc<Current>, ServiceError> {
        let placement = snapshot.placement()?;
        let current = Arc::new(Current {
            snapshot: Arc::new(snapshot),
            placement: Arc::new(placement),
        });
        self.remember(current.clone());
        Ok(self.cached(&current.snapshot.ring).unwrap_or(current))
    }
}
