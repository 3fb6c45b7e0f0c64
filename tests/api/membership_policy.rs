//! The membership policy end to end, on a real `ringd serve` on SQLite
//! with leases of 1–2 s: automatic drains and removals with their exact
//! versions and reasons, graceful leaves, reactivation, joining nodes,
//! the partition guard with its status, metric, log line and override,
//! and bad policies refused without a change.
//!
//! Members here are renewal tasks of the test; every wait polls the
//! server with a deadline, never a bare sleep as the assertion.

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::support::api::{expect_json, TestApi};
use crate::support::problem::{assert_problem, Problem};
use crate::support::ringd::Ringd;

const WAIT: Duration = Duration::from_secs(20);

/// Registers `node` in `s`'s ring; returns the lease answer.
async fn register(s: &TestApi, node: &str, ttl: &str) -> Value {
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

async fn renew(s: &TestApi, node: &str, lease: &str) -> reqwest::Response {
    s.req(
        Method::POST,
        &format!("/v1/rings/{}/nodes/{node}/lease/{lease}/renew", s.ring),
    )
    .send()
    .await
    .unwrap()
}

async fn release(s: &TestApi, node: &str, lease: &str) -> Value {
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
async fn history(s: &TestApi) -> Vec<(u64, String, String, String)> {
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

fn entry(v: u64, op: &str, state: &str, reason: &str) -> (u64, String, String, String) {
    (v, op.to_owned(), state.to_owned(), reason.to_owned())
}

async fn version(s: &TestApi) -> u64 {
    s.get_ok(&format!("/v1/rings/{}", s.ring)).await["version"]
        .as_u64()
        .unwrap()
}

/// Polls until the ring reaches `v`; panics after [`WAIT`].
async fn wait_version(s: &TestApi, v: u64) {
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

async fn create(s: &TestApi, membership: Value) {
    let r = s
        .put(
            &format!("/v1/rings/{}", s.ring),
            json!({"membership": membership}),
        )
        .await;
    expect_json(r, StatusCode::CREATED).await;
}

fn registered(node: &str) -> String {
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
    tokio::time::sleep(Duration::from_millis(600)).await;
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
    tokio::time::sleep(Duration::from_millis(600)).await;
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
struct Renewer(tokio::task::JoinHandle<()>);

impl Renewer {
    fn start(s: &TestApi, node: &str, lease: &str) -> Self {
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

async fn membership(s: &TestApi) -> Value {
    s.get_ok(&format!("/v1/rings/{}", s.ring)).await["membership"].clone()
}

#[tokio::test]
async fn the_partition_guard_holds_back_drains_says_why_yields_to_an_override_and_clears() {
    let server = Ringd::sqlite().start();
    let s = server.api().for_ring("r");
    create(&s, json!({"drain_after": "2s", "forget_after": "10m"})).await;
    let names = ["n0", "n1", "n2", "n3", "n4"];
    let mut leases = Vec::new();
    let mut renewers = Vec::new();
    for n in names {
        let l = register(&s, n, "1s").await;
        leases.push(l["lease_id"].as_str().unwrap().to_owned());
        renewers.push(Some(Renewer::start(&s, n, &leases.last().unwrap().clone())));
    }
    assert_eq!(version(&s).await, 6);
    assert_eq!(
        membership(&s).await,
        json!({"guard": {"blocked": false, "rule": null, "detail": null}, "pending": []})
    );
    // Stop 60% at once; their last renewals set the deadlines the
    // reasons name.
    for r in renewers.iter_mut().take(3) {
        *r = None;
    }
    // Lets a renewal already on its way land before the last ones below.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut deadlines = Vec::new();
    for i in 0..3 {
        let r = renew(&s, names[i], &leases[i]).await;
        let body = expect_json(r, StatusCode::OK).await;
        deadlines.push(body["deadline"].as_str().unwrap().to_owned());
    }
    let reason = |i: usize| {
        format!(
            "node `{}` missed heartbeats for 2s (lease {} expired at {})",
            names[i], leases[i], deadlines[i]
        )
    };
    let pending = |from: usize| -> Vec<Value> {
        (from..3)
            .map(|i| json!({"node": names[i], "transition": "drain", "reason": reason(i)}))
            .collect()
    };
    let detail = "3 of 5 leased nodes are unhealthy, more than max_unhealthy_fraction 0.5 of them";
    let blocked = |from: usize| {
        json!({
            "guard": {"blocked": true, "rule": "unhealthy_fraction", "detail": detail},
            "pending": pending(from)
        })
    };
    let start = Instant::now();
    while membership(&s).await != blocked(0) {
        assert!(
            start.elapsed() < WAIT,
            "never blocked: {}",
            membership(&s).await
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Held back: no automatic change, even well past drain_after.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(version(&s).await, 6);
    assert_eq!(membership(&s).await, blocked(0));
    assert_eq!(
        s.metric("ringd_membership_guard_blocked{ring=\"r\",rule=\"unhealthy_fraction\"}")
            .await,
        1
    );
    assert_eq!(
        s.metric("ringd_membership_guard_blocked{ring=\"r\",rule=\"rate_limit\"}")
            .await,
        0
    );

    // The operator pushes one through.
    let r = s
        .req(Method::POST, "/v1/rings/r/nodes/n0/transition")
        .send()
        .await
        .unwrap();
    let done = expect_json(r, StatusCode::OK).await;
    assert_eq!(done["version"], 7);
    let last = history(&s).await.pop().unwrap();
    assert_eq!(
        last,
        entry(
            7,
            "upsert",
            "draining",
            &format!("operator override of the partition guard: {}", reason(0))
        )
    );
    let start = Instant::now();
    while membership(&s).await != blocked(1) {
        assert!(
            start.elapsed() < WAIT,
            "n0 still pending: {}",
            membership(&s).await
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // A healthy node has nothing to override.
    let r = s
        .req(Method::POST, "/v1/rings/r/nodes/n3/transition")
        .send()
        .await
        .unwrap();
    assert_problem(
        r,
        Problem::status(409)
            .slug("conflict")
            .detail_has("node `n3` of ring `r` has no automatic transition due"),
    )
    .await;

    // Resume: the stopped members register again (their leases expired).
    for i in 0..3 {
        let l = register(&s, names[i], "1s").await;
        renewers[i] = Some(Renewer::start(
            &s,
            names[i],
            l["lease_id"].as_str().unwrap(),
        ));
    }
    let start = Instant::now();
    let clear = json!({"guard": {"blocked": false, "rule": null, "detail": null}, "pending": []});
    while membership(&s).await != clear {
        assert!(
            start.elapsed() < WAIT,
            "never cleared: {}",
            membership(&s).await
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // n0 came back and was reactivated; nothing else changed.
    assert_eq!(version(&s).await, 8);
    let ring = s.get_ok("/v1/rings/r").await;
    assert_eq!(ring["active_nodes"], 5);
    assert_eq!(
        s.metric("ringd_membership_guard_blocked{ring=\"r\",rule=\"unhealthy_fraction\"}")
            .await,
        0
    );
    drop(renewers);
    // The log names the rule once, when the guard blocked, not every tick.
    let log = server.log();
    let lines: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("membership guard: automatic drains and removals held back"))
        .collect();
    assert_eq!(lines.len(), 1, "{log}");
    assert!(lines[0].contains("unhealthy_fraction"), "{}", lines[0]);
    assert_eq!(
        log.lines()
            .filter(|l| l.contains("membership guard: clear"))
            .count(),
        1,
        "{log}"
    );
}

#[tokio::test]
async fn the_policy_is_versioned_shown_in_the_config_and_bad_policies_change_nothing() {
    let server = Ringd::sqlite().start();
    let s = server.api().for_ring("r");
    create(&s, json!({"drain_after": "30s"})).await;
    let policy = json!({
        "on_join": "active", "activate_after": null, "drain_after": "30s",
        "forget_after": null, "on_leave": "remove",
        "max_unhealthy_fraction": 0.5, "max_auto_changes_per_minute": 10
    });
    let ring = s.get_ok("/v1/rings/r").await;
    assert_eq!(ring["config"]["membership"], policy);
    let fingerprint = ring["fingerprint"].clone();
    // The same as a ring without a policy: the policy is not placement.
    let plain = server.api().for_ring("plain");
    create(&plain, json!({})).await;
    assert_eq!(
        s.get_ok("/v1/rings/plain").await["fingerprint"],
        fingerprint
    );
    let v = s
        .change(json!([{"op": "update_config", "config": {"membership": {"forget_after": "10m", "drain_after": null}}}]))
        .await;
    assert_eq!(v, 2);
    let snapshot = s.get_ok("/v1/rings/r/snapshot").await;
    let mut updated = policy.clone();
    updated["drain_after"] = Value::Null;
    updated["forget_after"] = json!("10m");
    assert_eq!(snapshot["config"]["membership"], updated);
    assert_eq!(snapshot["fingerprint"], fingerprint);
    assert_eq!(
        snapshot["change"]["ops"][0]["config"]["membership"],
        updated
    );

    let refusals = [
        (
            json!({"drain_after": "500ms"}),
            "membership.drain_after",
            "below the 1s minimum",
        ),
        (
            json!({"forget_after": "31d"}),
            "membership.forget_after",
            "",
        ),
        (
            json!({"activate_after": 5}),
            "membership.activate_after",
            "",
        ),
        (
            json!({"max_unhealthy_fraction": 0}),
            "membership.max_unhealthy_fraction",
            "above 0 and at most 1",
        ),
        (
            json!({"max_unhealthy_fraction": 1.01}),
            "membership.max_unhealthy_fraction",
            "above 0 and at most 1",
        ),
        (
            json!({"max_auto_changes_per_minute": 0}),
            "membership.max_auto_changes_per_minute",
            "use 1 to 10000",
        ),
        (
            json!({"on_join": "later"}),
            "membership.on_join",
            "unknown variant `later`",
        ),
        (
            json!({"on_leave": "stay"}),
            "membership.on_leave",
            "unknown variant `stay`",
        ),
        (
            json!({"drain": "1s"}),
            "membership.drain",
            "unknown field `drain`",
        ),
    ];
    for (bad, field, words) in refusals {
        let r = s
            .put("/v1/rings/other", json!({"membership": bad.clone()}))
            .await;
        assert_problem(
            r,
            Problem::status(400)
                .slug("invalid-input")
                .field(field)
                .detail_has(words),
        )
        .await;
        let r = s
            .post(
                "/v1/rings/r/changes",
                json!({"ops": [{"op": "update_config", "config": {"membership": bad}}]}),
            )
            .await;
        let ops_field = format!("ops[0].config.{field}");
        assert_problem(
            r,
            Problem::status(400)
                .slug("invalid-input")
                .field(&ops_field)
                .detail_has(words),
        )
        .await;
    }
    assert_eq!(
        s.get("/v1/rings/other").await.status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(version(&s).await, 2);
}
