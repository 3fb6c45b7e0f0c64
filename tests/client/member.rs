//! `client::Member` against a live ringd: it registers, renews for many
//! TTLs without a version, fails over to a second URL, registers again
//! after an operator removed its node, releases on `leave()` and on drop,
//! and stops at once on a refusal that retrying cannot fix.
#![cfg(feature = "server")]

use std::time::Duration;

use reqwest::{Method, StatusCode};
use ringd::client::{ClientError, Member, MemberState, MemberStatus};
use ringd::placement::NodeId;
use ringd::ring::NodeRecord;
use serde_json::json;

use crate::support::api::TestApi;
use crate::support::membership::{dead_url, node_entry, wait_health, wait_node};
use crate::support::problem::{assert_problem, Problem};
use crate::support::ringd::Ringd;

const TTL: Duration = Duration::from_secs(1);
/// Far above any wait these tests expect, so only a broken member trips it.
const LIMIT: Duration = Duration::from_secs(10);

fn record(id: &str) -> NodeRecord {
    let mut r = NodeRecord::new(NodeId::new(id).unwrap());
    r.address = Some("10.0.0.1:11211".into());
    r.labels.insert("role".into(), "cache".into());
    r
}

fn member(urls: &[&str], id: &str) -> Member {
    Member::builder(urls, "cache", record(id))
        .ttl(TTL)
        .backoff(Duration::from_millis(50), Duration::from_millis(200))
        .start()
        .unwrap()
}

async fn wait_state(m: &Member, state: MemberState) -> MemberStatus {
    m.wait_for(|s| s.state == state, LIMIT)
        .await
        .unwrap_or_else(|e| panic!("not {state:?}: {e}; status {:?}", m.status()))
}

/// A ring `cache` (version 1) on a fresh in-process server.
async fn ring() -> (crate::support::in_process::InProcessServer, TestApi) {
    let s = Ringd::sqlite().in_process().start();
    let api = TestApi::new(&s.url, "cache");
    assert_eq!(api.create().await, 1);
    (s, api)
}

#[tokio::test]
async fn registers_and_renewals_keep_it_healthy_for_many_ttls() {
    let (_s, api) = ring().await;
    let m = member(&[&api.base], "n1");
    let first = wait_state(&m, MemberState::Registered).await;
    assert_eq!(first.version, Some(2));
    assert_eq!(first.server.as_deref(), Some(api.base.as_str()));
    let lease = first.lease_id.expect("a lease id");
    let n = node_entry(&api, "n1").await.expect("listed");
    assert_eq!(n["health"], "healthy");
    assert_eq!(n["address"], "10.0.0.1:11211");
    assert_eq!(n["labels"], json!({"role": "cache"}));
    assert!(n["lease_deadline"].is_string(), "{n}");

    // Four TTLs: healthy at every look, one lease, no new version.
    let until = tokio::time::Instant::now() + 4 * TTL;
    while tokio::time::Instant::now() < until {
        let n = node_entry(&api, "n1").await.expect("listed");
        assert_eq!(n["health"], "healthy", "{n}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let now = m.status();
    assert_eq!(now.state, MemberState::Renewing);
    assert_eq!(now.lease_id, Some(lease));
    assert_eq!(now.losses, 0);
    // Renewals about every third of the TTL, each wait drawn from [1/4,
    // 5/12) of it: in a little over 4 TTLs at most 17 besides the
    // registration, and at least 9 unless requests are slow, so the floor
    // leaves room for a loaded machine.
    assert!((6..=18).contains(&now.heartbeats), "{now:?}");
    assert_eq!(api.state_of("cache").await.0, 2);
    m.leave().await.unwrap();
}

#[tokio::test]
async fn fails_over_to_the_second_url_when_the_first_is_dead() {
    let (_s, api) = ring().await;
    let dead = dead_url();
    let m = member(&[&dead, &api.base], "n1");
    let first = wait_state(&m, MemberState::Registered).await;
    assert_eq!(first.server.as_deref(), Some(api.base.as_str()));
    wait_state(&m, MemberState::Renewing).await;
    assert_eq!(m.status().server.as_deref(), Some(api.base.as_str()));
    assert_eq!(wait_health(&api, "n1", "healthy", LIMIT).await["id"], "n1");
    m.leave().await.unwrap();
    // Released through the live server: removed (`on_leave: remove`).
    assert_eq!(
        wait_node(&api, "n1", "removed", LIMIT, |n| n.is_none()).await,
        None
    );
}

#[tokio::test]
async fn registers_again_after_an_operator_removed_its_node() {
    let (_s, api) = ring().await;
    let m = member(&[&api.base], "n1");
    let first = wait_state(&m, MemberState::Registered).await;
    let old = first.lease_id.unwrap();
    // Another node, so the ring keeps a member while n1 is out.
    assert_eq!(api.upsert("n2", 1).await, 3);
    assert_eq!(api.remove("n1").await, 4);

    // The next renewal is refused (the removal dropped the lease): lost,
    // then registered again under a new lease, one version.
    let again = m
        .wait_for(|s| s.losses == 1 && s.state.holds_lease(), LIMIT)
        .await
        .unwrap();
    assert_ne!(again.lease_id, Some(old));
    assert_eq!(again.version, Some(5));
    let err = again.last_error.map(|e| e.to_string());
    assert_eq!(err, None, "a success clears the error");
    let n = wait_health(&api, "n1", "healthy", LIMIT).await;
    assert_eq!(n["address"], "10.0.0.1:11211");
    let history = api.get_ok("/v1/rings/cache/history").await;
    let reasons: Vec<(u64, Option<&str>)> = history["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["version"].as_u64().unwrap(), v["reason"].as_str()))
        .collect();
    let registered = Some("node `n1` registered with a lease");
    assert_eq!(
        reasons,
        [
            (1, Some("ring created")),
            (2, registered),
            (3, None),
            (4, None),
            (5, registered)
        ],
        "{history}"
    );
    // The old lease stays refused.
    let r = api
        .req(
            Method::POST,
            &format!("/v1/rings/cache/nodes/n1/lease/{old}/renew"),
        )
        .send()
        .await
        .unwrap();
    assert_problem(
        r,
        Problem::status(404)
            .slug("lease-not-found")
            .field("lease_id"),
    )
    .await;
    m.leave().await.unwrap();
}

#[tokio::test]
async fn a_subscriber_sees_lost_then_registered() {
    let (_s, api) = ring().await;
    let m = member(&[&api.base], "n1");
    wait_state(&m, MemberState::Renewing).await;
    let mut rx = m.subscribe();
    rx.borrow_and_update();
    assert_eq!(api.remove("n1").await, 3);
    let mut seen = Vec::new();
    while !(seen.last() == Some(&MemberState::Registered)) {
        tokio::time::timeout(LIMIT, rx.changed())
            .await
            .expect("a change")
            .expect("the member runs");
        let s = rx.borrow_and_update().clone();
        if seen.last() != Some(&s.state) {
            seen.push(s.state);
        }
    }
    // A watch keeps only the newest status; the loss count covers a Lost
    // that came and went between two looks.
    let losses = m.status().losses;
    assert_eq!(losses, 1);
    if seen != [MemberState::Lost, MemberState::Registered] {
        assert_eq!(seen, [MemberState::Registered]);
    }
    m.leave().await.unwrap();
}

#[tokio::test]
async fn leave_marks_the_node_left_and_its_lease_is_refused_after() {
    let (_s, api) = ring().await;
    let m = member(&[&api.base], "n1");
    let lease = wait_state(&m, MemberState::Registered)
        .await
        .lease_id
        .unwrap();
    let mut rx = m.subscribe();
    m.leave().await.unwrap();
    assert_eq!(rx.borrow_and_update().state, MemberState::Left);
    // The task has ended: the status never changes again.
    assert!(rx.changed().await.is_err());
    // At once, not after the TTL, the ring's default `on_leave: remove`
    // removed the node: one version.
    assert_eq!(node_entry(&api, "n1").await, None);
    assert_eq!(api.state_of("cache").await.0, 3);
    for method in [Method::POST, Method::DELETE] {
        let path = match method {
            Method::POST => format!("/v1/rings/cache/nodes/n1/lease/{lease}/renew"),
            _ => format!("/v1/rings/cache/nodes/n1/lease/{lease}"),
        };
        let r = api.req(method, &path).send().await.unwrap();
        assert_problem(
            r,
            Problem::status(404)
                .slug("lease-not-found")
                .field("lease_id"),
        )
        .await;
    }
}

#[tokio::test]
async fn dropping_the_handle_releases_the_lease() {
    let (_s, api) = ring().await;
    let m = member(&[&api.base], "n1");
    wait_state(&m, MemberState::Registered).await;
    drop(m);
    // Well within the TTL: a drop releases, it does not wait for expiry.
    // Released, the node is removed by the default `on_leave: remove`.
    let gone = wait_node(&api, "n1", "removed", TTL / 2, |n| n.is_none()).await;
    assert_eq!(gone, None);
}

#[tokio::test]
async fn a_ttl_out_of_range_is_refused_before_anything_is_sent() {
    let (_s, api) = ring().await;
    for (ttl, text) in [(Duration::ZERO, "0ms"), (Duration::from_secs(7200), "2h")] {
        let err = Member::builder(&[&api.base], "cache", record("n1"))
            .ttl(ttl)
            .start()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("the lease TTL {text} is out of range: use 1s to 1h")
        );
    }
    assert_eq!(node_entry(&api, "n1").await, None);
}

#[tokio::test]
async fn a_refusal_retrying_cannot_fix_stops_it_without_a_loop() {
    let s = Ringd::sqlite()
        .args(&["--admin-token", "the-admin"])
        .in_process()
        .start();
    let api = TestApi::new(&s.url, "cache");
    let r = api
        .req(Method::PUT, "/v1/rings/cache")
        .bearer_auth("the-admin")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::CREATED);

    // A wrong token: 401, and the task ends with it.
    let m = Member::builder(&[&s.url], "cache", record("n1"))
        .ttl(TTL)
        .token("not-the-admin")
        .start()
        .unwrap();
    let failed = wait_state(&m, MemberState::Failed).await;
    let err = failed.last_error.expect("the refusal");
    assert_eq!(err.status(), Some(401), "{err}");
    assert_eq!((failed.heartbeats, failed.lease_id), (0, None));
    let mut rx = m.subscribe();
    rx.borrow_and_update();
    assert!(rx.changed().await.is_err(), "the task ended");
    m.leave().await.unwrap();

    // A ring that does not exist: 404 `ring-not-found`, the same.
    let m = Member::builder(&[&s.url], "nope", record("n1"))
        .ttl(TTL)
        .token("the-admin")
        .start()
        .unwrap();
    let failed = wait_state(&m, MemberState::Failed).await;
    let err = failed.last_error.expect("the refusal");
    match &*err {
        ClientError::Problem(p) => {
            assert_eq!((p.status, p.slug()), (404, "ring-not-found"), "{p}")
        }
        other => panic!("not a problem: {other}"),
    }
    let r = api
        .req(Method::GET, "/v1/rings/cache/nodes")
        .bearer_auth("the-admin")
        .send()
        .await
        .unwrap();
    let list: serde_json::Value = r.json().await.unwrap();
    assert_eq!(list["nodes"], json!([]), "nothing was registered");
}
