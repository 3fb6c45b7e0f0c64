//! Whether the watch keeps up with the cluster. A watch carried by a
//! member that froze breaks nothing the client can see: the stream stays
//! open and simply says nothing, while the rest of the cluster commits.
//! So the watch asks etcd for progress every [`PROGRESS_EVERY`] (etcd then
//! reports the revision up to which it has sent everything), and a checker
//! reads the cluster's current revision every [`CHECK_EVERY`], through the
//! balanced client and so normally through another member. A revision the
//! cluster may have had for more than [`STALE_AFTER`] (counted from the
//! read before the one that saw it) that the watch has not reached marks
//! the store not current (answers carry `Ringd-Stale`), and
//! past [`REWATCH_AFTER`] the watch is started again, on a member that
//! answers.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use etcd_client::GetOptions;
use tokio::sync::Notify;
use tokio::time::MissedTickBehavior;

use super::Ops;

/// How often the watch asks etcd for its progress.
pub(super) const PROGRESS_EVERY: Duration = Duration::from_millis(200);

/// How often the cluster's revision is read.
const CHECK_EVERY: Duration = Duration::from_millis(200);

/// Longest wait for one revision read; a slower one does not count.
const CHECK_TIMEOUT: Duration = Duration::from_millis(500);

/// How far behind the cluster the watch may fall before answers are
/// marked stale: more than a progress round trip, and with the checker's
/// period inside the 1 s an answer may be behind unmarked.
const STALE_AFTER: Duration = Duration::from_millis(500);

/// With no revision read for this long, the instance cannot tell whether
/// it is current, and says so.
const UNCONFIRMED_AFTER: Duration = Duration::from_secs(1);

/// How long the watch may stay behind before it is started again.
const REWATCH_AFTER: Duration = Duration::from_millis(1500);

/// What the watch and the checker share.
#[derive(Debug)]
pub(super) struct Progress {
    /// The revision up to which the watch has delivered every event.
    applied: AtomicI64,
    /// The oldest revision read from the cluster that the watch had not
    /// reached when it was read, with the earliest time the cluster may
    /// have had it: when the read before it was sent.
    behind: Mutex<Option<(Instant, i64)>>,
    /// When the cluster's revision was last read.
    confirmed: Mutex<Instant>,
    /// Tells the watch to start over.
    pub(super) rewatch: Notify,
}

impl Progress {
    /// Progress of a watch that has delivered everything up to `applied`.
    pub(super) fn new(applied: i64) -> Self {
        Self {
            applied: AtomicI64::new(applied),
            behind: Mutex::new(None),
            confirmed: Mutex::new(Instant::now()),
            rewatch: Notify::new(),
        }
    }

    /// The watch has delivered every event up to `revision`.
    pub(super) fn applied(&self, revision: i64) {
        self.applied.fetch_max(revision, Ordering::Relaxed);
    }

    /// Whether the watch is known to be within [`STALE_AFTER`] of the
    /// cluster. Never waits on etcd.
    pub(super) fn keeping_up(&self) -> bool {
        if self.confirmed.lock().expect("progress lock").elapsed() > UNCONFIRMED_AFTER {
            return false;
        }
        let behind = *self.behind.lock().expect("progress lock");
        // Checked against the live `applied`, so catching up counts at once.
        !behind.is_some_and(|(since, revision)| {
            self.applied.load(Ordering::Relaxed) < revision && since.elapsed() > STALE_AFTER
        })
    }
}

/// Reads the cluster's revision every [`CHECK_EVERY`] forever, keeping
/// `progress` up to date; spawn it once per store and abort it with it.
pub(super) async fn check(ops: Ops, progress: std::sync::Arc<Progress>) {
    // Revisions read and not yet reached by the watch, oldest first.
    let mut samples: VecDeque<(Instant, i64)> = VecDeque::new();
    let mut rewatched = Instant::now();
    let mut tick = tokio::time::interval(CHECK_EVERY);
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let sent = Instant::now();
        let mut client = ops.client.clone();
        let read = client.get(ops.keys.layout(), Some(GetOptions::new().with_count_only()));
        if let Ok(Ok(resp)) = tokio::time::timeout(CHECK_TIMEOUT, read).await {
            if let Some(h) = resp.header() {
                let mut confirmed = progress.confirmed.lock().expect("progress lock");
                // The cluster may have had this revision since just after
                // the previous read that answered, which after an outage
                // (no etcd leader, so no read answered) is long before
                // this one: the watch is behind since then, not since now.
                let since = *confirmed;
                *confirmed = sent;
                samples.push_back((since, h.revision()));
            }
        }
        let applied = progress.applied.load(Ordering::Relaxed);
        while samples.front().is_some_and(|&(_, r)| r <= applied) {
            samples.pop_front();
        }
        let oldest = samples.front().copied();
        *progress.behind.lock().expect("progress lock") = oldest;
        if let Some((since, revision)) = oldest {
            if since.elapsed() > REWATCH_AFTER && rewatched.elapsed() > REWATCH_AFTER {
                tracing::warn!(
                    applied,
                    cluster = revision,
                    "etcd watch fell behind the cluster; watching again"
                );
                rewatched = Instant::now();
                progress.rewatch.notify_one();
            }
        }
    }
}
