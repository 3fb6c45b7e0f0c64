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
//! Writers that lose a compare-and-swap queue on a per-ring etcd lock
//! (`lock`), and a checker (`progress`) tells when the watch lags.

mod acks;
mod deadlines;
mod election;
mod endpoint_health;
mod layout;
mod lease_keys;
mod lease_view;
mod leases;
mod lock;
mod migrate;
mod progress;
mod read;
mod replay;
mod rollouts;
mod session;
#[cfg(test)]
mod tests;
mod watch;
mod write;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use etcd_client::{Certificate, Client, ConnectOptions, Identity, TlsOptions};
use tokio::sync::broadcast;
use tokio::task::JoinHandle;

use super::leadership::{Fence, Instance, Leadership};
use super::{HistoryEntry, Store, StoreError, StoreEvent, WriteTurn, DEFAULT_RETENTION};
use crate::ring::{ClientAck, Clock, RingName, Snapshot};
use deadlines::{timed, OP_TIMEOUT};
use layout::Keys;

pub use layout::MAX_TXN_BYTES;
pub use migrate::LAYOUT_VERSION;

/// The default key prefix.
pub const DEFAULT_PREFIX: &str = "/ringd";

/// etcd's default `--max-txn-ops`: the most operations one transaction may hold.
pub const DEFAULT_MAX_TXN_OPS: usize = 128;

/// Events buffered per subscriber before a slow one starts missing them.
const EVENT_CAPACITY: usize = 1024;

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
    /// TLS to etcd; with it, endpoints given as `host:port` use HTTPS.
    pub tls: Option<EtcdTls>,
    /// etcd user name and password, when etcd has authentication enabled.
    pub user: Option<(String, String)>,
}

/// TLS material for reaching etcd, as PEM bytes.
#[derive(Clone, Default)]
pub struct EtcdTls {
    /// The CA that signed etcd's server certificates; the system's roots
    /// are not consulted.
    pub ca_pem: Option<Vec<u8>>,
    /// A client certificate and its private key, for etcd's
    /// `--client-cert-auth`.
    pub identity: Option<(Vec<u8>, Vec<u8>)>,
}

impl fmt::Debug for EtcdTls {
    // Key material stays out of logs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EtcdTls")
            .field("ca", &self.ca_pem.is_some())
            .field("client_identity", &self.identity.is_some())
            .finish()
    }
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
            tls: None,
            user: None,
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
    /// The writers' turns this instance holds, released by commits.
    turns: lock::Turns,
    /// Dates what this instance learns from etcd on its own (a lease seen
    /// through the watch, the moment it took office). etcd's lease TTLs
    /// and the deadlines of requests are real time, kept by etcd and by
    /// tokio's timers, and never read from it.
    clock: Arc<dyn Clock>,
}

/// Maps a client error to unavailability: with etcd, every failure that
/// is not a decoding problem is about reaching or being served by it.
fn unavailable(e: etcd_client::Error) -> StoreError {
    let text = e.to_string();
    // etcd's own words do not say what to change in ringd's settings.
    let hint = if text.contains("user name is empty") {
        "; etcd has authentication enabled: give ringd an etcd user and password"
    } else if text.contains("invalid user ID or password") {
        "; check the etcd user and password given to ringd"
    } else if text.contains("permission denied") {
        "; grant the etcd user read and write access to ringd's key prefix"
    } else {
        ""
    };
    StoreError::unavailable_from("etcd", EtcdFailure { error: e, hint })
}

/// An etcd client error, followed by what to change in ringd's settings
/// when etcd's own words do not say.
#[derive(Debug, thiserror::Error)]
#[error("{error}{hint}")]
struct EtcdFailure {
    #[source]
    error: etcd_client::Error,
    hint: &'static str,
}

/// A [`Store`] in etcd.
pub struct EtcdStore {
    ops: Ops,
    events: broadcast::Sender<StoreEvent>,
    watcher: JoinHandle<()>,
    /// Compares the watch's progress with the cluster's revision.
    checker: JoinHandle<()>,
    progress: Arc<progress::Progress>,
    /// The lease this instance's writers' turns are held on.
    session: session::Session,
    /// Keeps the client's endpoints to the healthy members.
    members: JoinHandle<()>,
    prefix: String,
    /// The etcd lease client acks currently share.
    leases: acks::Leases,
    /// Node leases as this instance knows them (`lease_view.rs`).
    lease_view: Arc<lease_view::View>,
    /// Keeps `lease_view` current.
    lease_watch: JoinHandle<()>,
    /// One node-lease write at a time from this instance.
    lease_writes: tokio::sync::Mutex<()>,
}

impl EtcdStore {
    /// Connects, applies pending layout migrations (under an etcd lock)
    /// and starts following changes, dating what it learns from etcd by
    /// `clock`. Fails with [`StoreError::SchemaTooNew`] if a newer ringd
    /// wrote the layout, without writing anything.
    pub async fn connect(
        options: EtcdOptions,
        clock: Arc<dyn Clock>,
    ) -> Result<EtcdStore, StoreError> {
        let mut connect = ConnectOptions::new()
            .with_connect_timeout(Duration::from_secs(5))
            .with_keep_alive(Duration::from_secs(5), Duration::from_secs(5))
            // A member cut off from its cluster's leader must fail requests
            // at once instead of holding them until the election ends; the
            // member prober (`members`) then takes it out of rotation.
            .with_require_leader(true);
        if let Some(tls) = &options.tls {
            let mut config = TlsOptions::new();
            if let Some(ca) = &tls.ca_pem {
                config = config.ca_certificate(Certificate::from_pem(ca));
            }
            if let Some((cert, key)) = &tls.identity {
                config = config.identity(Identity::from_pem(cert, key));
            }
            connect = connect.with_tls(config);
        }
        if let Some((user, password)) = &options.user {
            // etcd's auth tokens expire (5 minutes by default); refresh
            // them instead of failing every request after that.
            connect = connect
                .with_user(user.clone(), password.clone())
                .with_auto_token_refresh(true);
        }
        let probe_options = connect.clone();
        let client = timed(OP_TIMEOUT, async {
            Client::connect(&options.endpoints, Some(connect))
                .await
                .map_err(unavailable)
        })
        .await?;
        // Started before anything else talks to etcd, so that a member
        // already down at start-up stops getting requests within a probe.
        // Told when a member gets new connections, so that a watch
        // waiting to start on an old one starts over at once.
        let renewed = Arc::new(tokio::sync::Notify::new());
        let members = tokio::spawn(endpoint_health::follow(
            client.clone(),
            options.endpoints.clone(),
            probe_options,
            options.tls.is_some(),
            renewed.clone(),
        ));
        let ops = Ops {
            client,
            keys: Keys::new(&options.prefix),
            retention: options.retention.max(1),
            max_txn_ops: options.max_txn_ops,
            turns: lock::Turns::default(),
            clock,
        };
        let revision = match timed(OP_TIMEOUT, ops.migrate()).await {
            Ok(revision) => revision,
            Err(e) => {
                members.abort();
                return Err(e);
            }
        };
        // Every lease as etcd holds it now, then a watch from there on.
        let (seen, lease_revision) = match timed(OP_TIMEOUT, ops.read_all_leases()).await {
            Ok(read) => read,
            Err(e) => {
                members.abort();
                return Err(e);
            }
        };
        let lease_view = Arc::new(lease_view::View::default());
        lease_view::apply(&lease_view, seen, ops.clock.now());
        let lease_watch = tokio::spawn(lease_view::follow(
            ops.clone(),
            lease_view.clone(),
            lease_revision + 1,
        ));
        let events = broadcast::channel(EVENT_CAPACITY).0;
        // Watching from the revision read at start-up means no commit after
        // `connect` returns can be missed, however late the watch starts.
        let progress = Arc::new(progress::Progress::new(revision));
        let watcher = tokio::spawn(watch::follow(
            ops.clone(),
            events.clone(),
            progress.clone(),
            renewed,
            revision + 1,
        ));
        let checker = tokio::spawn(progress::check(ops.clone(), progress.clone()));
        Ok(EtcdStore {
            ops,
            events,
            watcher,
            checker,
            progress,
            session: session::Session::default(),
            members,
            prefix: options.prefix,
            leases: acks::Leases::default(),
            lease_view,
            lease_watch,
            lease_writes: tokio::sync::Mutex::new(()),
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
        self.checker.abort();
        self.members.abort();
        self.lease_watch.abort();
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

    async fn history_after(
        &self,
        ring: &RingName,
        after: u64,
    ) -> Result<Vec<HistoryEntry>, StoreError> {
        self.bounded(self.ops.history(ring, after)).await
    }

    async fn commit(&self, next: &Snapshot) -> Result<(), StoreError> {
        self.commit_within(self.ops.commit(next, None)).await
    }

    async fn commit_fenced(&self, next: &Snapshot, fence: &Fence) -> Result<(), StoreError> {
        self.commit_within(self.ops.commit(next, Some(fence))).await
    }

    fn elect(&self, me: Instance, ttl: Duration) -> Arc<dyn Leadership> {
        Arc::new(self.ops.elect(me, ttl))
    }

    async fn queue(&self, ring: &RingName) -> Option<WriteTurn> {
        self.ops.queue(&self.session, ring).await
    }

    fn subscribe(&self) -> broadcast::Receiver<StoreEvent> {
        self.events.subscribe()
    }

    fn is_current(&self) -> bool {
        self.progress.keeping_up()
    }

    fn shared(&self) -> bool {
        true
    }

    async fn confirmed_versions(&self) -> Result<BTreeMap<RingName, u64>, StoreError> {
        self.ops.confirmed_versions(&self.progress).await
    }

    async fn put_ack(&self, ring: &RingName, ack: &ClientAck) -> Result<(), StoreError> {
        self.bounded(self.ops.put_ack(&self.leases, ring, ack))
            .await
    }

    async fn list_acks(
        &self,
        ring: &RingName,
        now: time::OffsetDateTime,
    ) -> Result<Vec<ClientAck>, StoreError> {
        self.bounded(self.ops.list_acks(ring, now)).await
    }
}
