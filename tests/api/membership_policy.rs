//! The membership policy end to end, on a real `ringd serve` on SQLite
//! with leases of 1–2 s: automatic drains and removals with their exact
//! versions and reasons, graceful leaves, reactivation and joining nodes.
//! The partition guard is in `membership_guard.rs`, bad policies in
//! `membership_policy_input.rs`; both use the helpers here.
//!
//! Members here are renewal tasks of the test; every wait polls the
//! server with a deadline, never a bare sleep as the assertion.

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::support::api::{expect_json, TestApi};
use crate::support::membership::decider_looked_again;
use crate::support::ringd::Ringd;

pub(super) const WAIT: Duration = Duration::from_secs(20);

/// Registers `node` in `s`'s ring; returns the lease answer.
pub(super) async fn register(s: &TestApi, node: &str, ttl: &str) -> Value {
    let r = s
        .put(
            &format!("/v1/rings/{}/nodes/{node}/lease", s.ring),
            json!({"address": format!("10.0.0.1:{}", node.len()), "ttl": ttl}),
        )
        .await;
    let status = r.status();
    let body: Value = r.json().await.unwrap();
    assert!(status.is_success(), "register {node}: {status} {body}");
    body
}

pub(super) async fn renew(s: &TestApi, node: &str, lease: &str) -> reqwest::Response {
    s.req(
        Method::POST,
        &format!("/v1/rings/{}/nodes/{node}/lease/{lease}/renew", s.ring),
    )
    .send()
    .await
    .unwrap()
}

pub(super) async fn release(s: &TestApi, node: &str, lease: &str) -> Value {
    let r = s
        .req(
            Method::DELETE,
            &format!("/v1/rings/{}/nodes/{node}/lease/{lease}", s.ring),
        )
        .send()
        .await
        .unwrap();
    expect_json(r, StatusCode::OK).await
}

/// Each version's (version, op, node state or "-", reason).
pub(super) async fn history(s: &TestApi) -> Vec<(u64, String, String, String)> {
    let h = s.get_ok(&format!("/v1/rings/{}/history", s.ring)).await;
    h["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let op = &e["ops"][0];
            (
                e["version"].as_u64().unwrap(),
                op["op"].as_str().unwrap().to_owned(),
                op["node"]["state"].as_str().unwrap_or("-").to_owned(),
                e["reason"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

pub(super) fn entry(v: u64, op: &str, state: &str, reason: &str) -> (u64, String, String, String) {
    (v, op.to_owned(), state.to_owned(), reason.to_owned())
}

pub(super) async fn version(s: &TestApi) -> u64 {
    s.get_ok(&format!("/v1/rings/{}", s.ring)).await["version"]
        .as_u64()
        .unwrap()
}

/// Polls until the ring reaches `v`; panics after [`WAIT`].
pub(super) async fn wait_version(s: &TestApi, v: u64) {
    let start = Instant::now();
    while version(s).await < v {
        assert!(
            start.elapsed() < WAIT,
            "ring `{}` never reached version {v}",
            s.ring
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

pub(super) async fn create(s: &TestApi, membership: Value) {
    let r = s
        .put(
            &format!("/v1/rings/{}", s.ring),
            json!({"membership": membership}),
        )
        .await;
    expect_json(r, StatusCode::CREATED).await;
}

pub(super) fn registered(node: &str) -> String {
    format!("node `{node}` registered with a lease")
}

#[tokio::test]
async fn a_node_that_stops_renewing_turns_unhealthy_then_is_drained_then_removed() {
    let server = Ringd::sqlite().start();
    let s = server.api().for_ring("r");
    // A ring of one node: the guard must let all of it go.
    create(
        &s,
        json!({"drain_after": "1s", "forget_after": "3s", "max_unhealthy_fraction": 1}),
    )
    .await;
    let lease = register(&s, "a", "1s").await;
    let (id, deadline) = (
        lease["lease_id"].as_str().unwrap(),
        lease["deadline"].as_str().unwrap(),
    );
    wait_version(&s, 4).await;
    let missed = |after: &str| {
        format!("node `a` missed heartbeats for {after} (lease {id} expired at {deadline})")
    };
    // One version per transition, and none repeated afterwards.
    decider_looked_again(&s, WAIT).await;
    assert_eq!(
        history(&s).await,
        [
            entry(1, "set_config", "-", "ring created"),
            entry(2, "upsert", "active", &registered("a")),
            entry(3, "upsert", "draining", &missed("1s")),
            entry(4, "remove", "-", &missed("3s")),
        ]
    );
    let nodes = s.get_ok("/v1/rings/r/nodes").await;
    assert_eq!(nodes["nodes"], json!([]));
}

#[tokio::test]
async fn a_graceful_leave_removes_at_once_or_drains_then_is_forgotten() {
    let server = Ringd::sqlite().start();
    let remove = server.api().for_ring("leave-remove");
    create(&remove, json!({})).await;
    let lease = register(&remove, "a", "10s").await;
    let id = lease["lease_id"].as_str().unwrap().to_owned();
    let left = release(&remove, "a", &id).await;
    assert_eq!(
        (left["version"].clone(), left["changed"].clone()),
        (json!(3), json!(true))
    );
    let reason = format!(
        "node `a` left (lease {id} released at {})",
        left["deadline"].as_str().unwrap()
    );
    assert_eq!(
        history(&remove).await,
        [
            entry(1, "set_config", "-", "ring created"),
            entry(2, "upsert", "active", &registered("a")),
            entry(3, "remove", "-", &reason),
        ]
    );

    let drain = server.api().for_ring("leave-drain");
    create(&drain, json!({"on_leave": "drain", "forget_after": "2s"})).await;
    let lease = register(&drain, "a", "10s").await;
    let id = lease["lease_id"].as_str().unwrap().to_owned();
    let left = release(&drain, "a", &id).await;
    assert_eq!(
        (left["version"].clone(), left["changed"].clone()),
        (json!(3), json!(true))
    );
    let at = left["deadline"].as_str().unwrap();
    wait_version(&drain, 4).await;
    decider_looked_again(&drain, WAIT).await;
    assert_eq!(
        history(&drain).await,
        [
            entry(1, "set_config", "-", "ring created"),
            entry(2, "upsert", "active", &registered("a")),
            entry(
                3,
                "upsert",
                "draining",
                &format!("node `a` left (lease {id} released at {at})")
            ),
            entry(
                4,
                "remove",
                "-",
                &format!("node `a` left 2s ago (lease {id} released at {at})")
            ),
        ]
    );
}

#[tokio::test]
async fn a_drained_node_that_comes_back_is_reactivated_by_its_registration() {
    let server = Ringd::sqlite().start();
    let s = server.api().for_ring("r");
    create(
        &s,
        json!({"drain_after": "1s", "forget_after": "10m", "max_unhealthy_fraction": 1}),
    )
    .await;
    let lease = register(&s, "a", "1s").await;
    let (id, deadline) = (
        lease["lease_id"].as_str().unwrap(),
        lease["deadline"].as_str().unwrap(),
    );
    wait_version(&s, 3).await;
    let back = register(&s, "a", "1s").await;
    assert_eq!(
        (back["version"].clone(), back["changed"].clone()),
        (json!(4), json!(true))
    );
    assert_ne!(back["lease_id"].as_str().unwrap(), id, "a new lease");
    assert_eq!(
        history(&s).await,
        [
            entry(1, "set_config", "-", "ring created"),
            entry(2, "upsert", "active", &registered("a")),
            entry(3, "upsert", "draining", &format!("node `a` missed heartbeats for 1s (lease {id} expired at {deadline})")),
            entry(4, "upsert", "active", &format!("node `a` came back after missing heartbeats (lease {id} expired at {deadline}): reactivated")),
        ]
    );
}

/// Renews `node`'s lease every 250 ms until dropped.
pub(super) struct Renewer(tokio::task::JoinHandle<()>);

impl Renewer {
    pub(super) fn start(s: &TestApi, node: &str, lease: &str) -> Self {
        let (s, node, lease) = (s.clone(), node.to_owned(), lease.to_owned());
        Self(tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(250)).await;
                let r = renew(&s, &node, &lease).await;
                assert_eq!(r.status(), StatusCode::OK, "renew {node}");
            }
        }))
    }
}

impl Drop for Renewer {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[tokio::test]
async fn a_joining_node_owns_nothing_until_activate_after_or_an_operator_activates_it() {
    let server = Ringd::sqlite().start();
    let s = server.api().for_ring("auto");
    create(&s, json!({"on_join": "joining", "activate_after": "2s"})).await;
    let lease = register(&s, "a", "2s").await;
    let _renewing = Renewer::start(&s, "a", lease["lease_id"].as_str().unwrap());
    let ring = s.get_ok("/v1/rings/auto").await;
    assert_eq!(
        (ring["nodes"].clone(), ring["active_nodes"].clone()),
        (json!(1), json!(0))
    );
    wait_version(&s, 3).await;
    let joins = "node `a` registered with a lease and joins as `joining` (on_join)";
    assert_eq!(
        history(&s).await,
        [
            entry(1, "set_config", "-", "ring created"),
            entry(2, "upsert", "joining", joins),
            entry(
                3,
                "upsert",
                "active",
                "node `a` was healthy for 2s (activate_after)"
            ),
        ]
    );

    let manual = server.api().for_ring("manual");
    create(&manual, json!({"on_join": "joining"})).await;
    let first = register(&manual, "a", "10s").await;
    // Registering again keeps it joining: no version.
    let again = register(&manual, "a", "10s").await;
    assert_eq!(
        (first["version"].clone(), again["changed"].clone()),
        (json!(2), json!(false))
    );
    let r = manual
        .put(
            "/v1/rings/manual/nodes/a",
            json!({"address": "10.0.0.1:1", "state": "active"}),
        )
        .await;
    expect_json(r, StatusCode::OK).await;
    assert_eq!(
        history(&manual).await,
        [
            entry(1, "set_config", "-", "ring created"),
            entry(2, "upsert", "joining", joins),
            entry(3, "upsert", "active", ""),
        ]
    );
}
