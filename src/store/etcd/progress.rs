//! Whether the watch keeps up with the cluster, and so whether what this
//! instance holds may be served as current.
//!
//! Being connected proves nothing: a watch that etcd has just confirmed
//! first replays what it missed, and one carried by a member that froze
//! stays open and says nothing while the rest of the cluster commits. So
//! the instance counts as current only while both hold:
//! - it has applied every event up to a revision that the cluster
//!   confirmed *after* the watch last connected: a linearizable read of
//!   the cluster's revision (here every [`CHECK_EVERY`], and on every read
//!   barrier, `Ops::latest_versions`) sent after etcd confirmed the watch;
//! - no revision the cluster may have had for more than [`STALE_AFTER`]
//!   is still missing, and a revision read answered within
//!   [`UNCONFIRMED_AFTER`].
//!
//! Past [`REWATCH_AFTER`] behind, the watch is started again, on a member
//! that answers. docs/etcd-layout.md has the whole story.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use etcd_client::GetOptions;
use tokio::sync::Notify;
use tokio::time::MissedTickBehavior;

use super::Ops;

/// How often the watch asks etcd for its progress: after a heal, the
/// watch counts as caught up only once etcd says how far it has sent.
pub(super) const PROGRESS_EVERY: Duration = Duration::from_millis(100);

/// How often the cluster's revision is read.
const CHECK_EVERY: Duration = Duration::from_millis(200);

/// Longest wait for one revision read; a slower one does not count.
pub(super) const CHECK_TIMEOUT: Duration = Duration::from_millis(500);

/// How far behind the cluster the watch may fall before the instance is
/// not current: more than a progress round trip. Reads do not lean on
/// this slack: each confirms its own answer (`service/freshness.rs`).
const STALE_AFTER: Duration = Duration::from_millis(500);

/// With no revision read for this long, the instance cannot tell whether
/// it is current, and says so.
const UNCONFIRMED_AFTER: Duration = Duration::from_secs(1);

/// How long the watch may stay behind before it is started again.
const REWATCH_AFTER: Duration = Duration::from_millis(1000);

/// What the watch, the checker and the read barrier share.
#[derive(Debug)]
pub(super) struct Progress {
    /// The revision up to which the watch has delivered every event.
    applied: AtomicI64,
    /// Everything else, under one lock so that no reader sees a new
    /// confirmation without the lag it reveals.
    state: Mutex<State>,
    /// Tells the watch to start over.
    pub(super) rewatch: Notify,
    /// Tells the checker to read the cluster's revision now: the watch has
    /// just connected, and is not current until a read confirms it.
    check_now: Notify,
}

#[derive(Debug)]
struct State {
    /// When etcd last confirmed the watch; `None` while it is broken.
    connected_at: Option<Instant>,
    /// The first revision confirmed after `connected_at`: until the watch
    /// has applied it, the instance may hold what the watch has not yet
    /// replayed.
    reconnect_mark: Option<i64>,
    /// When the last revision read that answered was sent.
    confirmed: Instant,
    /// Revisions read and not yet reached by the watch, oldest first, each
    /// with the earliest time the cluster may have had it: when the read
    /// before it was sent.
    unreached: VecDeque<(Instant, i64)>,
    /// When the watch was last told to start over.
    rewatched: Instant,
}

impl State {
    /// Drops the revisions the watch has reached.
    fn forget_reached(&mut self, applied: i64) {
        while self.unreached.front().is_some_and(|&(_, r)| r <= applied) {
            self.unreached.pop_front();
        }
    }
}

impl Progress {
    /// Progress of a watch that has delivered everything up to `applied`
    /// and is not yet connected.
    pub(super) fn new(applied: i64) -> Self {
        let now = Instant::now();
        Self {
            applied: AtomicI64::new(applied),
            state: Mutex::new(State {
                connected_at: None,
                reconnect_mark: None,
                confirmed: now,
                unreached: VecDeque::new(),
                rewatched: now,
            }),
            rewatch: Notify::new(),
            check_now: Notify::new(),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().expect("progress lock")
    }

    /// The watch has delivered every event up to `revision`.
    pub(super) fn applied(&self, revision: i64) {
        self.applied.fetch_max(revision, Ordering::Relaxed);
    }

    /// etcd confirmed a new watch: what it replays next is not yet applied.
    /// Returns whether it was broken before.
    pub(super) fn connected(&self) -> bool {
        let mut state = self.state();
        let was_broken = state.connected_at.is_none();
        if was_broken {
            state.connected_at = Some(Instant::now());
            state.reconnect_mark = None;
            self.check_now.notify_one();
        }
        was_broken
    }

    /// The watch broke.
    pub(super) fn disconnected(&self) {
        let mut state = self.state();
        state.connected_at = None;
        state.reconnect_mark = None;
    }

    /// Whether etcd has confirmed the watch and it has not broken since.
    pub(super) fn is_connected(&self) -> bool {
        self.state().connected_at.is_some()
    }

    /// A linearizable read sent at `sent` found the cluster at `revision`.
    pub(super) fn confirmed(&self, sent: Instant, revision: i64) {
        let mut state = self.state();
        // The cluster may have had this revision since just after the
        // previous read that answered, which after an outage (no etcd
        // leader, so no read answered) is long before this one: the watch
        // is behind since then, not since now.
        let since = state.confirmed.min(sent);
        state.confirmed = state.confirmed.max(sent);
        if state
            .connected_at
            .is_some_and(|at| sent >= at && state.reconnect_mark.is_none())
        {
            state.reconnect_mark = Some(revision);
        }
        if state.unreached.back().is_none_or(|&(_, r)| r < revision) {
            state.unreached.push_back((since, revision));
        }
    }

    /// Whether the instance is current, as the module explains. Never
    /// waits on etcd.
    pub(super) fn keeping_up(&self) -> bool {
        let applied = self.applied.load(Ordering::Relaxed);
        let mut state = self.state();
        let Some(mark) = state.reconnect_mark else {
            return false;
        };
        if applied < mark || state.confirmed.elapsed() > UNCONFIRMED_AFTER {
            return false;
        }
        state.forget_reached(applied);
        // Checked against the live `applied`, so catching up counts at once.
        state
            .unreached
            .front()
            .is_none_or(|(since, _)| since.elapsed() <= STALE_AFTER)
    }

    /// Whether the watch has been behind for long enough to start it
    /// again (at most once per [`REWATCH_AFTER`]); tells it to if so.
    fn rewatch_if_stuck(&self) {
        let applied = self.applied.load(Ordering::Relaxed);
        let mut state = self.state();
        state.forget_reached(applied);
        let Some(&(since, revision)) = state.unreached.front() else {
            return;
        };
        // A broken watch is starting over already; a new one gets its
        // full time to replay what it missed, though the cluster had that
        // long before: restarting it would only replay it again.
        let Some(connected_at) = state.connected_at else {
            return;
        };
        let behind_since = since.max(connected_at);
        if behind_since.elapsed() > REWATCH_AFTER && state.rewatched.elapsed() > REWATCH_AFTER {
            tracing::warn!(
                applied,
                cluster = revision,
                "etcd watch fell behind the cluster; watching again"
            );
            state.rewatched = Instant::now();
            self.rewatch.notify_one();
        }
    }
}

/// Reads the cluster's revision every [`CHECK_EVERY`] forever, keeping
/// `progress` up to date; spawn it once per store and abort it with it.
pub(super) async fn check(ops: Ops, progress: std::sync::Arc<Progress>) {
    let mut tick = tokio::time::interval(CHECK_EVERY);
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            () = progress.check_now.notified() => {}
        }
        let sent = Instant::now();
        let mut client = ops.client.clone();
        let read = client.get(ops.keys.layout(), Some(GetOptions::new().with_count_only()));
        // A read that fails or is slow does not count; past
        // UNCONFIRMED_AFTER without one that counts, the instance is not
        // current.
        if let Ok(Ok(resp)) = tokio::time::timeout(CHECK_TIMEOUT, read).await {
            if let Some(h) = resp.header() {
                progress.confirmed(sent, h.revision());
            }
        }
        progress.rewatch_if_stuck();
    }
}

#[cfg(test)]
mod tests;
