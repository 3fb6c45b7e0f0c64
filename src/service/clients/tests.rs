//! Acks against a manual clock: when each counts, how it is judged, and
//! the refusal of a version the ring has not reached.

use std::time::Duration;

use super::*;
use crate::ring::Clock;
use crate::service::test_support::{at, create, latest, service};

/// A library's ack of `version` with `fingerprint`.
fn report(id: &str, version: u64, fingerprint: Fingerprint) -> AckReport {
    AckReport {
        client_id: client(id),
        version,
        fingerprint,
        kind: ClientKind::Library,
        failure: None,
    }
}

fn client(id: &str) -> ClientId {
    ClientId::new(id).expect("a valid client id")
}

#[tokio::test]
async fn an_ack_counts_from_its_arrival_until_exactly_its_ttl_has_passed() {
    let (service, clock, _dir) = service(1_000);
    let ring = create(&service, "r").await;
    let fp = latest(&service, &ring).await.fingerprint;
    clock.set(at(10, 0));
    let (current, status) = service
        .clients()
        .record_ack(&ring, report("c1", 1, fp), Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(current.version, 1);
    let ack = ClientAck {
        client_id: client("c1"),
        version: 1,
        fingerprint: fp,
        last_seen: at(10, 0),
        expires_at: at(40, 0),
        kind: ClientKind::Library,
        failure: None,
    };
    let live = ClientStatus {
        ack: ack.clone(),
        lag: 0,
        on_latest: true,
        matches: Some(true),
        divergent: false,
    };
    assert_eq!(status, live);

    // One microsecond before the expiry the ack still counts ...
    clock.set(at(39, 999_999));
    let c = service.clients().of(&ring).await.unwrap();
    assert_eq!(c.clients, vec![live]);
    assert_eq!(
        c.summary,
        ConvergenceSummary {
            clients: 1,
            on_latest: 1,
            on_latest_share: Some(1.0),
            divergent: 0,
            failing: 0,
        }
    );
    // ... and at the expiry it no longer does.
    clock.set(at(40, 0));
    let c = service.clients().of(&ring).await.unwrap();
    assert_eq!(c.clients, Vec::new());
    assert_eq!(
        c.summary,
        ConvergenceSummary {
            clients: 0,
            on_latest: 0,
            on_latest_share: None,
            divergent: 0,
            failing: 0,
        }
    );
    assert_eq!(c.current.version, 1);
}

#[tokio::test]
async fn a_renewed_ack_moves_the_expiry_and_a_huge_ttl_is_capped_at_366_days() {
    let (service, clock, _dir) = service(1_000);
    let ring = create(&service, "r").await;
    let fp = latest(&service, &ring).await.fingerprint;
    service
        .clients()
        .record_ack(&ring, report("c1", 1, fp), Duration::from_secs(30))
        .await
        .unwrap();
    clock.set(at(25, 0));
    let (_, renewed) = service
        .clients()
        .record_ack(&ring, report("c1", 1, fp), Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(renewed.ack.last_seen, at(25, 0));
    assert_eq!(renewed.ack.expires_at, at(55, 0));
    clock.set(at(54, 0));
    assert_eq!(service.clients().of(&ring).await.unwrap().clients.len(), 1);

    let ten_years = Duration::from_secs(10 * 365 * 24 * 3600);
    let (_, capped) = service
        .clients()
        .record_ack(&ring, report("c2", 1, fp), ten_years)
        .await
        .unwrap();
    assert_eq!(capped.ack.expires_at, at(54 + 366 * 24 * 3600, 0));
}

#[tokio::test]
async fn acks_are_judged_against_the_ring_and_a_future_version_is_refused() {
    let (service, clock, _dir) = service(1_000);
    let ring = create(&service, "r").await;
    let v1 = latest(&service, &ring).await.fingerprint;
    let ttl = Duration::from_secs(60);
    let other: Fingerprint = "ab".repeat(32).parse().unwrap();
    service
        .clients()
        .record_ack(&ring, report("good", 1, v1), ttl)
        .await
        .unwrap();
    service
        .clients()
        .record_ack(&ring, report("odd", 1, other), ttl)
        .await
        .unwrap();
    let err = service
        .clients()
        .record_ack(&ring, report("early", 2, v1), ttl)
        .await
        .unwrap_err();
    assert!(
        matches!(
            &err,
            ServiceError::AckAheadOfRing {
                version: 2,
                current: 1,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "ring `r` is at version 1; version 2 does not exist yet: ack only versions the server sent"
    );
    clock.set(at(1, 0));
    let c = service.clients().of(&ring).await.unwrap();
    let judged: Vec<(&str, Option<bool>, bool)> = c
        .clients
        .iter()
        .map(|s| (s.ack.client_id.as_str(), s.matches, s.divergent))
        .collect();
    assert_eq!(
        judged,
        vec![("good", Some(true), false), ("odd", Some(false), true)]
    );
    assert_eq!(c.summary.divergent, 1);
    assert_eq!(c.summary.on_latest_share, Some(1.0));
    assert_eq!(clock.now(), at(1, 0));
    assert_eq!(service.clients().all().await, vec![c]);
}
