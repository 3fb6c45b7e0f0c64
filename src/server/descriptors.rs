//! File descriptors: every connection is one, so an instance that holds a
//! fleet's watchers needs far more than the usual soft limit of 1,024.
//!
//! At start the soft `RLIMIT_NOFILE` is raised to the hard limit (what
//! etcd, nginx's `worker_rlimit_nofile` and Go's runtime do), and the
//! watcher cap is kept below it, with [`RESERVED`] descriptors left for
//! ordinary requests, the store and the log. If descriptors still run out,
//! [`Spare`] lets the accept loop refuse new connections cleanly instead
//! of leaving them in the backlog.

use std::fs::File;
use std::io;

/// Descriptors kept out of the default watcher cap: ordinary requests
/// (writes, lookups, health checks), the store's files and connections,
/// and the process's own.
pub(super) const RESERVED: u64 = 1_024;

/// Raises the soft open-file limit to the hard one, and returns the limit
/// in force (the soft one, if raising it failed).
pub(super) fn raise_open_file_limit() -> u64 {
    let before = rlimit::Resource::NOFILE.get().map(|(soft, _)| soft).ok();
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) => {
            tracing::info!(
                before = before.unwrap_or(limit),
                limit,
                "open-file limit (RLIMIT_NOFILE) raised to its hard limit"
            );
            limit
        }
        Err(e) => {
            let limit = before.unwrap_or(RESERVED);
            tracing::warn!(error = %e, limit, "open-file limit (RLIMIT_NOFILE) could not be raised");
            limit
        }
    }
}

/// The watcher cap: `configured`, or the default lowered to what
/// `open_files` leaves room for. A configured cap above that is kept (the
/// operator may know better) but logged, since past it connections are
/// refused for want of descriptors, not by the cap.
pub(super) fn watcher_cap(configured: Option<u64>, default: u64, open_files: u64) -> u64 {
    let room = open_files.saturating_sub(RESERVED).max(1);
    match configured {
        Some(cap) => {
            if cap > room {
                tracing::warn!(
                    max_watchers = cap,
                    open_files,
                    "--max-watchers is above what the open-file limit leaves room for; raise the hard limit (LimitNOFILE=, ulimit -Hn)"
                );
            }
            cap
        }
        None => default.min(room),
    }
}

/// One descriptor held in reserve, so that an accept loop that ran out can
/// still take a connection off the backlog and close it, instead of
/// leaving the client hanging until its own timeout.
pub(super) struct Spare(Option<File>);

impl Spare {
    /// Opens the reserve (`/dev/null`).
    pub(super) fn new() -> Self {
        Self(open_spare())
    }

    /// Whether `e` from `accept` means the process (or the system) is out
    /// of descriptors.
    pub(super) fn is_exhaustion(e: &io::Error) -> bool {
        // EMFILE (24) and ENFILE (23): std names neither as a kind.
        matches!(e.raw_os_error(), Some(23 | 24))
    }

    /// Frees the reserve for the duration of `refuse`, which accepts and
    /// closes one connection, then takes it back. Returns whether the
    /// reserve was there to free.
    pub(super) async fn release_for<F: std::future::Future<Output = ()>>(
        &mut self,
        refuse: impl FnOnce() -> F,
    ) -> bool {
        let Some(file) = self.0.take() else {
            self.0 = open_spare();
            return false;
        };
        drop(file);
        refuse().await;
        self.0 = open_spare();
        true
    }
}

fn open_spare() -> Option<File> {
    File::open("/dev/null").ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_cap_leaves_room_for_everything_else() {
        assert_eq!(watcher_cap(None, 100_000, 1_048_576), 100_000);
        assert_eq!(watcher_cap(None, 100_000, 20_000), 18_976);
        assert_eq!(watcher_cap(None, 100_000, 1_024), 1);
        assert_eq!(watcher_cap(Some(500_000), 100_000, 20_000), 500_000);
        assert_eq!(watcher_cap(Some(10), 100_000, 20_000), 10);
    }

    #[test]
    fn exhaustion_is_emfile_or_enfile() {
        assert!(Spare::is_exhaustion(&io::Error::from_raw_os_error(24)));
        assert!(Spare::is_exhaustion(&io::Error::from_raw_os_error(23)));
        assert!(!Spare::is_exhaustion(&io::Error::from_raw_os_error(104)));
    }
}
