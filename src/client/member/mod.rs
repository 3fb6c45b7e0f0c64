//! [`Member`]: the handle a node process embeds to keep itself in a ring.
//!
//! ```no_run
//! # async fn demo() -> Result<(), ringd::client::ClientError> {
//! use std::time::Duration;
//! use ringd::client::{Member, MemberState};
//! use ringd::placement::NodeId;
//! use ringd::ring::NodeRecord;
//!
//! let mut record = NodeRecord::new(NodeId::new("cache-7").expect("a valid id"));
//! record.address = Some("10.0.0.7:11211".into());
//! let member = Member::builder(&["http://10.0.0.1:7420,http://10.0.0.2:7420"], "cache", record)
//!     .ttl(Duration::from_secs(10))
//!     .token("admin-token")
//!     .start()?;
//! member
//!     .wait_for(|s| s.state == MemberState::Registered, Duration::from_secs(10))
//!     .await?;
//! // … serve traffic; the member renews in the background …
//! member.leave().await?; // released: the node is `left` at once
//! # Ok(()) }
//! ```
//!
//! A background task registers the node with a lease
//! (`PUT …/nodes/{node}/lease`), renews it about every third of its TTL
//! (jittered, so members started together do not renew together), fails
//! over between the servers, registers again when the lease was lost,
//! and releases it on [`Member::leave`] or, best effort, when the handle
//! is dropped. See `docs/client-library.md`.

mod task;

use std::sync::Arc;
use std::time::Duration;

use time::OffsetDateTime;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::backoff::Backoff;
use super::error::ClientError;
use super::http::{Endpoints, DEFAULT_REQUEST_TIMEOUT};
use crate::placement::{NodeId, NodeState};
use crate::ring::durations::{format_duration, DEFAULT_LEASE_TTL, LEASE_TTL};
use crate::ring::{LeaseId, NodeRecord, RingName};
use crate::wire::{LeaseInput, NodeStateName};

/// Where a [`Member`] stands with its lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberState {
    /// Not registered yet: the first registration is under way, or waiting
    /// to be tried again (no server reachable, or one answered 5xx).
    Joining,
    /// Holds a fresh lease: just registered, first or after a loss.
    Registered,
    /// Holds a lease it has renewed at least once since registering.
    Renewing,
    /// Its lease is gone: ringd refused a renewal (the lease expired, was
    /// released, or the node was removed), or no server could be reached
    /// before the deadline. It is registering again.
    Lost,
    /// Released its lease on [`Member::leave`] or drop; the task has ended.
    Left,
    /// Stopped on a refusal that retrying cannot fix (a `ttl` or record
    /// ringd refuses, a wrong token, a missing ring); see
    /// [`MemberStatus::last_error`]. The task has ended.
    Failed,
}

impl MemberState {
    /// The state's name for logs and the CLI (`registered`, `lost`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Joining => "joining",
            Self::Registered => "registered",
            Self::Renewing => "renewing",
            Self::Lost => "lost",
            Self::Left => "left",
            Self::Failed => "failed",
        }
    }

    /// Whether the member holds a lease it believes live.
    pub fn holds_lease(self) -> bool {
        matches!(self, Self::Registered | Self::Renewing)
    }

    /// Whether the task has ended ([`MemberState::Left`] or
    /// [`MemberState::Failed`]): nothing will change any more.
    pub fn is_final(self) -> bool {
        matches!(self, Self::Left | Self::Failed)
    }
}

/// What a [`Member`] reports: its state and its current lease.
#[derive(Debug, Clone)]
pub struct MemberStatus {
    /// Where it stands.
    pub state: MemberState,
    /// The lease held, or last held (kept through [`MemberState::Lost`]
    /// and [`MemberState::Left`] for logs).
    pub lease_id: Option<LeaseId>,
    /// The lease's deadline as ringd last answered it.
    pub deadline: Option<OffsetDateTime>,
    /// The ring's version after the last registration.
    pub version: Option<u64>,
    /// The server that answered last.
    pub server: Option<String>,
    /// Bumped on every successful registration or renewal, so a caller
    /// can wait for "renewed again since I looked".
    pub heartbeats: u64,
    /// How many times the lease was lost. A loss is followed at once by a
    /// new registration, so a `watch` reader may see `Registered` again
    /// without having seen `Lost`; this count says it happened.
    pub losses: u64,
    /// The most recent failure; cleared by the next success. In
    /// [`MemberState::Failed`], the refusal that stopped it.
    pub last_error: Option<Arc<ClientError>>,
}

impl MemberStatus {
    fn joining() -> Self {
        Self {
            state: MemberState::Joining,
            lease_id: None,
            deadline: None,
            version: None,
            server: None,
            heartbeats: 0,
            losses: 0,
            last_error: None,
        }
    }
}

/// Settings of a [`Member`]; all but the servers, ring and record have
/// defaults.
#[derive(Debug, Clone)]
pub struct MemberBuilder {
    servers: Servers,
    ring: String,
    record: NodeRecord,
    ttl: Duration,
    token: Option<String>,
    backoff_min: Duration,
    backoff_max: Duration,
    request_timeout: Option<Duration>,
    #[cfg(feature = "tls")]
    tls: super::tls::TlsSettings,
}

/// Where a member's requests go.
#[derive(Debug, Clone)]
enum Servers {
    /// URLs, made into an [`Endpoints`] of the member's own at start.
    Urls(Vec<String>),
    /// Servers already set up (token, TLS, pool), shared with the caller.
    Endpoints(Endpoints),
}

impl MemberBuilder {
    /// How long the lease lasts without a renewal (default 10 s; 1 s to
    /// 1 h, [`LEASE_TTL`]). The member renews about every third of it.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// Bearer token: the admin token, since registering changes the ring.
    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// Wait after a failed attempt: starts at `min`, doubles up to `max`,
    /// jittered (defaults 100 ms and 10 s). A renewal's retries never wait
    /// past the lease's deadline.
    pub fn backoff(mut self, min: Duration, max: Duration) -> Self {
        self.backoff_min = min;
        self.backoff_max = max;
        self
    }

    /// Time limit of each request (default a third of the TTL, at least
    /// 500 ms and at most 10 s), so that one hung server cannot use up a
    /// lease before the member tries the next. Applies to shared
    /// [`Endpoints`] too, request by request.
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = Some(timeout);
        self
    }

    /// A private CA to trust, and a client certificate to present, for
    /// `https://` servers (feature `tls`).
    #[cfg(feature = "tls")]
    pub fn tls(mut self, tls: super::tls::TlsSettings) -> Self {
        self.tls = tls;
        self
    }

    /// Validates the settings and starts registering. Must be called
    /// within a tokio runtime; returns at once (see [`Member::wait_for`]).
    pub fn start(self) -> Result<Member, ClientError> {
        let ring = RingName::new(&self.ring)?;
        if !LEASE_TTL.contains(self.ttl) {
            return Err(ClientError::InvalidSetting(format!(
                "the lease TTL {} is out of range: use {}",
                format_duration(self.ttl),
                LEASE_TTL.range()
            )));
        }
        if self.backoff_min.is_zero() || self.backoff_max < self.backoff_min {
            return Err(ClientError::InvalidSetting(
                "the backoff must be more than zero, its maximum at least its minimum".into(),
            ));
        }
        let timeout = self.request_timeout.unwrap_or_else(|| {
            (self.ttl / 3).clamp(Duration::from_millis(500), DEFAULT_REQUEST_TIMEOUT)
        });
        if timeout.is_zero() {
            return Err(ClientError::InvalidSetting(
                "the request timeout must be more than zero".into(),
            ));
        }
        let endpoints = match self.servers {
            Servers::Endpoints(e) => e,
            Servers::Urls(urls) => {
                let endpoints = Endpoints::builder(&urls)
                    .token(self.token.clone())
                    .timeout(timeout);
                #[cfg(feature = "tls")]
                let endpoints = endpoints.tls(self.tls.clone());
                endpoints.build()?
            }
        };
        let node = self.record.id.clone();
        let (status_tx, status) = watch::channel(MemberStatus::joining());
        let (stop, stop_rx) = watch::channel(false);
        let task = task::Task {
            endpoints,
            lease_path: format!("/v1/rings/{ring}/nodes/{node}/lease"),
            body: registration_body(&self.record, self.ttl),
            ttl: self.ttl,
            timeout,
            backoff: Backoff::new(self.backoff_min, self.backoff_max),
            status: status_tx,
            stop: stop_rx,
        };
        Ok(Member {
            ring,
            node,
            status,
            stop: Some(stop),
            task: Some(tokio::spawn(task.run())),
        })
    }
}

/// The body of `PUT …/nodes/{node}/lease`: the record without its id (the
/// path names it), and `state` only when it is not the default, so a ring
/// whose policy decides a joining node's state gets to decide it.
fn registration_body(record: &NodeRecord, ttl: Duration) -> serde_json::Value {
    let input = LeaseInput {
        address: record.address.clone(),
        weight: Some(u64::from(record.weight.get())),
        zone: record.zone.as_ref().map(|z| z.as_str().to_owned()),
        labels: (!record.labels.is_empty()).then(|| record.labels.clone()),
        state: (record.state != NodeState::Active).then(|| NodeStateName::from(record.state)),
        hash_key: record.hash_key.as_ref().map(|k| k.as_str().to_owned()),
        ttl: Some(format_duration(ttl)),
    };
    // Serializing plain data into memory cannot fail.
    serde_json::to_value(input).unwrap_or_default()
}

/// A node's membership of one ring, kept up by a background task. The
/// lease is released by [`Member::leave`], or best effort when the handle
/// is dropped (the task then releases it if the runtime still runs).
#[derive(Debug)]
pub struct Member {
    ring: RingName,
    node: NodeId,
    status: watch::Receiver<MemberStatus>,
    /// `true` (or dropped) tells the task to release and end.
    stop: Option<watch::Sender<bool>>,
    task: Option<JoinHandle<Result<(), ClientError>>>,
}

impl Member {
    /// Starts configuring the membership of `record` in `ring` on the
    /// servers `urls` (each entry may be a comma-separated list), with a
    /// TTL of [`DEFAULT_LEASE_TTL`] unless set.
    pub fn builder<S: AsRef<str>>(urls: &[S], ring: &str, record: NodeRecord) -> MemberBuilder {
        let urls = urls.iter().map(|u| u.as_ref().to_owned()).collect();
        Self::with_servers(Servers::Urls(urls), ring, record)
    }

    /// Like [`Member::builder`], on servers already set up (their token
    /// and TLS settings; the builder's own are then unused), sharing their
    /// connection pool.
    pub fn on_endpoints(endpoints: Endpoints, ring: &str, record: NodeRecord) -> MemberBuilder {
        Self::with_servers(Servers::Endpoints(endpoints), ring, record)
    }

    fn with_servers(servers: Servers, ring: &str, record: NodeRecord) -> MemberBuilder {
        MemberBuilder {
            servers,
            ring: ring.to_owned(),
            record,
            ttl: DEFAULT_LEASE_TTL,
            token: None,
            backoff_min: Duration::from_millis(100),
            backoff_max: Duration::from_secs(10),
            request_timeout: None,
            #[cfg(feature = "tls")]
            tls: super::tls::TlsSettings::default(),
        }
    }

    /// The ring joined.
    pub fn ring(&self) -> &RingName {
        &self.ring
    }

    /// The node this member keeps in the ring.
    pub fn node(&self) -> &NodeId {
        &self.node
    }

    /// The status now.
    pub fn status(&self) -> MemberStatus {
        self.status.borrow().clone()
    }

    /// Every status from now on (a `watch`: a slow reader sees the latest).
    pub fn subscribe(&self) -> watch::Receiver<MemberStatus> {
        self.status.clone()
    }

    /// Waits until `done` holds for the status, at most `timeout`.
    pub async fn wait_for(
        &self,
        done: impl Fn(&MemberStatus) -> bool,
        timeout: Duration,
    ) -> Result<MemberStatus, ClientError> {
        let mut rx = self.status.clone();
        let outcome = tokio::time::timeout(timeout, async {
            rx.wait_for(|s| done(s)).await.map(|s| s.clone())
        })
        .await;
        match outcome {
            Ok(Ok(s)) => Ok(s),
            // The task ended without `done` ever holding.
            Ok(Err(_)) => Err(ClientError::Closed),
            Err(_) => Err(ClientError::Timeout(timeout)),
        }
    }

    /// Leaves the ring: stops renewing and releases the lease, so ringd
    /// marks the node `left` at once. Waits for a request in flight to
    /// end first, so a registration it raced with is released too.
    /// Returns the release's failure, if ringd could not be told (the
    /// lease then expires by its TTL).
    pub async fn leave(mut self) -> Result<(), ClientError> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(true);
        }
        match self.task.take() {
            Some(task) => task.await.unwrap_or(Err(ClientError::Closed)),
            None => Ok(()),
        }
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        // Dropping the sender tells the task to release and end; it is not
        // aborted, so the release still goes out while the runtime runs.
        self.stop.take();
    }
}
