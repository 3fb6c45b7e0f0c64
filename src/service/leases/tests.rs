//! The lease table against a manual clock: versions, deadlines, health
//! and every refusal.

use super::*;
use crate::placement::Weight;
use crate::service::test_support::{at, create, latest, service};

fn record(id: &str, weight: u64) -> NodeRecord {
    NodeRecord {
        weight: Weight::new(weight).unwrap(),
        ..NodeRecord::new(NodeId::new(id).unwrap())
    }
}

/// The version and effect an outcome reports.
fn reported(outcome: &LeaseOutcome) -> (u64, Effect) {
    (outcome.version, outcome.effect)
}

const TTL: Duration = Duration::from_secs(10);

#[tokio::test]
async fn only_a_new_or_changed_record_makes_a_version() {
    let (service, clock, _dir) = service(100);
    let ring = create(&service, "r").await;
    let outcome = service
        .leases()
        .register(&ring, record("a", 1), TTL, Role::Admin)
        .await
        .unwrap();
    assert_eq!(reported(&outcome), (2, Effect::Created));
    let first = outcome.lease;
    assert_eq!(first.deadline, at(10, 0));
    assert_eq!(first.last_heartbeat, at(0, 0));
    clock.advance(time::Duration::seconds(4));
    let outcome = service
        .leases()
        .register(&ring, record("a", 1), TTL, Role::Admin)
        .await
        .unwrap();
    assert_eq!(reported(&outcome), (2, Effect::Unchanged));
    let again = outcome.lease;
    assert_eq!(again.id, first.id, "a live lease keeps its id");
    assert_eq!(again.deadline, at(14, 0));
    let outcome = service
        .leases()
        .register(&ring, record("a", 2), TTL, Role::Admin)
        .await
        .unwrap();
    assert_eq!(reported(&outcome), (3, Effect::Changed));
    assert_eq!(outcome.lease.id, first.id);
    let current = service.rings().current(&ring).await.unwrap();
    assert_eq!(current.snapshot.version, 3);
    assert_eq!(current.snapshot.nodes, vec![record("a", 2)]);
}

#[tokio::test]
async fn health_follows_the_deadline_and_renewals_make_no_version() {
    let (service, clock, _dir) = service(100);
    let ring = create(&service, "r").await;
    let a = NodeId::new("a").unwrap();
    let lease = service
        .leases()
        .register(&ring, record("a", 1), TTL, Role::Admin)
        .await
        .unwrap()
        .lease;
    clock.set(at(10, 0));
    let outcome = service.leases().renew(&ring, &a, lease.id).await.unwrap();
    assert_eq!(reported(&outcome), (2, Effect::Unchanged));
    let renewed = outcome.lease;
    assert_eq!(renewed.deadline, at(20, 0));
    assert_eq!(renewed.last_heartbeat, at(10, 0));
    assert_eq!(latest(&service, &ring).await.version, 2);
    let snapshot = latest(&service, &ring).await;
    clock.set(at(20, 0));
    assert_eq!(service.leases().health(&snapshot)[0].0, NodeHealth::Healthy);
    clock.set(at(20, 1));
    assert_eq!(
        service.leases().health(&snapshot)[0].0,
        NodeHealth::Unhealthy
    );
    let counts = service.leases().health_counts(&snapshot);
    assert_eq!(
        counts.into_iter().collect::<Vec<_>>(),
        vec![
            (NodeHealth::Healthy, 0),
            (NodeHealth::Unhealthy, 1),
            (NodeHealth::Left, 0),
            (NodeHealth::Unmanaged, 0)
        ]
    );
    let expired = service
        .leases()
        .renew(&ring, &a, lease.id)
        .await
        .unwrap_err();
    assert_eq!(
        expired.to_string(),
        format!(
            "lease `{}` of node `a` expired at 2025-06-15T15:07:00Z; register the node again for a new lease",
            lease.id
        )
    );
    // An expired lease is replaced by a new one on registering again.
    let outcome = service
        .leases()
        .register(&ring, record("a", 1), TTL, Role::Admin)
        .await
        .unwrap();
    assert_eq!(reported(&outcome), (2, Effect::Unchanged));
    assert_ne!(outcome.lease.id, lease.id);
}

#[tokio::test]
async fn a_release_leaves_and_a_lease_is_only_its_own_nodes() {
    let (service, clock, _dir) = service(100);
    let ring = create(&service, "r").await;
    let (a, b) = (NodeId::new("a").unwrap(), NodeId::new("b").unwrap());
    let lease_a = service
        .leases()
        .register(&ring, record("a", 1), TTL, Role::Admin)
        .await
        .unwrap()
        .lease;
    service
        .leases()
        .register(&ring, record("b", 1), TTL, Role::Admin)
        .await
        .unwrap();
    let other = service
        .leases()
        .renew(&ring, &b, lease_a.id)
        .await
        .unwrap_err();
    assert!(
        matches!(&other, ServiceError::LeaseOfAnotherNode { owner, node, .. } if *owner == a && *node == b),
        "{other:?}"
    );
    let unknown = LeaseId::from_bits(7);
    let err = service
        .leases()
        .release(&ring, &a, unknown)
        .await
        .unwrap_err();
    assert!(matches!(err, ServiceError::LeaseNotFound { .. }), "{err:?}");
    clock.advance(time::Duration::seconds(3));
    let outcome = service
        .leases()
        .release(&ring, &a, lease_a.id)
        .await
        .unwrap();
    assert_eq!(reported(&outcome), (4, Effect::Changed));
    let released = outcome.lease;
    assert!(released.released);
    assert_eq!(released.deadline, at(3, 0));
    let snapshot = latest(&service, &ring).await;
    // The ring's default `on_leave: remove`: one version removes it.
    assert_eq!(snapshot.version, 4, "a release removes the node");
    assert_eq!(snapshot.nodes.len(), 1);
    let health: Vec<NodeHealth> = service
        .leases()
        .health(&snapshot)
        .into_iter()
        .map(|h| h.0)
        .collect();
    assert_eq!(health, vec![NodeHealth::Healthy]);
    let again = service
        .leases()
        .renew(&ring, &a, lease_a.id)
        .await
        .unwrap_err();
    assert!(
        matches!(again, ServiceError::LeaseNotFound { .. }),
        "{again:?}"
    );
}

#[tokio::test]
async fn a_removed_node_loses_its_lease() {
    let (service, _clock, _dir) = service(100);
    let ring = create(&service, "r").await;
    let a = NodeId::new("a").unwrap();
    let lease = service
        .leases()
        .register(&ring, record("a", 1), TTL, Role::Admin)
        .await
        .unwrap()
        .lease;
    let request = |op: crate::ring::RequestedOp| ChangeRequest::of(vec![op]);
    service
        .rings()
        .apply(
            &ring,
            request(crate::service::test_support::remove("a")),
            Role::Admin,
        )
        .await
        .unwrap();
    assert!(service.leases().of(&ring).is_empty());
    let err = service
        .leases()
        .renew(&ring, &a, lease.id)
        .await
        .unwrap_err();
    assert!(matches!(err, ServiceError::LeaseNotFound { .. }), "{err:?}");
    // Added again by an operator: no lease, so unmanaged.
    service
        .rings()
        .apply(
            &ring,
            request(crate::service::test_support::upsert("a")),
            Role::Admin,
        )
        .await
        .unwrap();
    let snapshot = latest(&service, &ring).await;
    assert_eq!(
        service.leases().health(&snapshot)[0],
        (NodeHealth::Unmanaged, None)
    );
}
