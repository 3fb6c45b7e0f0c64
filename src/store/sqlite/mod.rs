//! The embedded store: one SQLite file, for single-node deployments.
//!
//! Every snapshot is a row holding its JSON; a per-ring row holds the
//! latest and oldest retained versions, and a commit checks and moves the
//! latest version inside one write transaction (the compare-and-swap).
//! The file is opened in WAL mode with `synchronous=FULL`: once a write
//! returns `Ok`, it survives a crash of the process or the machine.
//!
//! One thread owns the connection and runs every operation, fed by a queue
//! (see `worker.rs`); client acks queued together share one transaction.
//! Lease deadlines live in memory and only lease rows are written
//! (`leases.rs`).

mod acks;
mod leases;
mod ops;
mod record;
mod rollouts;
mod schema;
mod worker;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use rusqlite::{Connection, ErrorCode};
use tokio::sync::broadcast;
use worker::Worker;

use super::{HistoryEntry, LeaseTable, Store, StoreError, StoreEvent};
use crate::ring::{ClientAck, Clock, RingName, Snapshot};

pub use schema::SCHEMA_VERSION;

/// Events buffered per subscriber before a slow one starts missing them
/// (it then sees `RecvError::Lagged` and should re-read the store).
const EVENT_CAPACITY: usize = 1024;

/// A [`Store`] in one SQLite file.
///
/// rusqlite is blocking, so the connection lives on a thread of its own
/// and the async runtime is never blocked on disk. Operations queue for
/// that thread and run one at a time on the one connection: SQLite allows
/// a single writer anyway, and reads are short point lookups. However many
/// requests wait, they wait as tasks, not as threads.
///
/// Dropping the store lets queued operations finish and closes the file
/// before returning.
pub struct SqliteStore {
    worker: Worker,
    events: broadcast::Sender<StoreEvent>,
    retention: u64,
    path: PathBuf,
    /// Every lease, with its deadline: the only place deadlines live.
    leases: LeaseTable,
    /// One lease write at a time, so two registrations of one node cannot
    /// both decide on a new id.
    lease_writes: tokio::sync::Mutex<()>,
}

impl SqliteStore {
    /// Opens the database at `path`, creating it and its parent
    /// directories if missing and applying pending schema migrations.
    /// Each ring keeps its newest `retention` versions (at least 1: a ring
    /// always keeps its latest version).
    ///
    /// `clock` dates the grace every stored live lease gets at opening
    /// (one full TTL from now); after that the store reads no time of its
    /// own: every lease operation is given its `now`.
    ///
    /// Blocks on disk I/O; call it at startup, not from an async task.
    /// Fails with [`StoreError::SchemaTooNew`] if the file was written by a
    /// newer ringd, without modifying it.
    pub fn open(path: &Path, retention: u64, clock: &dyn Clock) -> Result<SqliteStore, StoreError> {
        let conn = schema::open(path)?;
        let leases = leases::load(&conn, clock.now())?;
        let events = broadcast::channel(EVENT_CAPACITY).0;
        Ok(SqliteStore {
            worker: Worker::start(conn, events.clone())?,
            events,
            retention: retention.max(1),
            path: path.to_path_buf(),
            leases,
            lease_writes: tokio::sync::Mutex::new(()),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many versions each ring keeps.
    pub fn retention(&self) -> u64 {
        self.retention
    }

    /// Client acks recorded so far by this store, and how many
    /// transactions they were committed in: acks that queue while a
    /// transaction runs are committed together.
    pub fn ack_stats(&self) -> AckStats {
        self.worker.ack_stats()
    }

    /// Runs `op` on the connection's thread.
    ///
    /// `op` gets the event sender so that it can publish before the next
    /// operation runs: events then go out in commit order, which
    /// subscribers rely on to apply versions one after another.
    async fn run<T, F>(&self, op: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection, &broadcast::Sender<StoreEvent>) -> Result<T, StoreError>
            + Send
            + 'static,
    {
        self.worker.run(op).await
    }
}

/// Counts from [`SqliteStore::ack_stats`]: `acks / transactions` is the
/// mean number of acks that shared a commit (and its fsync).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckStats {
    /// Acks taken from the queue, whatever their outcome.
    pub acks: u64,
    /// Transactions they went in.
    pub transactions: u64,
}

impl fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.path)
            .field("retention", &self.retention)
            .finish_non_exhaustive()
    }
}

/// Maps a SQLite failure to a store error: damaged files and values of the
/// wrong type are corruption (retrying will not help); everything else
/// (locked, I/O, disk full …) is unavailability.
fn db_err(e: rusqlite::Error) -> StoreError {
    use rusqlite::Error as E;
    match &e {
        E::SqliteFailure(f, _)
            if matches!(f.code, ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) =>
        {
            StoreError::corrupt_from("", e)
        }
        E::FromSqlConversionFailure(..)
        | E::IntegralValueOutOfRange(..)
        | E::InvalidColumnType(..)
        | E::Utf8Error(..) => StoreError::corrupt_from("", e),
        _ => StoreError::unavailable_from("", e),
    }
}

/// Publishes an event; having no subscribers is normal, not an error.
fn publish(events: &broadcast::Sender<StoreEvent>, event: StoreEvent) {
    let _ = events.send(event);
}

#[async_trait]
impl Store for SqliteStore {
    async fn create_ring(&self, first: &Snapshot) -> Result<(), StoreError> {
        let first = Arc::new(first.clone());
        self.run(move |conn, events| {
            ops::create_ring(conn, &first)?;
            publish(events, StoreEvent::Committed(first));
            Ok(())
        })
        .await
    }

    async fn delete_ring(
        &self,
        ring: &RingName,
        expected_version: Option<u64>,
    ) -> Result<(), StoreError> {
        let deleted = ring.clone();
        self.run(move |conn, events| {
            ops::delete_ring(conn, &deleted, expected_version)?;
            publish(events, StoreEvent::Deleted(deleted));
            Ok(())
        })
        .await?;
        // The rows went with the ring (ON DELETE CASCADE).
        self.leases.remove_ring(ring);
        Ok(())
    }

    async fn list_rings(&self) -> Result<Vec<Snapshot>, StoreError> {
        self.run(|conn, _| ops::list_rings(conn)).await
    }

    async fn latest(&self, ring: &RingName) -> Result<Snapshot, StoreError> {
        let ring = ring.clone();
        self.run(move |conn, _| ops::latest(conn, &ring)).await
    }

    async fn snapshot(&self, ring: &RingName, version: u64) -> Result<Snapshot, StoreError> {
        let ring = ring.clone();
        self.run(move |conn, _| ops::snapshot(conn, &ring, version))
            .await
    }

    async fn history_after(
        &self,
        ring: &RingName,
        after: u64,
    ) -> Result<Vec<HistoryEntry>, StoreError> {
        let ring = ring.clone();
        self.run(move |conn, _| ops::history(conn, &ring, after))
            .await
    }

    async fn commit(&self, next: &Snapshot) -> Result<(), StoreError> {
        let next = Arc::new(next.clone());
        let retention = self.retention;
        self.run(move |conn, events| {
            ops::commit(conn, retention, &next)?;
            publish(events, StoreEvent::Committed(next));
            Ok(())
        })
        .await
    }

    fn subscribe(&self) -> broadcast::Receiver<StoreEvent> {
        self.events.subscribe()
    }

    async fn put_ack(&self, ring: &RingName, ack: &ClientAck) -> Result<(), StoreError> {
        self.worker.put_ack(ring.clone(), ack.clone()).await
    }

    async fn list_acks(
        &self,
        ring: &RingName,
        now: time::OffsetDateTime,
    ) -> Result<Vec<ClientAck>, StoreError> {
        let ring = ring.clone();
        self.run(move |conn, _| acks::list_acks(conn, &ring, now))
            .await
    }
}

#[cfg(test)]
mod tests;
