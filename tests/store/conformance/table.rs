//! `table` rings through a store: every version keeps its whole table and
//! its moves, and reads back to the same placement.

use std::sync::Arc;

use ringd::placement::{Algorithm, NodeId, Weight};
use ringd::ring::{ChangeOp, NodeRecord, Role, Snapshot};
use ringd::store::Store;

use super::{add_node, at, first_with, name};

/// Versions 1..=3 of a `table` ring at the default 65,536 partitions and
/// three replicas: 100 nodes join in one change, then one more.
fn table_chain(ring: &str) -> Vec<Snapshot> {
    let (v1, p1) = first_with(ring, Algorithm::Table);
    let nodes = (0..100)
        .map(|i| {
            let mut r = NodeRecord::new(NodeId::new(format!("n-{i:03}")).unwrap());
            r.weight = Weight::new(1 + i % 4).unwrap();
            ChangeOp::Upsert { node: r }
        })
        .collect();
    let proposal = v1
        .propose(&p1, nodes, Some("100 nodes".into()), Role::Admin, at(1))
        .expect("valid change")
        .expect("not a no-op");
    let (v2, p2) = (proposal.snapshot, proposal.placement);
    let (v3, _) = add_node(&v2, &p2, "late");
    vec![v1, v2, v3]
}

pub(crate) async fn tables_round_trip(store: Arc<dyn Store>) {
    let versions = table_chain("parts");
    // The whole table of 65,536 × 3 two-byte indices, and moves only where
    // they are shorter than it (not for a hundred nodes joining at once).
    let body = 5 + 65_536 * 3 * 2;
    assert_eq!(versions[1].table.as_ref().unwrap().as_bytes().len(), body);
    assert!(versions[1].table_moves.is_none());
    assert!(versions[2].table_moves.is_some());
    super::store_all(&*store, &versions).await;
    let ring = name("parts");
    for v in &versions {
        let read = store.snapshot(&ring, v.version).await.unwrap();
        assert_eq!(read, *v);
        assert_eq!(read.placement().unwrap().fingerprint(), v.fingerprint);
    }
    assert_eq!(store.latest(&ring).await.unwrap(), versions[2]);
    // The moves rebuild version 3 from version 2.
    let v2 = store.snapshot(&ring, 2).await.unwrap().placement().unwrap();
    let v3 = store.snapshot(&ring, 3).await.unwrap();
    assert_eq!(
        v3.placement_from_moves(&v2).unwrap().fingerprint(),
        v3.fingerprint
    );
}
