//! Rebuilding the versions of one watch response from the newest nodes
//! and the records between: every version named gets exactly the nodes
//! it was committed with.

use std::collections::BTreeMap;

use time::OffsetDateTime;

use super::*;
use crate::placement::{Algorithm, RingConfig, Weight};
use crate::ring::{ChangeOp, Role};
use crate::store::etcd::layout::BeforeImage;

fn id(s: &str) -> NodeId {
    NodeId::new(s).unwrap()
}

fn node(name: &str, weight: u64) -> NodeRecord {
    NodeRecord {
        weight: Weight::new(weight).unwrap(),
        ..NodeRecord::new(id(name))
    }
}

fn by_id(nodes: &[NodeRecord]) -> BTreeMap<NodeId, NodeRecord> {
    nodes.iter().map(|n| (n.id.clone(), n.clone())).collect()
}

/// What the store writes for `next` on top of `previous`: the record of
/// every node that changed, as it was before.
fn record(previous: &Snapshot, next: &Snapshot) -> VersionRecord {
    let mut old = by_id(&previous.nodes);
    let mut before = Vec::new();
    for n in &next.nodes {
        let was = old.remove(&n.id);
        if was.as_ref() != Some(n) {
            before.push(BeforeImage {
                id: n.id.clone(),
                node: was,
            });
        }
    }
    before.extend(
        old.into_iter()
            .map(|(id, n)| BeforeImage { id, node: Some(n) }),
    );
    VersionRecord::of(next, before)
}

/// Versions 1 to 6 of one ring: two nodes added, one re-weighted, one
/// removed, one added, then two at once.
fn versions() -> Vec<Snapshot> {
    let now = OffsetDateTime::UNIX_EPOCH;
    let (first, mut placement) = Snapshot::first(
        RingName::new("r").unwrap(),
        RingConfig::new(Algorithm::Ring),
        Role::Admin,
        now,
    )
    .unwrap();
    let changes: Vec<Vec<ChangeOp>> = vec![
        vec![
            ChangeOp::Upsert { node: node("a", 1) },
            ChangeOp::Upsert { node: node("b", 1) },
        ],
        vec![ChangeOp::Upsert { node: node("a", 3) }],
        vec![ChangeOp::Remove { id: id("b") }],
        vec![ChangeOp::Upsert { node: node("c", 2) }],
        vec![
            ChangeOp::Remove { id: id("a") },
            ChangeOp::Upsert { node: node("b", 5) },
        ],
    ];
    let mut out = vec![first];
    for ops in changes {
        let last = out.last().unwrap();
        let next = last
            .propose(&placement, ops, None, Role::Admin, now)
            .unwrap()
            .unwrap();
        placement = next.placement;
        out.push(next.snapshot);
    }
    out
}

/// The records of versions `from..=to` and the nodes of `to`.
fn stored(
    all: &[Snapshot],
    from: u64,
    to: u64,
) -> (BTreeMap<NodeId, NodeRecord>, Vec<VersionRecord>) {
    let records = (from..=to)
        .map(|v| {
            let i = v as usize - 1;
            match i {
                0 => VersionRecord::of(&all[0], Vec::new()),
                _ => record(&all[i - 1], &all[i]),
            }
        })
        .collect();
    (by_id(&all[to as usize - 1].nodes), records)
}

#[test]
fn every_named_version_has_the_nodes_it_was_committed_with() {
    let all = versions();
    let ring = RingName::new("r").unwrap();
    let (nodes, records) = stored(&all, 2, 6);
    let named: Vec<(i64, u64)> = (2..=6).map(|v| (100 + v as i64, v)).collect();
    let rebuilt = rebuild_from(&ring, nodes, records, &named).unwrap();
    assert_eq!(rebuilt.len(), 5);
    for ((revision, snapshot), v) in rebuilt.iter().zip(2u64..) {
        assert_eq!(*revision, 100 + v as i64);
        assert_eq!(snapshot, &all[v as usize - 1], "version {v}");
    }
    let ids = |s: &Snapshot| s.nodes.iter().map(|n| n.id.to_string()).collect::<Vec<_>>();
    assert_eq!(ids(&rebuilt[2].1), ["a"]);
    assert_eq!(rebuilt[2].1.nodes[0].weight.get(), 3);
    assert_eq!(ids(&rebuilt[4].1), ["b", "c"]);
}

#[test]
fn only_the_named_versions_are_rebuilt() {
    let all = versions();
    let ring = RingName::new("r").unwrap();
    let (nodes, records) = stored(&all, 3, 6);
    let named = [(7, 3), (9, 5), (10, 6)];
    let rebuilt = rebuild_from(&ring, nodes, records, &named).unwrap();
    let got: Vec<(i64, u64)> = rebuilt.iter().map(|(r, s)| (*r, s.version)).collect();
    assert_eq!(got, named);
    assert_eq!(rebuilt[1].1, all[4]);
}

#[test]
fn a_named_version_without_its_record_is_an_error() {
    let all = versions();
    let ring = RingName::new("r").unwrap();
    let (nodes, records) = stored(&all, 4, 6);
    let e = rebuild_from(&ring, nodes, records, &[(1, 3), (2, 6)]).unwrap_err();
    assert!(
        e.to_string()
            .contains("commits name 2 versions, 1 of them retained"),
        "{e}"
    );
}
