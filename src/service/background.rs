//! The background loops of a running service, owned in one place: each is
//! started here with a stop signal of its own, and stopping the runner
//! signals every one and waits for it.
//!
//! A loop returns at its next pause once the signal comes, so the work in
//! hand (a rollout step being recorded, a membership change being
//! committed) finishes instead of being cut off at an arbitrary await.
//! One that does not return within [`STOP_WAIT`] is aborted. Dropping the
//! runner without stopping it aborts every loop at once, so a server
//! dropped without running leaves nothing behind.

use std::collections::HashMap;
use std::future::Future;
use std::time::Duration;

use tokio::task::{Id, JoinSet};
use tokio_util::sync::CancellationToken;

/// How long [`Background::stop`] waits for the loops to return before it
/// aborts the rest: every loop pauses at least every 250 ms, and a store
/// call in flight is answered within its own deadline.
pub const STOP_WAIT: Duration = Duration::from_secs(5);

/// A loop's stop signal: cancelled once the runner stops.
pub type Stop = CancellationToken;

/// A loop's pace: a tick every period until its stop signal. After a
/// stall one tick catches up rather than a burst, since each loop looks
/// at the present state and a burst of looks would see nothing more.
pub(crate) struct Ticks {
    interval: tokio::time::Interval,
    stop: Stop,
}

impl Ticks {
    /// Ticks every `period` (the first at once) until `stop`.
    pub(crate) fn every(period: Duration, stop: Stop) -> Self {
        let mut interval = tokio::time::interval(period);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        Self { interval, stop }
    }

    /// Waits for the next tick: `false` once the loop is to stop.
    pub(crate) async fn next(&mut self) -> bool {
        tokio::select! {
            () = self.stop.cancelled() => false,
            _ = self.interval.tick() => true,
        }
    }

    /// [`Ticks::next`], or earlier when `wake` is notified.
    pub(crate) async fn next_or(&mut self, wake: &tokio::sync::Notify) -> bool {
        tokio::select! {
            () = self.stop.cancelled() => false,
            _ = self.interval.tick() => true,
            () = wake.notified() => true,
        }
    }
}

/// The runner: the loops it started, by task, with their names.
#[derive(Debug, Default)]
pub struct Background {
    stop: Stop,
    tasks: JoinSet<()>,
    names: HashMap<Id, &'static str>,
}

impl Background {
    /// A runner with nothing started yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts the loop `task` makes of its stop signal, under `name` (for
    /// the log). The loop must return soon after the signal.
    pub fn spawn<F, Fut>(&mut self, name: &'static str, task: F)
    where
        F: FnOnce(Stop) -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let handle = self.tasks.spawn(task(self.stop.clone()));
        self.names.insert(handle.id(), name);
    }

    /// Signals every loop to stop and waits for each to return, at most
    /// [`STOP_WAIT`] in all; then aborts the ones still running.
    pub async fn stop(self) {
        self.stop_within(STOP_WAIT).await;
    }

    /// [`Background::stop`] with a wait of `wait`; returns the names of
    /// the loops it had to abort.
    pub(crate) async fn stop_within(mut self, wait: Duration) -> Vec<&'static str> {
        self.stop.cancel();
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let (id, result) =
                match tokio::time::timeout_at(deadline, self.tasks.join_next_with_id()).await {
                    Ok(Some(Ok((id, ())))) => (id, None),
                    Ok(Some(Err(e))) => (e.id(), Some(e)),
                    Ok(None) => return Vec::new(),
                    Err(_) => break,
                };
            let name = self.names.remove(&id).unwrap_or("unnamed");
            match result {
                None => tracing::debug!(task = name, "background task stopped"),
                Some(e) => tracing::warn!(task = name, error = %e, "background task failed"),
            }
        }
        let mut aborted: Vec<&'static str> = self.names.values().copied().collect();
        aborted.sort_unstable();
        for name in &aborted {
            tracing::warn!(task = name, "background task did not stop in time: aborted");
        }
        self.tasks.shutdown().await;
        aborted
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    use super::*;

    /// Set when the loop holding it is dropped: it returned or was aborted.
    struct Flag(Arc<AtomicBool>);

    impl Drop for Flag {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    #[tokio::test]
    async fn stopping_waits_for_each_loop_to_finish_its_work_in_hand() {
        let mut background = Background::new();
        let finished = Arc::new(AtomicBool::new(false));
        let done = finished.clone();
        let (started, began) = tokio::sync::oneshot::channel();
        background.spawn("slow", |stop| async move {
            stop.cancelled().await;
            let _ = started.send(());
            // Work that outlives the signal by a moment, as a tick in
            // progress does.
            tokio::time::sleep(Duration::from_millis(50)).await;
            done.store(true, Ordering::SeqCst);
        });
        background.spawn("quick", |stop| async move { stop.cancelled().await });
        let stopping = tokio::spawn(background.stop_within(STOP_WAIT));
        began.await.unwrap();
        assert_eq!(stopping.await.unwrap(), Vec::<&str>::new());
        assert!(finished.load(Ordering::SeqCst), "stop returned first");
    }

    #[tokio::test]
    async fn a_loop_that_ignores_the_signal_is_aborted_after_the_wait() {
        let mut background = Background::new();
        let dropped = Arc::new(AtomicBool::new(false));
        let flag = Flag(dropped.clone());
        background.spawn("stubborn", |_stop| async move {
            let _flag = flag;
            std::future::pending::<()>().await;
        });
        let wait = Duration::from_millis(100);
        let started = tokio::time::Instant::now();
        assert_eq!(background.stop_within(wait).await, vec!["stubborn"]);
        assert!(started.elapsed() >= wait, "{:?}", started.elapsed());
        assert!(dropped.load(Ordering::SeqCst), "still running");
    }

    #[tokio::test]
    async fn dropping_the_runner_aborts_every_loop() {
        let mut background = Background::new();
        let dropped = Arc::new(AtomicBool::new(false));
        let flag = Flag(dropped.clone());
        let (running, up) = tokio::sync::oneshot::channel();
        background.spawn("forever", |_stop| async move {
            let _flag = flag;
            let _ = running.send(());
            std::future::pending::<()>().await;
        });
        up.await.unwrap();
        drop(background);
        // The abort lands when the runtime next gets to the task.
        tokio::time::timeout(Duration::from_secs(5), async {
            while !dropped.load(Ordering::SeqCst) {
                tokio::task::yield_now().await;
            }
        })
        .await
        .expect("the loop was aborted");
    }
}
