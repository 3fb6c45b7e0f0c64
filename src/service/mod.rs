//! The ring service: the rules between the HTTP API and the store.
//!
//! It keeps each ring's latest snapshot and placement in memory so reads and
//! lookups never wait on the store, turns change requests into proposals,
//! and commits them with compare-and-swap on the ring's version.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use crate::hub::Hub;
use crate::placement::Placement;
use crate::ring::{Clock, RingName};
use crate::store::leadership::{Instance, InstanceId, Leadership, SoleLeader};
use crate::store::Store;

mod apply;
mod cache;
mod convergence;
mod error;
mod freshness;
mod health_monitor;
mod idempotency;
mod leadership;
mod leases;
pub mod membership;
mod rings;
pub mod rollouts;
#[cfg(test)]
mod test_support;
mod types;

pub use crate::store::Lease;
pub use convergence::{ClientStatus, Convergence, ConvergenceSummary};
pub use error::ServiceError;
pub use leadership::Term;
pub use leases::LeaseOutcome;
pub use membership::{MembershipStatus, Transition, TransitionKind};
pub use rollouts::{RolloutControl, RolloutOutcome, RolloutRequest};
pub use types::{BaseConfig, ChangeOutcome, ChangeRequest, Created, Current, Effect};

use idempotency::KeyIndex;

/// How many older placements are kept built for lookups by version.
const VERSION_CACHE: usize = 16;

/// Attempts at a change whose caller gave no expected version, when other
/// writers keep getting in first. After the first lost attempt a writer
/// waits for its turn among every instance's writers ([`Store::queue`]),
/// so only writers that have not lost yet can still get in first.
const MAX_RETRIES: usize = 16;

/// How long an instance keeps queueing for turns on a ring after its
/// writers last met another instance's there: while writers of several
/// instances alternate, each of them asks for its turn before its first
/// attempt, instead of losing one race per change to a fresh writer.
const CONTENDED_FOR: std::time::Duration = std::time::Duration::from_secs(2);

/// The ring service.
pub struct RingService {
    store: Arc<dyn Store>,
    latest: Mutex<HashMap<RingName, Arc<Current>>>,
    older: Mutex<VecDeque<(RingName, u64, Arc<Placement>)>>,
    keys: Mutex<HashMap<RingName, KeyIndex>>,
    /// One change per ring at a time in this instance, first come first
    /// served: concurrent writers would all read, propose and send a
    /// compare-and-swap of which only one can win, and on a small machine
    /// the losers' retries starve the winner. What the queue holds is how
    /// this instance's writers have lately fared against other instances'.
    writers: Mutex<HashMap<RingName, Arc<tokio::sync::Mutex<apply::Contention>>>>,
    /// The decision-maker's last status per ring (see `membership`).
    membership: Mutex<membership::StatusTable>,
    hub: Arc<Hub>,
    clock: Arc<dyn Clock>,
    /// Whether this instance is the decision-maker (see `leadership`).
    leadership: Arc<dyn Leadership>,
    /// The plans of the rollouts driven here, by ring and id (a plan is
    /// recomputed from the base version when missing).
    plans: Mutex<
        HashMap<(RingName, crate::ring::rollout::RolloutId), Arc<crate::ring::rollout::Plan>>,
    >,
    /// Wakes the rollout driver early: a rollout started or controlled.
    rollout_wake: tokio::sync::Notify,
    /// Held while a rollout record is written and announced, and while
    /// one is read to be announced, so that watchers hear them in order
    /// (see `rollouts/observe.rs`).
    rollout_writes: tokio::sync::Mutex<()>,
    /// Rollout versions this instance committed, per ring, for the metrics.
    rollout_commits: Mutex<BTreeMap<RingName, u64>>,
    /// Confirms that reads are current (see `freshness`).
    barrier: Arc<freshness::Barrier>,
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
        Arc::new(Self {
            store,
            latest: Mutex::new(HashMap::new()),
            older: Mutex::new(VecDeque::new()),
            keys: Mutex::new(HashMap::new()),
            writers: Mutex::new(HashMap::new()),
            membership: Mutex::new(HashMap::new()),
            hub: Arc::new(Hub::new()),
            clock,
            leadership,
            plans: Mutex::new(HashMap::new()),
            rollout_wake: tokio::sync::Notify::new(),
            rollout_writes: tokio::sync::Mutex::new(()),
            rollout_commits: Mutex::new(BTreeMap::new()),
            barrier: Arc::default(),
        })
    }

    /// Where every version this service learns of is announced.
    pub fn hub(&self) -> &Arc<Hub> {
        &self.hub
    }

    /// The current time by the service's clock.
    pub fn now(&self) -> time::OffsetDateTime {
        self.clock.now()
    }
}
