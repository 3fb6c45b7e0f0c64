//! Leases on etcd across instances: a lease made through one instance
//! renews through another with the same id, its expiry and its release
//! are seen everywhere, refusals are the same as on SQLite, and a lease
//! outlives the loss of the etcd leader.
#![cfg(feature = "server")]

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::support::api::{expect_json, TestApi};
use crate::support::etcd_cluster::EtcdCluster;
use crate::support::etcd_pair::EtcdPair;
use crate::support::problem::{assert_problem, Problem};
use crate::support::ringd::Ringd;

/// How long a lease event may take to reach the other instance (through
/// its etcd watch) on this slow, shared VM.
const ACROSS: Duration = Duration::from_secs(10);

/// A test's etcd and two instances on it, with ring `r` holding the
/// operator's node `a`.
async fn pair_with_ring(prefix: &str) -> EtcdPair {
    let pair = EtcdPair::start(prefix).await;
    pair.a.ring_with("r", &["a"]).await;
    pair
}

async fn register(s: &TestApi, node: &str, body: Value) -> Value {
    let r = s
        .put(&format!("/v1/rings/r/nodes/{node}/lease"), body)
        .await;
    assert!(r.status().is_success(), "register {node}: {}", r.status());
    r.json().await.unwrap()
}

async fn renew(s: &TestApi, node: &str, id: &str) -> reqwest::Response {
    s.req(
        Method::POST,
        &format!("/v1/rings/r/nodes/{node}/lease/{id}/renew"),
    )
    .send()
    .await
    .unwrap()
}

/// `node`'s health as `s` reports it in the node list (`absent` while
/// `s` has not yet heard of a version holding it).
async fn health_of(s: &TestApi, node: &str) -> String {
    let list = s.get_ok("/v1/rings/r/nodes").await;
    let found = list["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["id"] == node);
    found
        .map_or("absent", |n| n["health"].as_str().unwrap())
        .to_owned()
}

/// Polls until `node` has `health` on `s`; panics after `limit`.
async fn await_health(s: &TestApi, node: &str, health: &str, limit: Duration) -> Instant {
    let deadline = Instant::now() + limit;
    loop {
        let now = health_of(s, node).await;
        if now == health {
            return Instant::now();
        }
        assert!(
            Instant::now() < deadline,
            "{node} still {now}, not {health}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_lease_made_through_one_instance_renews_through_the_other() {
    let p = pair_with_ring("/leases-across").await;
    let made = register(&p.a, "c", json!({"address": "10.0.0.3:1", "ttl": "10s"})).await;
    let id = made["lease_id"].as_str().unwrap().to_owned();
    assert_eq!(
        (&made["version"], &made["changed"]),
        (&json!(3), &json!(true))
    );
    // At once through B, whether or not B's watch has brought it yet.
    let renewed = expect_json(renew(&p.b, "c", &id).await, StatusCode::OK).await;
    assert_eq!(
        (
            &renewed["lease_id"],
            &renewed["health"],
            &renewed["version"]
        ),
        (&json!(id), &json!("healthy"), &json!(3))
    );
    let again = expect_json(renew(&p.a, "c", &id).await, StatusCode::OK).await;
    assert_eq!(again["lease_id"], json!(id));
    // The same record through B: a renewal of the same lease, no version.
    let same = register(&p.b, "c", json!({"address": "10.0.0.3:1", "ttl": "10s"})).await;
    assert_eq!(
        (&same["lease_id"], &same["changed"], &same["version"]),
        (&json!(id), &json!(false), &json!(3))
    );
    for s in [&p.a, &p.b] {
        await_health(s, "c", "healthy", ACROSS).await;
        assert_eq!(health_of(s, "a").await, "unmanaged");
        assert_eq!(s.state_of("r").await.0, 3, "renewals make no version");
    }
    assert_eq!(
        p.b.get_ok("/v1/rings/r").await["health"],
        json!({"healthy": 1, "unhealthy": 0, "left": 0, "unmanaged": 1})
    );

    // The refusals of SQLite, through either instance.
    let unknown = "0000000000000000000000000000002a";
    for s in [&p.a, &p.b] {
        assert_problem(
            renew(s, "c", unknown).await,
            Problem::status(404)
                .slug("lease-not-found")
                .field("lease_id")
                .detail_has(&format!("node `c` of ring `r` holds no lease `{unknown}`")),
        )
        .await;
        assert_problem(
            renew(s, "a", &id).await,
            Problem::status(409)
                .slug("conflict")
                .field("lease_id")
                .detail_has(&format!("lease `{id}` belongs to node `c`, not `a`")),
        )
        .await;
        let r = s.delete(&format!("/v1/rings/r/nodes/a/lease/{id}")).await;
        assert_problem(r, Problem::status(409).slug("conflict").field("lease_id")).await;
    }
    // None of them changed anything.
    let still = expect_json(renew(&p.b, "c", &id).await, StatusCode::OK).await;
    assert_eq!(still["lease_id"], json!(id));
}

#[tokio::test]
async fn an_expired_lease_is_unhealthy_on_both_instances() {
    let p = pair_with_ring("/leases-expiry").await;
    let made = register(&p.a, "c", json!({"ttl": "2s"})).await;
    let id = made["lease_id"].as_str().unwrap().to_owned();
    await_health(&p.b, "c", "healthy", ACROSS).await;
    expect_json(renew(&p.b, "c", &id).await, StatusCode::OK).await;
    let last = Instant::now();
    // No more renewals: etcd expires the lease and both instances hear.
    let seen_a = await_health(&p.a, "c", "unhealthy", ACROSS).await;
    let seen_b = await_health(&p.b, "c", "unhealthy", ACROSS).await;
    for seen in [seen_a, seen_b] {
        let after = seen - last;
        // The TTL, etcd's expiry check (every 500 ms) and the watch.
        assert!(after >= Duration::from_secs(2), "unhealthy after {after:?}");
        assert!(
            after < Duration::from_secs(5),
            "unhealthy only after {after:?}"
        );
    }
    assert_problem(
        renew(&p.b, "c", &id).await,
        Problem::status(404)
            .slug("lease-not-found")
            .field("lease_id")
            .detail_has(&format!("lease `{id}` of node `c` expired at")),
    )
    .await;
    assert_eq!(
        p.a.get_ok("/v1/rings/r").await["health"],
        json!({"healthy": 0, "unhealthy": 1, "left": 0, "unmanaged": 1})
    );
    // Registering again is a new lease, healthy everywhere.
    let back = register(&p.b, "c", json!({"ttl": "2s"})).await;
    assert_ne!(back["lease_id"], json!(id));
    assert_eq!(back["changed"], json!(false));
    await_health(&p.a, "c", "healthy", ACROSS).await;
}

#[tokio::test]
async fn a_release_through_one_instance_is_left_on_the_other() {
    let p = pair_with_ring("/leases-release").await;
    let made = register(&p.a, "c", json!({"ttl": "10s"})).await;
    let id = made["lease_id"].as_str().unwrap().to_owned();
    let r = p.b.delete(&format!("/v1/rings/r/nodes/c/lease/{id}")).await;
    let left = expect_json(r, StatusCode::OK).await;
    assert_eq!(
        (&left["health"], &left["version"]),
        (&json!("left"), &json!(3))
    );
    await_health(&p.a, "c", "left", ACROSS).await;
    assert_problem(
        renew(&p.a, "c", &id).await,
        Problem::status(404)
            .slug("lease-not-found")
            .field("lease_id")
            .detail_has(&format!("lease `{id}` of node `c` was released")),
    )
    .await;
    assert_eq!(
        p.a.get_ok("/v1/rings/r").await["health"],
        json!({"healthy": 0, "unhealthy": 0, "left": 1, "unmanaged": 1})
    );
    assert_eq!(p.a.state_of("r").await.0, 3, "a release makes no version");
    // Removing the node ends its lease everywhere: added again by an
    // operator, it is unmanaged.
    let r = p.a.delete("/v1/rings/r/nodes/c").await;
    assert!(r.status().is_success(), "{}", r.status());
    let r = p.a.put("/v1/rings/r/nodes/c", json!({})).await;
    assert!(r.status().is_success(), "{}", r.status());
    await_health(&p.b, "c", "unmanaged", ACROSS).await;
    assert_eq!(health_of(&p.a, "c").await, "unmanaged");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_stays_valid_when_the_etcd_leader_is_killed() {
    let mut cluster = EtcdCluster::start().await;
    let ringd = Ringd::on(&cluster.store_url())
        .prefix("/leases-leader")
        .start();
    ringd.api().wait_ready(Duration::from_secs(10)).await;
    ringd.ring_with("r", &["a"]).await;
    let made = register(&ringd, "c", json!({"ttl": "3s"})).await;
    let id = made["lease_id"].as_str().unwrap().to_owned();

    let leader = cluster.leader().await;
    cluster.kill(leader);
    // Renew every 300 ms for 8 s. A renewal caught by the election may
    // fail as unavailable (503), but none may find the lease gone.
    let until = Instant::now() + Duration::from_secs(8);
    let (mut ok, mut unavailable) = (0, 0);
    while Instant::now() < until {
        let r = renew(&ringd, "c", &id).await;
        match r.status() {
            StatusCode::OK => {
                let body: Value = r.json().await.unwrap();
                assert_eq!(body["lease_id"], json!(id));
                ok += 1;
            }
            StatusCode::SERVICE_UNAVAILABLE => unavailable += 1,
            other => panic!(
                "renewal answered {other}: {}\n{}",
                r.text().await.unwrap_or_default(),
                cluster.logs()
            ),
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    assert!(ok >= 10, "{ok} renewals succeeded, {unavailable} were 503");
    let last = expect_json(renew(&ringd, "c", &id).await, StatusCode::OK).await;
    assert_eq!(
        (&last["lease_id"], &last["health"]),
        (&json!(id), &json!("healthy"))
    );
    assert_eq!(health_of(&ringd, "c").await, "healthy");
    assert_eq!(ringd.state_of("r").await.0, 3, "no version from any of it");
}
