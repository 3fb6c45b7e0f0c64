//! The ring service: the rules between the HTTP API and the store.
//!
//! [`RingService`] is composed of parts, each owning its own state, each
//! reached through an accessor:
//!
//! - [`Rings`] (`rings/`): every ring's latest version and placement in
//!   memory, so reads and lookups never wait on the store; changes, turned
//!   into proposals and committed with compare-and-swap on the ring's
//!   version, with each instance's writers queued per ring and retries
//!   recognised by their idempotency keys;
//! - [`Freshness`] (`freshness.rs`): whether an answer is current;
//! - [`Clients`] (`clients/`): client acks and convergence;
//! - [`Leases`] (`leases/`): leases of self-registered nodes, their
//!   health and its monitor, and the decision-maker's membership changes;
//! - [`Rollouts`] (`rollouts/`): rollouts, their driver and their events.
//!
//! Each part uses only the parts listed before it. What concerns them all
//! is here: building them, deleting a ring (which every part forgets),
//! following the store's events, and the background loops, which
//! [`RingService::start`] starts in one [`Background`] runner.

use std::sync::Arc;

use crate::hub::Hub;
use crate::ring::{Clock, RingName};
use crate::store::leadership::{Instance, InstanceId, Leadership, SoleLeader};
use crate::store::{Store, StoreEvent};

pub mod background;
pub mod clients;
mod error;
pub mod freshness;
mod leadership;
pub mod leases;
pub mod rings;
pub mod rollouts;
#[cfg(test)]
mod test_support;

pub use crate::store::Lease;
pub use background::{Background, Stop};
pub use clients::{AckReport, ClientStatus, Clients, Convergence, ConvergenceSummary};
pub use error::ServiceError;
pub use freshness::Freshness;
pub use leadership::Term;
pub use leases::membership::{Blocked, GuardRule, MembershipStatus, Transition, TransitionKind};
pub use leases::{LeaseOutcome, Leases};
pub use rings::{BaseConfig, ChangeOutcome, ChangeRequest, Created, Current, Effect, Rings};
pub use rollouts::{RolloutControl, RolloutOutcome, RolloutRequest, Rollouts};

/// The ring service.
pub struct RingService {
    store: Arc<dyn Store>,
    hub: Arc<Hub>,
    clock: Arc<dyn Clock>,
    /// Whether this instance is the decision-maker (see `leadership.rs`).
    leadership: Arc<dyn Leadership>,
    rings: Arc<Rings>,
    freshness: Arc<Freshness>,
    clients: Arc<Clients>,
    leases: Arc<Leases>,
    rollouts: Arc<Rollouts>,
}

impl RingService {
    /// A service over `store` that reads the time from `clock`: commit
    /// times, ack times and ack expiry all come from it.
    pub fn with_clock(store: Arc<dyn Store>, clock: Arc<dyn Clock>) -> Arc<Self> {
        let me = Instance {
            id: InstanceId::random(),
            url: String::new(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            started_at: clock.now(),
        };
        Self::with_leadership(store, clock, SoleLeader::new(me))
    }

    /// A service over `store` whose automatic changes are made while, and
    /// only while, `leadership` says this instance holds office.
    pub fn with_leadership(
        store: Arc<dyn Store>,
        clock: Arc<dyn Clock>,
        leadership: Arc<dyn Leadership>,
    ) -> Arc<Self> {
        let hub = Arc::new(Hub::new());
        let rings = Arc::new(Rings::new(
            store.clone(),
            hub.clone(),
            clock.clone(),
            leadership.clone(),
        ));
        let freshness = Arc::new(Freshness::new(store.clone(), rings.clone()));
        let clients = Arc::new(Clients::new(store.clone(), clock.clone(), rings.clone()));
        let leases = Arc::new(Leases::new(
            store.clone(),
            clock.clone(),
            hub.clone(),
            leadership.clone(),
            rings.clone(),
            freshness.clone(),
        ));
        let rollouts = Arc::new(Rollouts::new(
            store.clone(),
            clock.clone(),
            hub.clone(),
            leadership.clone(),
            rings.clone(),
            clients.clone(),
        ));
        Arc::new(Self {
            store,
            hub,
            clock,
            leadership,
            rings,
            freshness,
            clients,
            leases,
            rollouts,
        })
    }

    /// The rings and their changes.
    pub fn rings(&self) -> &Rings {
        &self.rings
    }

    /// Whether answers are current.
    pub fn freshness(&self) -> &Freshness {
        &self.freshness
    }

    /// Client acks and convergence.
    pub fn clients(&self) -> &Clients {
        &self.clients
    }

    /// Leases, health and the automatic membership changes.
    pub fn leases(&self) -> &Leases {
        &self.leases
    }

    /// Rollouts.
    pub fn rollouts(&self) -> &Rollouts {
        &self.rollouts
    }

    /// Where every version this service learns of is announced.
    pub fn hub(&self) -> &Arc<Hub> {
        &self.hub
    }

    /// The current time by the service's clock.
    pub fn now(&self) -> time::OffsetDateTime {
        self.clock.now()
    }

    /// Deletes a ring and its history; with `expected_version`, only if
    /// the ring is still at that version. Every part forgets it.
    pub async fn delete_ring(
        &self,
        ring: &RingName,
        expected_version: Option<u64>,
    ) -> Result<(), ServiceError> {
        self.rings.delete(ring, expected_version).await?;
        self.forget(ring);
        Ok(())
    }

    /// Starts the service's background loops in `background`, which stops
    /// them: following the store's events, following whether the store
    /// is current, the health monitor, the decision-maker's membership
    /// changes and rollouts, and the look at the rollouts watchers follow.
    /// Call it once per service.
    pub fn start(self: &Arc<Self>, background: &mut Background) {
        let me = self.clone();
        background.spawn("store events", |stop| me.follow(stop));
        let freshness = self.freshness.clone();
        background.spawn("currency", |stop| freshness.follow(stop));
        let leases = self.leases.clone();
        background.spawn("health monitor", |stop| leases.monitor_health(stop));
        let leases = self.leases.clone();
        background.spawn("membership", |stop| leases.run_membership(stop));
        let rollouts = self.rollouts.clone();
        background.spawn("rollout driver", |stop| rollouts.drive_all(stop));
        let rollouts = self.rollouts.clone();
        background.spawn("rollout events", |stop| rollouts.observe(stop));
    }

    /// Applies the store's events to the service until the event stream
    /// closes or `stop`: each version committed anywhere to the cache,
    /// each deletion to every part.
    async fn follow(self: Arc<Self>, stop: Stop) {
        use tokio::sync::broadcast::error::RecvError;
        let mut events = self.store.subscribe();
        loop {
            let event = tokio::select! {
                () = stop.cancelled() => return,
                event = events.recv() => event,
            };
            match event {
                Ok(StoreEvent::Committed(s)) => self.rings.learn(s),
                Ok(StoreEvent::Deleted(ring)) => self.forget(&ring),
                // Missed events: what the cache holds may be behind.
                Err(RecvError::Lagged(_)) => {
                    for ring in self.rings.catch_up().await {
                        self.forget(&ring);
                    }
                }
                Err(RecvError::Closed) => return,
            }
        }
    }

    /// Forgets a deleted ring in every part.
    fn forget(&self, ring: &RingName) {
        self.rings.forget(ring);
        self.leases.forget_ring(ring);
        self.rollouts.forget_ring(ring);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::test_support::service;
    use super::*;

    #[tokio::test]
    async fn every_loop_the_service_starts_returns_when_told_to_stop() {
        let (service, _clock, _dir) = service(10);
        let mut background = Background::new();
        service.start(&mut background);
        // Each has reached its first pause.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let aborted = background.stop_within(Duration::from_secs(2)).await;
        assert_eq!(aborted, Vec::<&str>::new());
    }
}
