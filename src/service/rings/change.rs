//! A change as it is asked for and what it did: the request, its outcome,
//! and what that outcome means for the one node a write concerns.

use std::sync::Arc;

use super::current::{BaseConfig, Current};
use crate::placement::{NodeId, Placement, PlacementDiff};
use crate::ring::{ExactLayout, IdempotencyKey, RequestedOp, Snapshot};

/// A request to change a ring.
#[derive(Debug, Clone)]
pub struct ChangeRequest {
    /// Ops applied in order as one new version.
    pub ops: Vec<RequestedOp>,
    /// Commit only if the ring is at this version.
    pub expected_version: Option<u64>,
    /// Free-text reason recorded in the snapshot.
    pub reason: Option<String>,
    /// Compute the result and the movement, commit nothing.
    pub dry_run: bool,
    /// Names this change so a retry of it is answered with the version it
    /// produced instead of being applied again; ignored for dry runs.
    pub idempotency_key: Option<IdempotencyKey>,
    /// Commit even while the ring is in a rollout (which then pauses, the
    /// ring having moved under it); without it such a change is refused.
    pub force: bool,
    /// The layout the result must have instead of the one computed: a
    /// rollout's step between two computed tables, or its walk back to an
    /// earlier version's table or bucket order. With a layout, `ops` may
    /// be empty.
    pub layout: Option<ExactLayout>,
}

impl ChangeRequest {
    /// A plain change of `ops`: at whatever version the ring is, with no
    /// reason or idempotency key, committed rather than previewed, refused
    /// during a rollout, and with the layout computed. Callers that differ
    /// set those fields over it.
    pub fn of(ops: Vec<RequestedOp>) -> Self {
        Self {
            ops,
            expected_version: None,
            reason: None,
            dry_run: false,
            idempotency_key: None,
            force: false,
            layout: None,
        }
    }
}

/// What a change request did.
// A preview carries its snapshot by value: it is built once, returned at
// once and never stored, so boxing it would only add an allocation.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum ChangeOutcome {
    /// A new version was committed.
    Committed {
        /// The new version.
        current: Arc<Current>,
        /// Movement against the previous version.
        diff: PlacementDiff,
        /// The previous version's config.
        base_config: BaseConfig,
        /// The nodes the new version added: absent from the version the
        /// change was computed against, present after it.
        created: Vec<NodeId>,
    },
    /// The change altered nothing; no version was created.
    Unchanged {
        /// The ring as it is.
        current: Arc<Current>,
    },
    /// An earlier request with the same idempotency key committed this
    /// version; nothing new was committed.
    Replayed {
        /// The version the earlier request produced.
        snapshot: Arc<Snapshot>,
        /// Its placement.
        placement: Arc<Placement>,
        /// Movement against the version before it, while that is retained.
        diff: Option<PlacementDiff>,
        /// The config of the version before it, while that is retained.
        base_config: Option<BaseConfig>,
    },
    /// Dry run: what would be committed.
    Preview {
        /// The would-be snapshot.
        snapshot: Snapshot,
        /// Movement it would cause.
        diff: PlacementDiff,
        /// The version it was computed against.
        base_version: u64,
        /// That version's config.
        base_config: BaseConfig,
    },
}

impl ChangeOutcome {
    /// The ring's version as the request left it: the version it committed
    /// (or replayed), or the one it found unchanged or previewed against.
    pub fn version(&self) -> u64 {
        match self {
            Self::Committed { current, .. } | Self::Unchanged { current } => {
                current.snapshot.version
            }
            Self::Replayed { snapshot, .. } => snapshot.version,
            Self::Preview { base_version, .. } => *base_version,
        }
    }

    /// What the request did to `node`'s ring, decided from what this
    /// request committed, never from a later read of the ring: another
    /// writer's commit meanwhile does not make it `Changed`.
    pub fn effect_on(&self, node: &NodeId) -> Effect {
        match self {
            Self::Committed { created, .. } if created.contains(node) => Effect::Created,
            Self::Committed { .. } => Effect::Changed,
            // An earlier attempt of this very request committed it.
            Self::Replayed { .. } => Effect::Changed,
            Self::Unchanged { .. } | Self::Preview { .. } => Effect::Unchanged,
        }
    }
}

/// What a request did to the ring, as seen from the one node it concerns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// It committed a version that added the node.
    Created,
    /// It committed a version (or an earlier attempt of it did).
    Changed,
    /// It committed nothing.
    Unchanged,
}
