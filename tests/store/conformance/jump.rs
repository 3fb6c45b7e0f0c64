//! `jump` bucket orders through a store: kept as runs, holes included.

use std::sync::Arc;

use ringd::placement::{Algorithm, NodeId};
use ringd::ring::{BucketRun, ChangeOp, Role, Snapshot};
use ringd::store::Store;

use super::{add_node, at, first_with, name};

/// Versions 1..=4 of a `jump` ring: `node-2` (weight 2) and `node-3`
/// (weight 3) join, then `node-2` leaves, so version 4's order starts with
/// two holes: `- - node-3 node-3 node-3`.
pub(crate) fn jump_chain(ring: &str) -> Vec<Snapshot> {
    let (v1, p1) = first_with(ring, Algorithm::Jump);
    let (v2, p2) = add_node(&v1, &p1, "node-2");
    let (v3, p3) = add_node(&v2, &p2, "node-3");
    let v4 = v3
        .propose(
            &p3,
            vec![ChangeOp::Remove {
                id: NodeId::new("node-2").unwrap(),
            }],
            Some("remove node-2".into()),
            Role::Admin,
            at(3),
        )
        .expect("valid change")
        .expect("not a no-op")
        .snapshot;
    vec![v1, v2, v3, v4]
}

pub(crate) async fn jump_orders_round_trip(store: Arc<dyn Store>) {
    let versions = jump_chain("heavy");
    let node3 = Some(NodeId::new("node-3").unwrap());
    assert_eq!(
        versions[3].bucket_runs.as_ref().unwrap().runs(),
        [
            BucketRun {
                owner: None,
                len: 2
            },
            BucketRun {
                owner: node3,
                len: 3
            }
        ]
    );
    super::store_all(&*store, &versions).await;
    let ring = name("heavy");
    for v in &versions {
        let read = store.snapshot(&ring, v.version).await.unwrap();
        assert_eq!(read, *v);
        assert_eq!(
            read.placement().unwrap().fingerprint(),
            v.placement().unwrap().fingerprint()
        );
    }
    assert_eq!(store.latest(&ring).await.unwrap(), versions[3]);
}
