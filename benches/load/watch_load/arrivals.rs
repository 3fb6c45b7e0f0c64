//! What the watchers saw, shared by all of them: per ring and version, how
//! many had it and when the first and the last did; per watcher, when it
//! first had an answer (it was streaming, or its long-poll was parked and
//! answered). Recording costs a few atomic operations whatever the count.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

/// One ring's versions: slot `i` is version `base + i`.
pub(crate) struct RingArrivals {
    pub base: u64,
    pub count: Vec<AtomicUsize>,
    pub last: Vec<AtomicU64>,
}

pub(crate) struct Arrivals {
    pub start: Instant,
    pub rings: Vec<RingArrivals>,
    /// Per watcher: nanoseconds from `start` to its first answer, or 0.
    pub first_answer: Vec<AtomicU64>,
    /// Watchers with a first answer.
    pub answering: AtomicUsize,
    pub resets: AtomicUsize,
    pub gaps: AtomicUsize,
    /// Connections that failed (refused, reset, closed); a watcher counts
    /// each of its attempts.
    pub errors: AtomicUsize,
    /// Answers other than the expected 200 (or 304 for a long-poll).
    pub refusals: AtomicUsize,
}

impl Arrivals {
    pub(crate) fn new(rings: usize, base: u64, slots: usize, watchers: usize) -> Self {
        Self {
            start: Instant::now(),
            rings: (0..rings)
                .map(|_| RingArrivals {
                    base,
                    count: (0..slots).map(|_| AtomicUsize::new(0)).collect(),
                    last: (0..slots).map(|_| AtomicU64::new(0)).collect(),
                })
                .collect(),
            first_answer: (0..watchers).map(|_| AtomicU64::new(0)).collect(),
            answering: AtomicUsize::new(0),
            resets: AtomicUsize::new(0),
            gaps: AtomicUsize::new(0),
            errors: AtomicUsize::new(0),
            refusals: AtomicUsize::new(0),
        }
    }

    pub(crate) fn nanos(&self, t: Instant) -> u64 {
        // Never 0, which means "not yet".
        (t.duration_since(self.start).as_nanos() as u64).max(1)
    }

    pub(crate) fn now(&self) -> u64 {
        self.nanos(Instant::now())
    }

    /// Watcher `who` of `ring` had `version` at `at`.
    pub(crate) fn record(&self, who: usize, ring: usize, version: u64, at: u64) {
        if self.first_answer[who]
            .compare_exchange(0, at, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
        {
            self.answering.fetch_add(1, Ordering::Release);
        }
        let r = &self.rings[ring];
        let Some(i) = version.checked_sub(r.base).map(|i| i as usize) else {
            return;
        };
        if i < r.count.len() {
            r.last[i].fetch_max(at, Ordering::Relaxed);
            // Last, so a reader that sees the count also sees the time.
            r.count[i].fetch_add(1, Ordering::Release);
        }
    }

    /// How many watchers of `ring` have `version`.
    pub(crate) fn had(&self, ring: usize, version: u64) -> usize {
        let r = &self.rings[ring];
        r.count[(version - r.base) as usize].load(Ordering::Acquire)
    }

    /// When the last watcher of `ring` had `version`.
    pub(crate) fn last(&self, ring: usize, version: u64) -> u64 {
        let r = &self.rings[ring];
        r.last[(version - r.base) as usize].load(Ordering::Relaxed)
    }

    /// The first answers' times, sorted (nanoseconds from `start`).
    pub(crate) fn first_answers(&self) -> Vec<u64> {
        let mut t: Vec<u64> = self
            .first_answer
            .iter()
            .map(|a| a.load(Ordering::Relaxed))
            .filter(|&t| t > 0)
            .collect();
        t.sort_unstable();
        t
    }

    pub(crate) fn count(counter: &AtomicUsize) -> usize {
        counter.load(Ordering::Relaxed)
    }
}
