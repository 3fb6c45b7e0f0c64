//! How long the etcd store's operations may wait on etcd, so that no
//! caller hangs on a partitioned cluster (docs/api.md promises an answer
//! within 3 s at worst).

use std::future::Future;
use std::time::Duration;

use super::EtcdStore;
use crate::store::StoreError;

/// How long a start-up step (connecting, migrating, the first read of
/// every lease) may wait on etcd before the instance gives up starting.
pub(super) const OP_TIMEOUT: Duration = Duration::from_secs(10);

/// How long an operation that serves a request may wait on etcd before it
/// is reported unavailable: a reader, like a writer (docs/api.md), gets its
/// 503 within 3 s at worst, however many requests the operation sends
/// (each has a shorter bound of its own and is retried). A read sent just
/// before a partition otherwise waited for each of them in turn.
const SERVE_TIMEOUT: Duration = Duration::from_secs(3);

/// The same limit for a commit, which holds the ring's queue of writers:
/// its reads (at most about 3 s each, with their retries) and its
/// transaction (3 s) normally leave it far inside this.
const COMMIT_TIMEOUT: Duration = Duration::from_secs(6);

/// The same limit while the watch has lost etcd ([`crate::store::Store::is_current`] is
/// false): etcd is most likely down, so callers learn it quickly.
const DOWN_TIMEOUT: Duration = Duration::from_secs(3);

impl EtcdStore {
    /// Runs `op` with [`SERVE_TIMEOUT`], so no request waits long on a
    /// partitioned cluster.
    pub(super) async fn bounded<T>(
        &self,
        op: impl Future<Output = Result<T, StoreError>>,
    ) -> Result<T, StoreError> {
        timed(SERVE_TIMEOUT, op).await
    }

    /// Runs a commit with [`COMMIT_TIMEOUT`], or [`DOWN_TIMEOUT`] while the
    /// watch has lost etcd: a commit holds the ring's queue of writers.
    pub(super) async fn commit_within(
        &self,
        op: impl Future<Output = Result<(), StoreError>>,
    ) -> Result<(), StoreError> {
        let limit = if self.progress.is_connected() {
            COMMIT_TIMEOUT
        } else {
            DOWN_TIMEOUT
        };
        timed(limit, op).await
    }
}

/// Runs `op`, reporting etcd unavailable if it takes longer than `limit`.
pub(super) async fn timed<T>(
    limit: Duration,
    op: impl Future<Output = Result<T, StoreError>>,
) -> Result<T, StoreError> {
    tokio::time::timeout(limit, op).await.unwrap_or_else(|_| {
        Err(StoreError::unavailable(format!(
            "etcd did not answer within {} s",
            limit.as_secs()
        )))
    })
}
