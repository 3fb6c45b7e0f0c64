//! Helpers for the client-library tests: a recorder of the client's
//! events and a client with short backoffs. Uses only what the
//! client-only build has (serde_json, tokio, `ringd::client`); the HTTP
//! reference every client answer is compared with is [`TestApi`].

use std::time::Duration;

use ringd::client::{RingClient, RingEvent, Status, VersionChange, WatchMode};
use serde_json::json;

use super::api::TestApi;
use tokio::sync::broadcast::{self, error::RecvError};

/// Failure guard for anything awaited: never a measurement.
pub(crate) const GUARD: Duration = Duration::from_secs(20);

/// The keys every routing comparison looks up.
pub(crate) fn keys() -> Vec<String> {
    (0..24).map(|i| format!("user:{i}")).collect()
}

/// A client of `ring` on `urls` with short backoffs, acking as `id`.
pub(crate) fn client(urls: &[&str], ring: &str, mode: WatchMode, id: &str) -> RingClient {
    RingClient::builder(urls, ring)
        .client_id(id)
        .watch_mode(mode)
        .backoff(Duration::from_millis(20), Duration::from_millis(300))
        .long_poll_wait(Duration::from_secs(5))
        .start()
        .expect("client starts")
}

/// Records a client's events and asserts on them in order.
pub(crate) struct Events {
    rx: broadcast::Receiver<RingEvent>,
    /// A first `Applied` from nothing to this version is dropped: see
    /// [`Events::after_ready`].
    skip: Option<u64>,
}

impl Events {
    /// Subscribes; only events from now on are seen.
    pub(crate) fn of(client: &RingClient) -> Self {
        Self {
            rx: client.subscribe(),
            skip: None,
        }
    }

    /// Subscribes to a client that already routes on `version`. The
    /// client swaps the view in before it checks for subscribers, so the
    /// `Applied` of that first version may still arrive; it is dropped if
    /// it is the very first event, and only then.
    pub(crate) fn after_ready(client: &RingClient, version: u64) -> Self {
        assert_eq!(client.version(), Some(version));
        Self {
            rx: client.subscribe(),
            skip: Some(version),
        }
    }

    /// The next event; fails after [`GUARD`] or if events were lost.
    pub(crate) async fn next(&mut self) -> RingEvent {
        loop {
            let e = self.recv().await;
            let skip = self.skip.take();
            match &e {
                RingEvent::Applied(c) if c.from.is_none() && Some(c.to) == skip => continue,
                _ => return e,
            }
        }
    }

    /// The next event; fails if events were lost.
    pub(crate) async fn next_event(&mut self) -> RingEvent {
        self.recv().await
    }

    async fn recv(&mut self) -> RingEvent {
        match tokio::time::timeout(GUARD, self.rx.recv()).await {
            Ok(Ok(e)) => e,
            Ok(Err(RecvError::Lagged(n))) => panic!("{n} events lost"),
            Ok(Err(RecvError::Closed)) => panic!("the client closed"),
            Err(_) => panic!("no event within {GUARD:?}"),
        }
    }

    /// Asserts that the next event is `Applied` with exactly these fields.
    pub(crate) async fn applied(
        &mut self,
        from: Option<u64>,
        to: u64,
        reset: bool,
    ) -> VersionChange {
        match self.next().await {
            RingEvent::Applied(c) => {
                assert_eq!((c.from, c.to, c.reset), (from, to, reset), "{c:?}");
                assert_eq!(c.view.version(), to);
                assert_eq!(c.diff.is_some(), from.is_some(), "{c:?}");
                c
            }
            other => panic!("expected Applied {from:?} → {to} (reset {reset}), got {other:?}"),
        }
    }

    /// Asserts one `Applied` per version after `from` up to `to`, in order,
    /// each carrying the fingerprint `api` serves for it.
    pub(crate) async fn run(&mut self, api: &TestApi, from: u64, to: u64) {
        for v in from + 1..=to {
            let c = self.applied(Some(v - 1), v, false).await;
            let stated = api.snapshot(v).await["fingerprint"].clone();
            assert_eq!(json!(c.view.fingerprint().to_string()), stated, "v{v}");
        }
    }

    /// Asserts that the next event is `Deleted`.
    pub(crate) async fn deleted(&mut self) {
        match self.next().await {
            RingEvent::Deleted => {}
            other => panic!("expected Deleted, got {other:?}"),
        }
    }

    /// Asserts that nothing more arrives within `d` (a check that nothing
    /// extra was sent, not a measurement).
    pub(crate) async fn none_within(&mut self, d: Duration) {
        match tokio::time::timeout(d, self.rx.recv()).await {
            Err(_) => {}
            Ok(e) => panic!("unexpected event {e:?}"),
        }
    }
}

/// Polls the client's status until `done` holds; fails after [`GUARD`].
pub(crate) async fn wait_status(
    client: &RingClient,
    what: &str,
    done: impl Fn(&Status) -> bool,
) -> Status {
    let deadline = tokio::time::Instant::now() + GUARD;
    loop {
        let s = client.status();
        if done(&s) {
            return s;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "status never reached {what}: {s:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
