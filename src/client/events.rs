//! What the client tells the application about each version it applies.

use std::sync::Arc;

use crate::placement::{NodeId, NodeMovement};

use super::view::RingView;

/// Movement between the version the client held and the one it applied,
/// computed locally from the two placements (exact, not sampled).
#[derive(Debug, Clone, PartialEq)]
pub struct DiffSummary {
    /// Share of all keys whose owner changed.
    pub moved_fraction: f64,
    /// Nodes that gained or lost keyspace, in id order.
    pub nodes: Vec<NodeMovement>,
    /// Nodes active now that were not before.
    pub added: Vec<NodeId>,
    /// Nodes active before that are not now.
    pub removed: Vec<NodeId>,
}

/// A version the client verified and now routes on.
#[derive(Debug, Clone)]
pub struct VersionChange {
    /// The version held before, if any.
    pub from: Option<u64>,
    /// The version applied.
    pub to: u64,
    /// The server said the client's history no longer applies (the ring was
    /// recreated, or the client fell behind the retained history), so
    /// versions between `from` and `to` may have been skipped.
    pub reset: bool,
    /// Movement against the placement held before; `None` for the first.
    pub diff: Option<DiffSummary>,
    /// The view now in use.
    pub view: Arc<RingView>,
}

/// Something the client's watch did.
#[derive(Debug, Clone)]
pub enum RingEvent {
    /// A new version was verified and swapped in.
    Applied(VersionChange),
    /// A version was refused and the previous one kept: it failed
    /// fingerprint verification or the placement core rejected it.
    Rejected {
        /// The refused version.
        version: u64,
        /// Why, for a person.
        error: String,
    },
    /// The server says the ring was deleted. The client keeps routing on
    /// the last version it had until a new ring of the same name appears.
    Deleted,
}

/// Summarises the movement from `before` to `after`.
pub(crate) fn summarize(before: &RingView, after: &RingView) -> DiffSummary {
    let diff = before.placement().diff(after.placement());
    let (b, a) = (before.placement(), after.placement());
    let added = a
        .nodes()
        .iter()
        .filter(|n| b.index_of(&n.id).is_none())
        .map(|n| n.id.clone())
        .collect();
    let removed = b
        .nodes()
        .iter()
        .filter(|n| a.index_of(&n.id).is_none())
        .map(|n| n.id.clone())
        .collect();
    DiffSummary {
        moved_fraction: diff.moved_fraction,
        nodes: diff
            .nodes
            .into_iter()
            .filter(|n| n.gained > 0.0 || n.lost > 0.0)
            .collect(),
        added,
        removed,
    }
}
