//! The hub's health channel: who hears a transition, what is counted,
//! and what a slow subscriber loses.

use super::*;

fn change(ring: &str, node: &str, health: Option<NodeHealth>) -> HealthChange {
    let at = OffsetDateTime::from_unix_timestamp(1_750_000_000).unwrap();
    HealthChange {
        ring: RingName::new(ring).unwrap(),
        node: NodeId::new(node).unwrap(),
        health,
        previous: None,
        lease: LeaseId::from_bits(1),
        last_heartbeat: at,
        deadline: at,
    }
}

fn counts(hub: &Hub) -> Vec<(String, &'static str, u64)> {
    let t = hub.stats.health_transitions.lock().unwrap();
    t.iter()
        .map(|((r, to), n)| (r.to_string(), *to, *n))
        .collect()
}

#[test]
fn health_reaches_the_subscribers_of_its_ring_only_and_is_counted() {
    let hub = Hub::new();
    let r = RingName::new("r").unwrap();
    // Before anyone subscribes: counted, not kept.
    hub.publish_health(change("r", "a", Some(NodeHealth::Healthy)));
    let mut on_r = hub.subscribe_health(&r);
    let mut on_q = hub.subscribe_health(&RingName::new("q").unwrap());
    hub.publish_health(change("r", "a", Some(NodeHealth::Unhealthy)));
    hub.publish_health(change("r", "a", None));
    let got: Vec<HealthChange> = (0..2)
        .map(|_| on_r.try_recv().unwrap().change.clone())
        .collect();
    assert_eq!(
        got,
        vec![
            change("r", "a", Some(NodeHealth::Unhealthy)),
            change("r", "a", None)
        ]
    );
    assert!(on_r.try_recv().is_err());
    assert!(on_q.try_recv().is_err());
    // Health is not a version: the ring's head never moved.
    assert!(matches!(*hub.subscribe(&r).borrow(), Head::Unknown));
    assert_eq!(
        counts(&hub),
        vec![
            ("r".into(), "healthy", 1),
            ("r".into(), "removed", 1),
            ("r".into(), "unhealthy", 1)
        ]
    );
    hub.deleted(&r);
    assert_eq!(counts(&hub), vec![]);
}

#[test]
fn a_slow_health_subscriber_loses_the_oldest_transitions() {
    let hub = Hub::new();
    let r = RingName::new("r").unwrap();
    let mut slow = hub.subscribe_health(&r);
    for _ in 0..HEALTH_BACKLOG + 3 {
        hub.publish_health(change("r", "a", Some(NodeHealth::Healthy)));
    }
    assert!(matches!(
        slow.try_recv(),
        Err(broadcast::error::TryRecvError::Lagged(3))
    ));
    assert!(slow.try_recv().is_ok());
}
