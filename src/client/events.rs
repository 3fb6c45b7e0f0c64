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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::{Algorithm, RingConfig};
    use crate::ring::{ChangeOp, NodeRecord, RingName, Role, Snapshot};

    fn view_of(snapshot: &Snapshot) -> RingView {
        RingView::verify(snapshot.clone()).unwrap()
    }

    fn upserts(ids: &[&str]) -> Vec<ChangeOp> {
        ids.iter()
            .map(|id| ChangeOp::Upsert {
                node: NodeRecord::new(NodeId::new(*id).unwrap()),
            })
            .collect()
    }

    #[test]
    fn summary_names_added_and_removed_nodes_and_the_exact_movement() {
        let now = time::OffsetDateTime::UNIX_EPOCH;
        let name = RingName::new("r").unwrap();
        let (v1, p1) =
            Snapshot::first(name, RingConfig::new(Algorithm::Ring), Role::Anonymous, now).unwrap();
        let v2 = v1
            .propose(&p1, upserts(&["a", "b", "c"]), None, Role::Anonymous, now)
            .unwrap()
            .unwrap();
        let ops = vec![
            ChangeOp::Remove {
                id: NodeId::new("c").unwrap(),
            },
            upserts(&["d"]).remove(0),
        ];
        let v3 = v2
            .snapshot
            .propose(&v2.placement, ops, None, Role::Anonymous, now)
            .unwrap()
            .unwrap();
        let s = summarize(&view_of(&v2.snapshot), &view_of(&v3.snapshot));
        let id = |s: &str| NodeId::new(s).unwrap();
        assert_eq!(s.added, vec![id("d")]);
        assert_eq!(s.removed, vec![id("c")]);
        assert_eq!(s.moved_fraction, v3.diff.moved_fraction);
        // Every node whose share changed is listed, in id order.
        let listed: Vec<&str> = s.nodes.iter().map(|n| n.id.as_str()).collect();
        let expected: Vec<&str> = v3
            .diff
            .nodes
            .iter()
            .filter(|n| n.gained > 0.0 || n.lost > 0.0)
            .map(|n| n.id.as_str())
            .collect();
        assert_eq!(listed, expected);
        assert!(listed.contains(&"c") && listed.contains(&"d"), "{listed:?}");
    }
}
