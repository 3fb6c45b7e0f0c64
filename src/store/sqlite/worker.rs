//! The thread that owns the SQLite connection.
//!
//! Every store operation is a job on one queue, and this thread runs the
//! jobs one after another. Callers await a reply instead of occupying a
//! thread each: before, every operation ran on tokio's blocking pool and
//! waited there for the connection's mutex, so 200 concurrent requests
//! held 200 threads that did nothing but wait.
//!
//! Client acks are committed in groups. While a transaction runs (and
//! waits for its fsync), new acks wait in the queue; when it ends, this
//! thread takes every ack queued next, up to [`MAX_GROUP`], and commits
//! them in one transaction, so the group shares one fsync. Taking stops at
//! the first job that is not an ack, which then runs after the group: the
//! queue's order is the order of effects, as with one job at a time.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use rusqlite::Connection;
use tokio::sync::{broadcast, mpsc, oneshot};

use super::acks;
use crate::ring::{ClientAck, RingName};
use crate::store::{StoreError, StoreEvent};

/// Jobs that may wait in the queue; a caller finding it full waits for
/// room, so a flood of requests queues in their own tasks, not here.
const QUEUE: usize = 1024;

/// Most acks committed in one transaction. Bounds how long one group holds
/// SQLite's write lock, and so how long a job queued behind it waits.
pub(super) const MAX_GROUP: usize = 256;

/// An operation on the connection. It gets the event sender so that it can
/// publish while it is still the only thing touching the database: events
/// then go out in commit order, which subscribers rely on to apply
/// versions one after another.
type Op = Box<dyn FnOnce(&mut Connection, &broadcast::Sender<StoreEvent>) + Send>;

/// An ack waiting for its group, with where its own result goes.
struct PendingAck {
    ring: RingName,
    ack: ClientAck,
    reply: oneshot::Sender<Result<(), StoreError>>,
}

enum Job {
    Run(Op),
    Ack(PendingAck),
}

/// The queue into the connection's thread. Dropping it lets the thread
/// finish the jobs already queued, close the connection and exit, and
/// waits for that, so the file is closed once the store is gone.
pub(super) struct Worker {
    /// `None` only while dropping.
    jobs: Option<mpsc::Sender<Job>>,
    thread: Option<JoinHandle<()>>,
    stats: Arc<Counters>,
}

/// What [`AckStats`](super::AckStats) reports, counted by the thread.
#[derive(Default)]
struct Counters {
    acks: AtomicU64,
    transactions: AtomicU64,
}

impl Worker {
    /// Starts the thread that owns `conn`.
    pub(super) fn start(
        conn: Connection,
        events: broadcast::Sender<StoreEvent>,
    ) -> Result<Worker, StoreError> {
        let (jobs, queue) = mpsc::channel(QUEUE);
        let stats = Arc::new(Counters::default());
        let counters = Arc::clone(&stats);
        let thread = std::thread::Builder::new()
            .name("ringd-sqlite".into())
            .spawn(move || serve(conn, &events, queue, &counters))
            .map_err(|e| StoreError::unavailable_from("cannot start the SQLite thread", e))?;
        Ok(Worker {
            jobs: Some(jobs),
            thread: Some(thread),
            stats,
        })
    }

    /// Runs `op` on the connection's thread, after every job queued before.
    pub(super) async fn run<T, F>(&self, op: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection, &broadcast::Sender<StoreEvent>) -> Result<T, StoreError>
            + Send
            + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let op: Op = Box::new(move |conn, events| {
            // The caller may have given up waiting; the work is done anyway.
            let _ = reply.send(op(conn, events));
        });
        self.submit(Job::Run(op), answer).await
    }

    /// Records one ack, committed with the acks queued beside it.
    pub(super) async fn put_ack(&self, ring: RingName, ack: ClientAck) -> Result<(), StoreError> {
        let (reply, answer) = oneshot::channel();
        self.submit(Job::Ack(PendingAck { ring, ack, reply }), answer)
            .await
    }

    /// Acks taken from the queue so far, and the transactions they went in.
    pub(super) fn ack_stats(&self) -> super::AckStats {
        super::AckStats {
            acks: self.stats.acks.load(Ordering::Acquire),
            transactions: self.stats.transactions.load(Ordering::Acquire),
        }
    }

    /// How many jobs wait in the queue (not counting the running one).
    #[cfg(test)]
    pub(super) fn queued(&self) -> usize {
        self.jobs.as_ref().map_or(0, |j| QUEUE - j.capacity())
    }

    async fn submit<T>(
        &self,
        job: Job,
        answer: oneshot::Receiver<Result<T, StoreError>>,
    ) -> Result<T, StoreError> {
        let jobs = self.jobs.as_ref().ok_or_else(stopped)?;
        jobs.send(job).await.map_err(|_| stopped())?;
        // The reply is dropped unsent only if the operation panicked.
        answer
            .await
            .map_err(|_| StoreError::unavailable("the store operation failed unexpectedly"))?
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        drop(self.jobs.take());
        if let Some(thread) = self.thread.take() {
            // A job never owns the store, but should one ever drop the
            // last handle, joining its own thread would never return.
            if thread.thread().id() != std::thread::current().id() {
                // Jobs are guarded, so the thread has no panic to report.
                let _ = thread.join();
            }
        }
    }
}

fn stopped() -> StoreError {
    StoreError::unavailable("the SQLite thread has stopped")
}

/// The thread's loop: one job at a time, acks in groups, until every
/// sender is gone and the queue is empty.
fn serve(
    mut conn: Connection,
    events: &broadcast::Sender<StoreEvent>,
    mut queue: mpsc::Receiver<Job>,
    stats: &Counters,
) {
    // A job taken while gathering a group, to run right after it.
    let mut next = None;
    loop {
        let Some(job) = next.take().or_else(|| queue.blocking_recv()) else {
            return;
        };
        let group = match job {
            Job::Run(op) => {
                guarded(|| op(&mut conn, events));
                continue;
            }
            Job::Ack(first) => {
                let mut group = vec![first];
                while group.len() < MAX_GROUP {
                    match queue.try_recv() {
                        Ok(Job::Ack(ack)) => group.push(ack),
                        Ok(other) => {
                            next = Some(other);
                            break;
                        }
                        Err(_) => break,
                    }
                }
                group
            }
        };
        stats.transactions.fetch_add(1, Ordering::AcqRel);
        stats.acks.fetch_add(group.len() as u64, Ordering::AcqRel);
        guarded(|| commit_group(&mut conn, group));
    }
}

/// Commits a group of acks in one transaction and gives each its result.
fn commit_group(conn: &mut Connection, group: Vec<PendingAck>) {
    let (acks, replies): (Vec<_>, Vec<_>) = group
        .into_iter()
        .map(|p| ((p.ring, p.ack), p.reply))
        .unzip();
    for (result, reply) in acks::put_acks(conn, &acks).into_iter().zip(replies) {
        let _ = reply.send(result);
    }
}

/// Runs a job so that a panic in it fails that job alone (its caller gets
/// an error when its reply is dropped) and the thread goes on serving.
/// The connection stays sound: rusqlite rolls back an unfinished
/// transaction when it is dropped during unwinding.
fn guarded(job: impl FnOnce()) {
    if catch_unwind(AssertUnwindSafe(job)).is_err() {
        tracing::error!("a SQLite store operation panicked; its transaction was rolled back");
    }
}
