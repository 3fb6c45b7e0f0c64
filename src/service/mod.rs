//! The ring service: the rules between the HTTP API and the store.
//!
//! It keeps each ring's latest snapshot and placement in memory so reads and
//! lookups never wait on the store, turns change requests into proposals,
//! and commits them with compare-and-swap on the ring's version.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use thiserror::Error;
use time::OffsetDateTime;

use crate::hub::Hub;
use crate::placement::{Placement, PlacementDiff, RingConfig};
use crate::ring::{IdempotencyKey, RequestedOp, RingError, RingName, Role, Snapshot};
use crate::store::{HistoryEntry, Store, StoreError, StoreEvent};

mod apply;
mod idempotency;

use idempotency::KeyIndex;

/// How many older placements are kept built for lookups by version.
const VERSION_CACHE: usize = 16;

/// Attempts at a change whose caller gave no expected version, when other
/// writers keep getting in first.
const MAX_RETRIES: usize = 16;

/// A ring's latest version with its placement, shared by readers.
#[derive(Debug)]
pub struct Current {
    /// The snapshot.
    pub snapshot: Arc<Snapshot>,
    /// Its placement.
    pub placement: Arc<Placement>,
}

/// A request to change a ring.
#[derive(Debug, Clone)]
pub struct ChangeRequest {
    /// Ops applied in order as one new version.
    pub ops: Vec<RequestedOp>,
    /// Commit only if the ring is at this version.
    pub expected_version: Option<u64>,
    /// Free-text reason recorded in the snapshot.
    pub reason: Option<String>,
    /// Compute the result and the movement, commit nothing.
    pub dry_run: bool,
    /// Names this change so a retry of it is answered with the version it
    /// produced instead of being applied again; ignored for dry runs.
    pub idempotency_key: Option<IdempotencyKey>,
}

/// What a change request did.
// A preview carries its snapshot by value: it is built once, returned at
// once and never stored, so boxing it would only add an allocation.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum ChangeOutcome {
    /// A new version was committed.
    Committed {
        /// The new version.
        current: Arc<Current>,
        /// Movement against the previous version.
        diff: PlacementDiff,
        /// The previous version's config.
        base_config: RingConfig,
    },
    /// The change altered nothing; no version was created.
    Unchanged {
        /// The ring as it is.
        current: Arc<Current>,
    },
    /// An earlier request with the same idempotency key committed this
    /// version; nothing new was committed.
    Replayed {
        /// The version the earlier request produced.
        snapshot: Arc<Snapshot>,
        /// Its placement.
        placement: Arc<Placement>,
        /// Movement against the version before it, while that is retained.
        diff: Option<PlacementDiff>,
        /// The config of the version before it, while that is retained.
        base_config: Option<RingConfig>,
    },
    /// Dry run: what would be committed.
    Preview {
        /// The would-be snapshot.
        snapshot: Snapshot,
        /// Movement it would cause.
        diff: PlacementDiff,
        /// The version it was computed against.
        base_version: u64,
        /// That version's config.
        base_config: RingConfig,
    },
}

/// Whether `create_ring` made a ring or found an identical one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Created {
    /// A new ring.
    New,
    /// The ring already existed with the same config.
    Existing,
}

/// Why the service refused a request.
#[derive(Debug, Error)]
pub enum ServiceError {
    /// Invalid change or node data.
    #[error(transparent)]
    Ring(#[from] RingError),
    /// The store refused or failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// `PUT /v1/rings/{ring}` with a config different from the existing one.
    #[error(
        "ring `{ring}` already exists with a different config; change it with an update_config (or set_config) op on POST /v1/rings/{ring}/changes"
    )]
    ConfigConflict {
        /// The ring.
        ring: RingName,
        /// Its current snapshot.
        existing: Box<Snapshot>,
    },
    /// The ring is not at the version the caller expected.
    #[error("ring is at version {current}, not the expected {expected}")]
    PreconditionFailed {
        /// What the caller expected.
        expected: u64,
        /// The actual version.
        current: u64,
    },
    /// Other writers kept winning.
    #[error("the ring changed {0} times while this change was being applied; retry")]
    TooMuchContention(usize),
}

/// The ring service.
pub struct RingService {
    store: Arc<dyn Store>,
    latest: Mutex<HashMap<RingName, Arc<Current>>>,
    older: Mutex<VecDeque<(RingName, u64, Arc<Placement>)>>,
    keys: Mutex<HashMap<RingName, KeyIndex>>,
    /// One change per ring at a time in this instance, first come first
    /// served: concurrent writers would all read, propose and send a
    /// compare-and-swap of which only one can win, and on a small machine
    /// the losers' retries starve the winner.
    writers: Mutex<HashMap<RingName, Arc<tokio::sync::Mutex<()>>>>,
    hub: Arc<Hub>,
}

impl RingService {
    /// A service over `store`. Call [`RingService::follow`] to keep its
    /// cache in step with writes made elsewhere.
    pub fn new(store: Arc<dyn Store>) -> Arc<Self> {
        Arc::new(Self {
            store,
            latest: Mutex::new(HashMap::new()),
            older: Mutex::new(VecDeque::new()),
            keys: Mutex::new(HashMap::new()),
            writers: Mutex::new(HashMap::new()),
            hub: Arc::new(Hub::new()),
        })
    }

    /// Where every version this service learns of is announced.
    pub fn hub(&self) -> &Arc<Hub> {
        &self.hub
    }

    /// The store underneath.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

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

    fn cached(&self, ring: &RingName) -> Option<Arc<Current>> {
        self.latest.lock().expect("cache lock").get(ring).cloned()
    }

    fn remember(&self, current: Arc<Current>) {
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
        }
    }

    fn forget(&self, ring: &RingName) {
        {
            let mut latest = self.latest.lock().expect("cache lock");
            latest.remove(ring);
            self.hub.deleted(ring);
        }
        self.older
            .lock()
            .expect("cache lock")
            .retain(|(r, _, _)| r != ring);
        self.forget_keys(ring);
    }

    /// Creates a ring at version 1, or finds an identical one.
    pub async fn create_ring(
        &self,
        ring: RingName,
        config: RingConfig,
        role: Role,
    ) -> Result<(Created, Arc<Current>), ServiceError> {
        let (first, placement) = Snapshot::first(ring.clone(), config, role, now())?;
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
                if existing.config == first.config {
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

    /// Reads a ring's latest version from the store into the cache and
    /// returns the newest the cache then holds (another task may have put
    /// a newer one there meanwhile).
    async fn refresh(&self, ring: &RingName) -> Result<Arc<Current>, ServiceError> {
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
        self.remember(current.clone());
        Ok(self.cached(&current.snapshot.ring).unwrap_or(current))
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

/// The current time, truncated to microseconds so it survives a round trip
/// through RFC 3339 text unchanged.
pub fn now() -> OffsetDateTime {
    let t = OffsetDateTime::now_utc();
    t.replace_nanosecond(t.nanosecond() / 1_000 * 1_000)
        .expect("valid nanosecond")
}
