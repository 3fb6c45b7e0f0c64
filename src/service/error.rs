//! Why the service refused a request.

use thiserror::Error;

use crate::placement::NodeId;
use crate::ring::{LeaseId, RingError, RingName, Snapshot};
use crate::store::StoreError;

/// Why the service refused a request.
#[derive(Debug, Error)]
pub enum ServiceError {
    /// Invalid change or node data.
    #[error(transparent)]
    Ring(#[from] RingError),
    /// The store refused or failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// `PUT /v1/rings/{ring}` with a config different from the existing one.
    #[error(
        "ring `{ring}` already exists with a different config; change it with an update_config (or set_config) op on POST /v1/rings/{ring}/changes"
    )]
    ConfigConflict {
        /// The ring.
        ring: RingName,
        /// Its current snapshot.
        existing: Box<Snapshot>,
    },
    /// The ring is not at the version the caller expected.
    #[error("ring is at version {current}, not the expected {expected}")]
    PreconditionFailed {
        /// What the caller expected.
        expected: u64,
        /// The actual version.
        current: u64,
    },
    /// An ack names a version the ring has not reached.
    #[error("ring `{ring}` is at version {current}; version {version} does not exist yet: ack only versions the server sent")]
    AckAheadOfRing {
        /// The ring.
        ring: RingName,
        /// The version acked.
        version: u64,
        /// The ring's current version.
        current: u64,
    },
    /// No lease of that id for that node: never made, or forgotten.
    #[error("node `{node}` of ring `{ring}` holds no lease `{lease}`; register it again with PUT /v1/rings/{ring}/nodes/{node}/lease")]
    LeaseNotFound {
        /// The ring.
        ring: RingName,
        /// The node named.
        node: NodeId,
        /// The lease named.
        lease: LeaseId,
    },
    /// The lease expired before this renewal.
    #[error(
        "lease `{lease}` of node `{node}` expired at {}; register the node again for a new lease",
        rfc3339(deadline)
    )]
    LeaseExpired {
        /// The node.
        node: NodeId,
        /// The lease.
        lease: LeaseId,
        /// When it expired.
        deadline: time::OffsetDateTime,
    },
    /// The lease was released (the node left).
    #[error(
        "lease `{lease}` of node `{node}` was released; register the node again for a new lease"
    )]
    LeaseReleased {
        /// The node.
        node: NodeId,
        /// The lease.
        lease: LeaseId,
    },
    /// The lease belongs to a different node than the path names.
    #[error(
        "lease `{lease}` belongs to node `{owner}`, not `{node}`; each node renews its own lease"
    )]
    LeaseOfAnotherNode {
        /// The lease.
        lease: LeaseId,
        /// The node that holds it.
        owner: NodeId,
        /// The node the request named.
        node: NodeId,
    },
    /// An override names a node with no automatic transition due.
    #[error("node `{node}` of ring `{ring}` has no automatic transition due, so there is nothing to override; GET /v1/rings/{ring} lists the pending ones under membership.pending")]
    NoTransitionDue {
        /// The ring.
        ring: RingName,
        /// The node.
        node: NodeId,
    },
    /// The rollout cannot be planned as asked.
    #[error(transparent)]
    Rollout(#[from] crate::ring::rollout::RolloutError),
    /// A control that the rollout's state does not allow.
    #[error("rollout {id} of ring `{ring}` is {state}: cannot {action} it, since {why}")]
    RolloutState {
        /// The ring.
        ring: RingName,
        /// The rollout.
        id: crate::ring::rollout::RolloutId,
        /// The control asked for.
        action: &'static str,
        /// Its state.
        state: &'static str,
        /// Why not.
        why: String,
    },
    /// A rollout's plan, recomputed from its base version, no longer gives
    /// the steps it was started with (a different ringd version computes
    /// differently).
    #[error("rollout {0}'s plan, recomputed, gives other steps than it was started with; abort it and start it again")]
    PlanChanged(crate::ring::rollout::RolloutId),
    /// Other writers kept winning.
    #[error("the ring changed {0} times while this change was being applied; retry")]
    TooMuchContention(usize),
}

/// `t` as RFC 3339, as timestamps are written everywhere else.
fn rfc3339(t: &time::OffsetDateTime) -> String {
    t.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| t.to_string())
}
