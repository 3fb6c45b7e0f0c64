//! Two `ringd serve` instances on one etcd of their own, under one key
//! prefix: what every test of ringd across instances starts from.

use std::time::Duration;

use super::etcd::Etcd;
use super::ringd::{Ringd, Server};

/// How long each instance gets to become ready in [`EtcdPair::wait_ready`].
const READY: Duration = Duration::from_secs(10);

/// A test's etcd and the two instances on it, `a` and `b`.
pub(crate) struct EtcdPair {
    // Fields drop in order: both instances stop before their etcd.
    /// The first instance.
    pub a: Server,
    /// The second instance.
    pub b: Server,
    /// Their etcd, for tests that read or write keys directly.
    pub etcd: Etcd,
}

impl EtcdPair {
    /// Starts etcd and two instances on it under `prefix`.
    pub(crate) async fn start(prefix: &str) -> Self {
        Self::start_each(prefix, |ringd, _| ringd).await
    }

    /// Starts etcd and two instances on it under `prefix`, each launched
    /// as `configure` makes it from a launcher on the store and the
    /// instance's name, `"a"` or `"b"` (e.g. for `--instance-id`).
    pub(crate) async fn start_each(prefix: &str, configure: impl Fn(Ringd, &str) -> Ringd) -> Self {
        let etcd = Etcd::start().await;
        let store = etcd.store_url();
        let start = |name: &str| configure(Ringd::on(&store).prefix(prefix), name).start();
        let (a, b) = (start("a"), start("b"));
        Self { a, b, etcd }
    }

    /// Waits until both instances are ready: each has caught up with a
    /// revision etcd confirmed after its watch connected, so it answers
    /// as current (a watch opened before would start marked stale).
    pub(crate) async fn wait_ready(&self) {
        for instance in [&self.a, &self.b] {
            instance.api().wait_ready(READY).await;
        }
    }
}
