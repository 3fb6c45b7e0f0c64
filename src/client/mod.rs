//! The Rust client library: keeps a verified copy of a ring's placement in
//! memory and routes keys with it locally.
//!
//! ```no_run
//! # async fn demo() -> Result<(), ringd::client::ClientError> {
//! use std::time::Duration;
//! use ringd::client::RingClient;
//!
//! let client = RingClient::builder(&["http://10.0.0.1:7420,http://10.0.0.2:7420"], "cache")
//!     .token("read-token")
//!     .start()?;
//! client.ready(Duration::from_secs(10)).await?;
//! let mut router = client.router(); // one per thread or task, for hot paths
//! if let Some(node) = router.owner(b"user:42") {
//!     println!("user:42 lives on {} at {:?}", node.id, node.address);
//! }
//! # Ok(()) }
//! ```
//!
//! A background task watches the ring (Server-Sent Events, falling back to
//! long-polling), verifies every snapshot's fingerprint before using it,
//! swaps it in atomically and acks it to the server. Lookups never touch
//! the network. Design notes: `docs/client-library.md`.
//!
//! A node process keeps itself in a ring with a [`Member`]: it registers
//! with a lease, renews it and releases it when the process stops.

mod ack;
mod backoff;
pub mod bounded;
mod builder;
mod error;
mod events;
mod handoff;
pub mod http;
mod member;
mod problem;
mod router;
mod settings;
mod shared;
pub mod sse;
mod status;
mod table_fetch;
#[cfg(feature = "tls")]
mod tls;
mod view;
mod watch;

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{broadcast, watch as state};

pub use crate::wire::Problem;
pub use bounded::BoundedLoad;
pub use builder::ClientBuilder;
pub use error::ClientError;
pub use events::{DiffSummary, RingEvent, VersionChange};
pub use handoff::Handoff;
pub use http::{Endpoints, EndpointsBuilder};
pub use member::{Member, MemberBuilder, MemberState, MemberStatus};
pub use router::Router;
pub use settings::WatchMode;
use shared::Shared;
pub use status::{Status, Transport};
#[cfg(feature = "tls")]
pub use tls::TlsSettings;
pub use view::RingView;

use crate::placement::NodeId;
use crate::ring::RingName;

/// Aborts the background tasks when the last [`RingClient`] clone goes.
struct Tasks(Vec<tokio::task::JoinHandle<()>>);

impl Drop for Tasks {
    fn drop(&mut self) {
        for t in &self.0 {
            t.abort();
        }
    }
}

/// A live, verified view of one ring. Cheap to clone; the background
/// watch stops when the last clone is dropped.
#[derive(Clone)]
pub struct RingClient {
    shared: Arc<Shared>,
    endpoints: Option<Endpoints>,
    /// With [`ClientBuilder::ack_on_confirm`]: what the application
    /// confirmed, for the ack task.
    confirmations: Option<state::Sender<ack::Report>>,
    _tasks: Arc<Tasks>,
}

impl std::fmt::Debug for RingClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RingClient")
            .field("ring", &self.shared.ring)
            .field("endpoints", &self.endpoints)
            .field("status", &*self.shared.status.borrow())
            .finish()
    }
}

impl RingClient {
    /// Starts configuring a client of `ring` on the servers `urls` (each
    /// entry may be a comma-separated list).
    pub fn builder<S: AsRef<str>>(urls: &[S], ring: &str) -> ClientBuilder {
        ClientBuilder::new(urls, ring)
    }

    /// The ring watched.
    pub fn ring(&self) -> &RingName {
        &self.shared.ring
    }

    /// A client pinned to one snapshot, with no server: it verifies the
    /// snapshot and routes on it forever. For tests, benchmarks and tools
    /// that work on a saved snapshot.
    pub fn fixed(snapshot: crate::ring::Snapshot) -> Result<Self, ClientError> {
        let view = Arc::new(RingView::verify(snapshot)?);
        let shared = Arc::new(Shared::new(view.snapshot().ring.clone()));
        shared.swap(view);
        Ok(Self {
            shared,
            endpoints: None,
            confirmations: None,
            _tasks: Arc::new(Tasks(Vec::new())),
        })
    }

    /// The servers, for other requests on the same connection pool (`None`
    /// for a [`RingClient::fixed`] client).
    pub fn endpoints(&self) -> Option<&Endpoints> {
        self.endpoints.as_ref()
    }

    /// The view routed on now, if a version has been verified yet.
    pub fn current(&self) -> Option<Arc<RingView>> {
        self.shared.current.load_full()
    }

    /// The version routed on now.
    pub fn version(&self) -> Option<u64> {
        self.shared.current.load().as_ref().map(|v| v.version())
    }

    /// Runs `f` on the current view without taking a reference count.
    pub fn with_view<R>(&self, f: impl FnOnce(&RingView) -> R) -> Option<R> {
        self.shared.current.load().as_deref().map(f)
    }

    /// The id of the node that owns `key`, from the current view. For hot
    /// paths prefer a [`Router`], which borrows instead of cloning the id.
    /// Keys are byte strings and need not be UTF-8: they are placed as the
    /// server places `key_b64` lookups of the same bytes.
    pub fn owner(&self, key: &[u8]) -> Option<NodeId> {
        self.with_view(|v| v.owner(key).map(|n| n.id.clone()))
            .flatten()
    }

    /// The ids of the first `r` nodes for `key` (any bytes), owner first.
    pub fn preference_list(&self, key: &[u8], r: usize) -> Vec<NodeId> {
        self.with_view(|v| {
            v.preference_list(key, r)
                .into_iter()
                .map(|n| n.id.clone())
                .collect()
        })
        .unwrap_or_default()
    }

    /// Who owns `key` now and who owned it in the version applied before
    /// (the last change the client applied). A cache that misses on the
    /// owner while a change settles (each step of a rollout, say) can read
    /// through to the owner before, which still holds the value, instead
    /// of going to the backing store; see `docs/client-library.md`.
    pub fn handoff(&self, key: &[u8]) -> Handoff {
        let pair = self.shared.pair.load();
        let Some((now, before)) = pair.as_deref() else {
            return Handoff::default();
        };
        Handoff {
            owner_now: now.owner(key).map(|n| n.id.clone()),
            owner_before: before
                .as_ref()
                .and_then(|b| b.owner(key).map(|n| n.id.clone())),
            version: Some(now.version()),
            version_before: before.as_ref().map(|b| b.version()),
        }
    }

    /// A per-thread (or per-task) routing handle: it keeps the current view
    /// and checks one atomic counter per lookup to notice a newer one.
    pub fn router(&self) -> Router {
        Router::new(self.shared.clone())
    }

    /// Every version applied or refused from now on. A receiver that falls
    /// more than 64 events behind gets `RecvError::Lagged` and then the
    /// newer events; [`RingClient::current`] is always authoritative.
    pub fn subscribe(&self) -> broadcast::Receiver<RingEvent> {
        self.shared.events.subscribe()
    }

    /// What the watch is doing.
    pub fn status(&self) -> Status {
        self.shared.status.borrow().clone()
    }

    /// With [`ClientBuilder::ack_on_confirm`]: the application now uses
    /// `version`, whose fingerprint it got from the verified view it used
    /// ([`RingView::fingerprint`]). The version is acked (and re-acked
    /// every interval) from now on, and any failure reported before is
    /// cleared. Without that setting the client acks what it applies
    /// itself, and this is refused.
    pub fn confirm(
        &self,
        version: u64,
        fingerprint: crate::placement::Fingerprint,
    ) -> Result<(), ClientError> {
        let reports = self.confirmations()?;
        reports.send_replace(ack::Report {
            applied: Some((version, fingerprint)),
            failure: None,
        });
        Ok(())
    }

    /// With [`ClientBuilder::ack_on_confirm`]: the application could not
    /// put `version` to use and stays on the version it confirmed last;
    /// `error` says why (a proxy's own message, say). The next ack carries
    /// it, so `GET …/clients` shows it, until a version is confirmed. The
    /// text is cut to [`ApplyFailure::MAX_ERROR`] characters. Before any
    /// version is confirmed there is no version to ack it with, so the
    /// server does not hear of it.
    ///
    /// [`ApplyFailure::MAX_ERROR`]: crate::ring::ApplyFailure::MAX_ERROR
    pub fn report_failure(&self, version: u64, error: &str) -> Result<(), ClientError> {
        let reports = self.confirmations()?;
        let error = match error.trim() {
            "" => "failed without a message",
            _ => error,
        };
        let failure = crate::ring::ApplyFailure {
            version,
            error: error
                .chars()
                .take(crate::ring::ApplyFailure::MAX_ERROR)
                .collect(),
        };
        reports.send_modify(|r| r.failure = Some(failure));
        Ok(())
    }

    fn confirmations(&self) -> Result<&state::Sender<ack::Report>, ClientError> {
        self.confirmations.as_ref().ok_or_else(|| {
            ClientError::InvalidSetting(
                "this client acks each version as it applies it; build it with \
                 ack_on_confirm(true) to confirm versions and report failures"
                    .into(),
            )
        })
    }

    /// Waits until the first verified version is in use.
    pub async fn ready(&self, timeout: Duration) -> Result<Arc<RingView>, ClientError> {
        self.wait_for_version(1, timeout).await
    }

    /// Waits until the client routes on version `at_least` or newer.
    pub async fn wait_for_version(
        &self,
        at_least: u64,
        timeout: Duration,
    ) -> Result<Arc<RingView>, ClientError> {
        self.wait_for(|s| s.version.is_some_and(|v| v >= at_least), timeout)
            .await?;
        self.current().ok_or(ClientError::Closed)
    }

    /// Waits until the server has recorded an ack for `at_least` or newer.
    pub async fn wait_for_ack(&self, at_least: u64, timeout: Duration) -> Result<(), ClientError> {
        self.wait_for(|s| s.acked.is_some_and(|v| v >= at_least), timeout)
            .await
    }

    async fn wait_for(
        &self,
        done: impl Fn(&Status) -> bool,
        timeout: Duration,
    ) -> Result<(), ClientError> {
        let mut rx = self.shared.status.subscribe();
        let outcome = tokio::time::timeout(timeout, async {
            rx.wait_for(|s| done(s)).await.map(|_| ())
        })
        .await;
        match outcome {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) => Err(ClientError::Closed),
            Err(_) => Err(ClientError::Timeout(timeout)),
        }
    }
}
