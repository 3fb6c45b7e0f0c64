//! The etcd store: the authoritative state for many ringd instances.
//!
//! Layout (see `docs/etcd-layout.md`): per ring a meta key with the latest
//! and oldest retained version, one key per node of the latest version,
//! and one record per retained version holding its config, fingerprint,
//! change and the before-images of the nodes it changed. Older snapshots
//! are rebuilt by undoing versions from the latest, so no single value
//! grows with the ring and a 10,000-node ring fits etcd's request limit.
//!
//! Every write is one etcd transaction guarded by the meta key's
//! `mod_revision`; every read reads at one etcd revision. Events come from
//! an etcd watch, so commits made by other instances are reported too.

mod layout;
mod migrate;
mod read;
mod watch;
mod write;

use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use etcd_client::{Client, ConnectOptions};
use tokio::sync::broadcast;
use tokio::task::JoinHandle;

use super::{HistoryEntry, Store, StoreError, StoreEvent, DEFAULT_RETENTION};
use crate::ring::{RingName, Snapshot};
use layout::Keys;

pub use layout::MAX_TXN_BYTES;
pub use migrate::LAYOUT_VERSION;

/// The default key prefix.
pub const DEFAULT_PREFIX: &str = "/ringd";

/// etcd's default `--max-txn-ops`: the most operations one transaction may hold.
pub const DEFAULT_MAX_TXN_OPS: usize = 128;

/// Events buffered per subscriber before a slow one starts missing them.
const EVENT_CAPACITY: usize = 1024;

/// How long one store operation may wait on etcd before it is reported
/// unavailable, so callers never hang on a partitioned cluster.
const OP_TIMEOUT: Duration = Duration::from_secs(10);

/// The same limit while the watch has lost etcd ([`Store::is_current`] is
/// false): etcd is most likely down, so callers learn it quickly.
const DOWN_TIMEOUT: Duration = Duration::from_secs(3);

/// How to reach etcd and how to lay data out in it.
#[derive(Debug, Clone)]
pub struct EtcdOptions {
    /// `host:port` or `http://host:port` of one or more members.
    pub endpoints: Vec<String>,
    /// Every key lives under this prefix, so several deployments can share
    /// one etcd.
    pub prefix: String,
    /// Versions kept per ring (at least 1).
    pub retention: u64,
    /// The etcd cluster's `--max-txn-ops`; a change touching more nodes
    /// than this allows (minus three) is refused.
    pub max_txn_ops: usize,
}

impl EtcdOptions {
    /// Defaults for `endpoints`: prefix `/ringd`, default retention and etcd's
    /// default transaction size.
    pub fn new(endpoints: Vec<String>) -> Self {
        Self {
            endpoints,
            prefix: DEFAULT_PREFIX.to_owned(),
            retention: DEFAULT_RETENTION,
            max_txn_ops: DEFAULT_MAX_TXN_OPS,
        }
    }
}

/// The etcd client plus what every operation needs; cheap to clone.
#[derive(Clone)]
struct Ops {
    client: Client,
    keys: Keys,
    retention: u64,
    max_txn_ops: usize,
}

/// Maps a client error to unavailability: with etcd, every failure that
/// is not a decoding problem is about reaching or being served by it.
fn unavailable(e: etcd_client::Error) -> StoreError {
    StoreError::Unavailable(format!("etcd: {e}"))
}

/// A [`Store`] in etcd.
pub struct EtcdStore {
    ops: Ops,
    events: broadcast::Sender<StoreEvent>,
    watcher: JoinHandle<()>,
    /// Set while the watch is connected to etcd; see [`Store::is_current`].
    connected: Arc<AtomicBool>,
    prefix: String,
}

impl EtcdStore {
    /// Connects, applies pending layout migrations (under an etcd lock)
    /// and starts following changes. Fails with
    /// [`StoreError::SchemaTooNew`] if a newer ringd wrote the layout,
    /// without writing anything.
    pub async fn connect(options: EtcdOptions) -> Result<EtcdStore, StoreError> {
        let connect = ConnectOptions::new()
            .with_connect_timeout(Duration::from_secs(5))
            .with_keep_alive(Duration::from_secs(5), Duration::from_secs(5));
        let client = timed(OP_TIMEOUT, async {
            Client::connect(&options.endpoints, Some(connect))
                .await
                .map_err(unavailable)
        })
        .await?;
        let ops = Ops {
            client,
            keys: Keys::new(&options.prefix),
            retention: options.retention.max(1),
            max_txn_ops: options.max_txn_ops,
        };
        let revision = timed(OP_TIMEOUT, ops.migrate()).await?;
        let events = broadcast::channel(EVENT_CAPACITY).0;
        // Watching from the revision read at start-up means no commit after
        // `connect` returns can be missed, however late the watch starts.
        let connected = Arc::new(AtomicBool::new(false));
        let watcher = tokio::spawn(watch::follow(
            ops.clone(),
            events.clone(),
            connected.clone(),
            revision + 1,
        ));
        Ok(EtcdStore {
            ops,
            events,
            watcher,
            connected,
            prefix: options.prefix,
        })
    }

    /// How many versions each ring keeps.
    pub fn retention(&self) -> u64 {
        self.ops.retention
    }
}

impl Drop for EtcdStore {
    fn drop(&mut self) {
        self.watcher.abort();
    }
}

impl fmt::Debug for EtcdStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EtcdStore")
            .field("prefix", &self.prefix)
            .field("retention", &self.ops.retention)
            .finish_non_exhaustive()
    }
}

impl EtcdStore {
    /// Runs `op` with [`OP_TIMEOUT`], or [`DOWN_TIMEOUT`] while the watch
    /// has lost etcd, so requests fail fast during an outage.
    async fn bounded<T>(
        &self,
        op: impl Future<Output = Result<T, StoreError>>,
    ) -> Result<T, StoreError> {
        let limit = if self.connected.load(Ordering::Relaxed) {
            OP_TIMEOUT
        } else {
            DOWN_TIMEOUT
        };
        timed(limit, op).await
    }
}

/// Runs `op`, reporting etcd unavailable if it takes longer than `limit`.
async fn timed<T>(
    limit: Duration,
    op: impl Future<Output = Result<T, StoreError>>,
) -> Result<T, StoreError> {
    tokio::time::timeout(limit, op).await.unwrap_or_else(|_| {
        Err(StoreError::Unavailable(format!(
            "etcd did not answer within {} s",
            limit.as_secs()
        )))
    })
}

#[async_trait]
impl Store for EtcdStore {
    async fn create_ring(&self, first: &Snapshot) -> Result<(), StoreError> {
        self.bounded(self.ops.create_ring(first)).await
    }

    async fn delete_ring(
        &self,
        ring: &RingName,
        expected_version: Option<u64>,
    ) -> Result<(), StoreError> {
        self.bounded(self.ops.delete_ring(ring, expected_version))
            .await
    }

    async fn list_rings(&self) -> Result<Vec<Snapshot>, StoreError> {
        self.bounded(self.ops.list_rings()).await
    }

    async fn latest(&self, ring: &RingName) -> Result<Snapshot, StoreError> {
        self.bounded(self.ops.latest_at(ring, 0)).await
    }

    async fn snapshot(&self, ring: &RingName, version: u64) -> Result<Snapshot, StoreError> {
        self.bounded(self.ops.snapshot(ring, version)).await
    }

    async fn history(&self, ring: &RingName) -> Result<Vec<HistoryEntry>, StoreError> {
        self.bounded(self.ops.history(ring)).await
    }

    async fn commit(&self, next: &Snapshot) -> Result<(), StoreError> {
        self.bounded(self.ops.commit(next)).await
    }

    fn subscribe(&self) -> broadcast::Receiver<StoreEvent> {
        self.events.subscribe()
    }

    fn is_current(&self) -> bool {
        self.connected.load(Ordering::Relaxed)
    }
}
