//! The monitor's diff against a manual clock: exactly which transitions
//! each look reports, and that a look without a transition reports none.

use std::time::Duration;

use time::OffsetDateTime;

use super::*;
use crate::ring::{LeaseId, NodeRecord, Role};
use crate::service::test_support::{at, create, latest, remove, service, upsert};
use crate::service::ChangeRequest;
use crate::service::RingService;

const TTL: Duration = Duration::from_secs(10);

fn node(id: &str) -> NodeId {
    NodeId::new(id).unwrap()
}

async fn register(service: &RingService, ring: &RingName, id: &str) -> Lease {
    let record = NodeRecord::new(node(id));
    service
        .leases()
        .register(ring, record, TTL, Role::Admin)
        .await
        .unwrap()
        .lease
}

async fn change(service: &RingService, ring: &RingName, op: crate::ring::RequestedOp) {
    let request = ChangeRequest::of(vec![op]);
    service
        .rings()
        .apply(ring, request, Role::Admin)
        .await
        .unwrap();
}

#[allow(clippy::too_many_arguments)]
fn expect(
    ring: &RingName,
    id: &str,
    health: Option<NodeHealth>,
    previous: Option<NodeHealth>,
    lease: LeaseId,
    last_heartbeat: OffsetDateTime,
    deadline: OffsetDateTime,
) -> HealthChange {
    HealthChange {
        ring: ring.clone(),
        node: node(id),
        health,
        previous,
        lease,
        last_heartbeat,
        deadline,
    }
}

use NodeHealth::{Healthy, Unhealthy};

#[tokio::test]
async fn each_transition_is_reported_once_and_renewals_are_not_transitions() {
    let (service, clock, _dir) = service(100);
    let ring = create(&service, "r").await;
    let mut monitor = HealthMonitor::new();
    assert_eq!(service.leases().health_transitions(&mut monitor), vec![]);

    let first = register(&service, &ring, "a").await;
    let seen = service.leases().health_transitions(&mut monitor);
    assert_eq!(
        seen,
        vec![expect(
            &ring,
            "a",
            Some(Healthy),
            None,
            first.id,
            at(0, 0),
            at(10, 0)
        )]
    );
    assert_eq!(service.leases().health_transitions(&mut monitor), vec![]);

    clock.set(at(5, 0));
    service
        .leases()
        .renew(&ring, &node("a"), first.id)
        .await
        .unwrap();
    assert_eq!(
        service.leases().health_transitions(&mut monitor),
        vec![],
        "a renewal"
    );

    clock.set(at(15, 0));
    assert_eq!(
        service.leases().health_transitions(&mut monitor),
        vec![],
        "at the deadline"
    );
    clock.set(at(15, 1));
    assert_eq!(
        service.leases().health_transitions(&mut monitor),
        vec![expect(
            &ring,
            "a",
            Some(Unhealthy),
            Some(Healthy),
            first.id,
            at(5, 0),
            at(15, 0)
        )]
    );
    assert_eq!(service.leases().health_transitions(&mut monitor), vec![]);

    clock.set(at(16, 0));
    let second = register(&service, &ring, "a").await;
    assert_ne!(second.id, first.id, "an expired lease is not renewed");
    assert_eq!(
        service.leases().health_transitions(&mut monitor),
        vec![expect(
            &ring,
            "a",
            Some(Healthy),
            Some(Unhealthy),
            second.id,
            at(16, 0),
            at(26, 0)
        )]
    );

    clock.set(at(17, 0));
    service
        .leases()
        .release(&ring, &node("a"), second.id)
        .await
        .unwrap();
    assert_eq!(
        service.leases().health_transitions(&mut monitor),
        // The ring's default `on_leave: remove` removed the released node.
        vec![expect(
            &ring,
            "a",
            None,
            Some(Healthy),
            second.id,
            at(16, 0),
            at(26, 0)
        )]
    );
    clock.set(at(30, 0));
    assert_eq!(
        service.leases().health_transitions(&mut monitor),
        vec![],
        "removed stays removed"
    );

    let third = register(&service, &ring, "a").await;
    assert_eq!(
        service.leases().health_transitions(&mut monitor),
        vec![expect(
            &ring,
            "a",
            Some(Healthy),
            None,
            third.id,
            at(30, 0),
            at(40, 0)
        )]
    );
    // Registered, removed on release, registered again.
    assert_eq!(latest(&service, &ring).await.version, 4);
}

#[tokio::test]
async fn operator_nodes_are_not_followed_and_a_removed_node_leaves() {
    let (service, clock, _dir) = service(100);
    let ring = create(&service, "r").await;
    let mut monitor = HealthMonitor::new();
    change(&service, &ring, upsert("b")).await;
    assert_eq!(
        service.leases().health_transitions(&mut monitor),
        vec![],
        "unmanaged"
    );

    // An operator's node that registers itself starts being followed.
    let b = register(&service, &ring, "b").await;
    let a = register(&service, &ring, "a").await;
    assert_eq!(
        service.leases().health_transitions(&mut monitor),
        vec![
            expect(&ring, "a", Some(Healthy), None, a.id, at(0, 0), at(10, 0)),
            expect(&ring, "b", Some(Healthy), None, b.id, at(0, 0), at(10, 0)),
        ]
    );
    clock.set(at(2, 0));
    change(&service, &ring, remove("b")).await;
    change(&service, &ring, remove("a")).await;
    assert_eq!(
        service.leases().health_transitions(&mut monitor),
        vec![
            expect(&ring, "a", None, Some(Healthy), a.id, at(0, 0), at(10, 0)),
            expect(&ring, "b", None, Some(Healthy), b.id, at(0, 0), at(10, 0)),
        ]
    );
    // Added again by an operator, it is unmanaged: nothing to report.
    change(&service, &ring, upsert("a")).await;
    assert_eq!(service.leases().health_transitions(&mut monitor), vec![]);
}

#[tokio::test]
async fn a_lease_that_expired_and_came_back_between_two_looks_is_reported() {
    let (service, clock, _dir) = service(100);
    let ring = create(&service, "r").await;
    let mut monitor = HealthMonitor::new();
    let first = register(&service, &ring, "a").await;
    service.leases().health_transitions(&mut monitor);
    clock.set(at(11, 0));
    let second = register(&service, &ring, "a").await;
    assert_eq!(
        service.leases().health_transitions(&mut monitor),
        vec![expect(
            &ring,
            "a",
            Some(Healthy),
            Some(Healthy),
            second.id,
            at(11, 0),
            at(21, 0)
        )]
    );
    assert_ne!(first.id, second.id);
}

#[tokio::test]
async fn rings_are_looked_at_in_name_order_and_a_deleted_ring_is_forgotten_silently() {
    let (service, _clock, _dir) = service(100);
    let z = create(&service, "z").await;
    let r = create(&service, "r").await;
    let mut monitor = HealthMonitor::new();
    let on_z = register(&service, &z, "a").await;
    let on_r = register(&service, &r, "a").await;
    assert_eq!(
        service.leases().health_transitions(&mut monitor),
        vec![
            expect(&r, "a", Some(Healthy), None, on_r.id, at(0, 0), at(10, 0)),
            expect(&z, "a", Some(Healthy), None, on_z.id, at(0, 0), at(10, 0)),
        ]
    );
    service.delete_ring(&z, None).await.unwrap();
    assert_eq!(service.leases().health_transitions(&mut monitor), vec![]);
    // Created again, its nodes are new.
    create(&service, "z").await;
    let again = register(&service, &z, "a").await;
    assert_eq!(
        service.leases().health_transitions(&mut monitor),
        vec![expect(
            &z,
            "a",
            Some(Healthy),
            None,
            again.id,
            at(0, 0),
            at(10, 0)
        )]
    );
}

#[test]
fn a_node_seen_without_its_lease_first_is_new_when_its_lease_appears() {
    // The commit of a registration is visible a moment before its lease.
    let ring = RingName::new("r").unwrap();
    let mut monitor = HealthMonitor::new();
    let none = monitor.observe(&ring, [(node("a"), NodeHealth::Unmanaged, None)]);
    assert_eq!(none, vec![]);
    let lease = Lease {
        id: LeaseId::from_bits(7),
        ttl: TTL,
        deadline: at(10, 0),
        last_heartbeat: at(0, 0),
        released: false,
    };
    let seen = monitor.observe(&ring, [(node("a"), Healthy, Some(lease))]);
    assert_eq!(
        seen,
        vec![expect(
            &ring,
            "a",
            Some(Healthy),
            None,
            LeaseId::from_bits(7),
            at(0, 0),
            at(10, 0)
        )]
    );
}

#[tokio::test]
async fn a_release_that_drains_is_left_and_a_new_registration_is_healthy_again() {
    let (service, clock, _dir) = service(100);
    let ring = RingName::new("r").unwrap();
    let policy = crate::ring::MembershipPolicy {
        on_leave: crate::ring::OnLeave::Drain,
        ..Default::default()
    };
    service
        .rings()
        .create_with(
            ring.clone(),
            crate::placement::RingConfig::new(crate::placement::Algorithm::Ring),
            policy,
            Role::Admin,
        )
        .await
        .unwrap();
    let mut monitor = HealthMonitor::new();
    let first = register(&service, &ring, "a").await;
    assert_eq!(service.leases().health_transitions(&mut monitor).len(), 1);

    clock.set(at(1, 0));
    service
        .leases()
        .release(&ring, &node("a"), first.id)
        .await
        .unwrap();
    assert_eq!(
        service.leases().health_transitions(&mut monitor),
        vec![expect(
            &ring,
            "a",
            Some(NodeHealth::Left),
            Some(Healthy),
            first.id,
            at(0, 0),
            at(1, 0)
        )]
    );
    // Drained, not removed: one version for the release.
    let current = service.rings().current(&ring).await.unwrap();
    assert_eq!(current.snapshot.version, 3);
    assert_eq!(
        current.snapshot.nodes[0].state,
        crate::placement::NodeState::Draining
    );

    clock.set(at(5, 0));
    let second = register(&service, &ring, "a").await;
    assert_eq!(
        service.leases().health_transitions(&mut monitor),
        vec![expect(
            &ring,
            "a",
            Some(Healthy),
            Some(NodeHealth::Left),
            second.id,
            at(5, 0),
            at(15, 0)
        )]
    );
}
