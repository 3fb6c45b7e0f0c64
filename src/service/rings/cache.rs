//! The in-memory cache of each ring's latest version, kept in step with
//! the store: what this instance commits, what the store's events report,
//! and what a read finds in the store. Beside it, the placements of a few
//! older versions, built for lookups by version.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

use super::{Current, Rings};
use crate::hub::Hub;
use crate::placement::Placement;
use crate::ring::{RingName, Snapshot};
use crate::service::ServiceError;
use crate::store::StoreError;

/// How many older placements are kept built for lookups by version.
const VERSION_CACHE: usize = 16;

/// The cache. Every version it takes is published to the hub, in the
/// order it takes them, and it only ever moves forward.
#[derive(Debug)]
pub(super) struct Cache {
    hub: Arc<Hub>,
    latest: Mutex<HashMap<RingName, Arc<Current>>>,
    older: Mutex<VecDeque<(RingName, u64, Arc<Placement>)>>,
    /// Touched whenever the cache takes or drops a version, so that
    /// readers waiting for one look again (see `service/freshness.rs`).
    moved: watch::Sender<()>,
}

impl Cache {
    pub(super) fn new(hub: Arc<Hub>) -> Self {
        Self {
            hub,
            latest: Mutex::default(),
            older: Mutex::default(),
            moved: watch::Sender::new(()),
        }
    }

    pub(super) fn get(&self, ring: &RingName) -> Option<Arc<Current>> {
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
            self.moved.send_replace(());
        }
    }

    pub(super) fn forget(&self, ring: &RingName) {
        {
            let mut latest = self.latest.lock().expect("cache lock");
            latest.remove(ring);
            self.hub.deleted(ring);
            self.moved.send_replace(());
        }
        self.older
            .lock()
            .expect("cache lock")
            .retain(|(r, _, _)| r != ring);
    }

    /// The placement of an older `version` of `ring`, if it is kept.
    pub(super) fn older(&self, ring: &RingName, version: u64) -> Option<Arc<Placement>> {
        self.older
            .lock()
            .expect("cache lock")
            .iter()
            .find(|(r, v, _)| r == ring && *v == version)
            .map(|(_, _, p)| p.clone())
    }

    /// Keeps `placement`, of an older `version` of `ring`, dropping the
    /// oldest kept beyond [`VERSION_CACHE`].
    pub(super) fn keep_older(&self, ring: &RingName, version: u64, placement: Arc<Placement>) {
        let mut older = self.older.lock().expect("cache lock");
        if older.len() == VERSION_CACHE {
            older.pop_front();
        }
        older.push_back((ring.clone(), version, placement));
    }

    /// The latest snapshot of every ring in memory, by name.
    pub(super) fn snapshots(&self) -> Vec<Arc<Snapshot>> {
        let mut rings: Vec<Arc<Snapshot>> = self
            .latest
            .lock()
            .expect("cache lock")
            .values()
            .map(|c| c.snapshot.clone())
            .collect();
        rings.sort_by(|a, b| a.ring.cmp(&b.ring));
        rings
    }

    /// Whether every ring in memory (or `ring` alone) is at least at the
    /// version `versions` names for it, and none that `versions` lacks is
    /// still held. A ring not in memory is read from the store when asked
    /// for, so it is current by construction.
    pub(super) fn holds(
        &self,
        versions: &BTreeMap<RingName, u64>,
        ring: Option<&RingName>,
    ) -> bool {
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

    /// Touched whenever the cache takes or drops a version.
    pub(super) fn moves(&self) -> watch::Receiver<()> {
        self.moved.subscribe()
    }
}

impl Rings {
    /// Takes a version the store's events report, unless the cache holds
    /// it or a newer one already.
    pub(crate) fn learn(&self, snapshot: Arc<Snapshot>) {
        let newer = self
            .cache
            .get(&snapshot.ring)
            .is_none_or(|c| c.snapshot.version < snapshot.version);
        if newer {
            if let Ok(p) = snapshot.placement() {
                self.cache.remember(Arc::new(Current {
                    placement: Arc::new(p),
                    snapshot,
                }));
            }
        }
    }

    /// After missed events: reads each cached ring's latest version from
    /// the store, and returns the rings the store no longer has. The cache
    /// only ever moves forward, and a ring the store cannot serve now
    /// keeps its last known version.
    pub(crate) async fn catch_up(&self) -> Vec<RingName> {
        let rings: Vec<RingName> = self
            .cache
            .snapshots()
            .iter()
            .map(|s| s.ring.clone())
            .collect();
        let mut gone = Vec::new();
        for ring in rings {
            match self.store.latest(&ring).await {
                Ok(s) => {
                    let _ = self.load(s);
                }
                Err(StoreError::RingNotFound(_)) => gone.push(ring),
                Err(_) => {}
            }
        }
        gone
    }

    /// Drops a deleted ring: its versions and its idempotency keys.
    pub(crate) fn forget(&self, ring: &RingName) {
        self.cache.forget(ring);
        self.forget_keys(ring);
    }

    /// The latest snapshot of every ring in memory, by name; reads memory
    /// only.
    pub(crate) fn in_memory(&self) -> Vec<Arc<Snapshot>> {
        self.cache.snapshots()
    }

    /// Reads a ring's latest version from the store into the cache and
    /// returns the newest the cache then holds (another task may have put
    /// a newer one there meanwhile).
    pub(crate) async fn refresh(&self, ring: &RingName) -> Result<Arc<Current>, ServiceError> {
        let snapshot = self.store.latest(ring).await?;
        self.load(snapshot)
    }

    /// Builds `snapshot`'s placement and remembers it unless the cache
    /// already holds a newer version; returns what the cache holds.
    fn load(&self, snapshot: Snapshot) -> Result<Arc<Current>, ServiceError> {
        let placement = snapshot.placement()?;
        let current = Arc::new(Current {
            snapshot: Arc::new(snapshot),
            placement: Arc::new(placement),
        });
        self.cache.remember(current.clone());
        Ok(self.cache.get(&current.snapshot.ring).unwrap_or(current))
    }
}
