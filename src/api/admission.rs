//! Admission of watchers: a per-instance cap on the requests that stay open
//! waiting for news (watch streams and parked long-polls).
//!
//! Each one holds a connection, a descriptor and a few KiB until the
//! client goes away. When every process of a fleet reconnects at once (an
//! instance restarted, a load balancer dropped its connections), the
//! instance that answers first would take them all. Past the cap a watch is
//! refused with 503 and a `Retry-After` drawn at random from
//! [`super::problem::RETRY_AFTER_SECONDS`], so that the refused clients go to another
//! instance or come back spread out, instead of the first instance running
//! out of descriptors or memory and failing everyone, its own writes
//! included. Ordinary requests are never refused by the cap.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::problem::{ApiError, ProblemKind};

/// The watchers of one instance: how many are open, how many were refused,
/// and the cap.
#[derive(Debug)]
pub struct Admission {
    limit: u64,
    open: AtomicU64,
    refused: AtomicU64,
}

impl Admission {
    /// A cap of `limit` watchers (at least one).
    pub fn new(limit: u64) -> Arc<Self> {
        Arc::new(Self {
            limit: limit.max(1),
            open: AtomicU64::new(0),
            refused: AtomicU64::new(0),
        })
    }

    /// The cap.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Watchers open now.
    pub fn open(&self) -> u64 {
        self.open.load(Ordering::Relaxed)
    }

    /// Watchers refused since the start.
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    /// The cap's gauges and counter for `/metrics`.
    pub fn render_metrics(&self) -> String {
        let mut out = String::new();
        for (name, kind, help, value) in [
            (
                "ringd_watchers",
                "gauge",
                "Watchers admitted now: watch streams and waiting long-polls.",
                self.open(),
            ),
            (
                "ringd_watchers_limit",
                "gauge",
                "Watchers admitted at most (--max-watchers).",
                self.limit(),
            ),
            (
                "ringd_watchers_refused_total",
                "counter",
                "Watches and long-polls refused with 503 because the instance was at its limit.",
                self.refused(),
            ),
        ] {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}"
            );
        }
        out
    }

    /// A slot for one more watcher, held until the [`WatcherSlot`] is
    /// dropped; 503 with `Retry-After` when all are taken.
    pub fn admit(self: &Arc<Self>) -> Result<WatcherSlot, ApiError> {
        let taken = self
            .open
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |open| {
                (open < self.limit).then_some(open + 1)
            });
        match taken {
            Ok(_) => Ok(WatcherSlot {
                admission: self.clone(),
            }),
            Err(_) => {
                self.refused.fetch_add(1, Ordering::Relaxed);
                Err(ApiError::new(
                    ProblemKind::AtCapacity,
                    format!(
                        "this instance already serves {} watchers, its limit (--max-watchers); retry after the time Retry-After gives, or watch through another instance",
                        self.limit
                    ),
                ))
            }
        }
    }
}

/// One admitted watcher; its slot is free again when this is dropped.
#[derive(Debug)]
pub struct WatcherSlot {
    admission: Arc<Admission>,
}

impl Drop for WatcherSlot {
    fn drop(&mut self) {
        self.admission.open.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_up_to_the_limit_and_frees_a_slot_when_one_leaves() {
        let admission = Admission::new(2);
        let a = admission.admit().unwrap();
        let _b = admission.admit().unwrap();
        assert_eq!(admission.open(), 2);
        let refused = admission.admit().unwrap_err();
        assert_eq!(refused.kind, ProblemKind::AtCapacity);
        assert!(
            refused
                .detail
                .starts_with("this instance already serves 2 watchers, its limit (--max-watchers)"),
            "{}",
            refused.detail
        );
        assert_eq!(admission.refused(), 1);
        assert_eq!(admission.open(), 2, "a refusal takes no slot");
        drop(a);
        assert_eq!(admission.open(), 1);
        let _c = admission.admit().unwrap();
        assert_eq!((admission.open(), admission.refused()), (2, 1));
    }

    #[test]
    fn a_limit_of_zero_is_one() {
        let admission = Admission::new(0);
        assert_eq!(admission.limit(), 1);
        let _a = admission.admit().unwrap();
        assert!(admission.admit().is_err());
    }
}
