//! Rollouts on a live server over SQLite, with three real clients that
//! follow the ring and ack, and one client acked by hand so that the test
//! decides when each gate opens: the exact versions, reasons and ramps,
//! movement equal to the dry run, pauses at a gate timeout, gated and
//! immediate aborts back to the base fingerprint, the hold on other
//! changes and `force`, and refused input that changes nothing.
#![cfg(feature = "server")]

use std::time::Duration;

use reqwest::StatusCode;
use ringd::client::{RingClient, WatchMode};
use serde_json::{json, Value};

use crate::support::api::{expect_json, TestApi};
use crate::support::client::client;
use crate::support::ringd::{Ringd, Server};

/// How long a rollout may take to reach a state in these tests.
const LIMIT: Duration = Duration::from_secs(30);

/// A ring of ten nodes (one change), three clients following it and the
/// hand-acked `manual` on the current version.
async fn setup(config: Value) -> (Server, TestApi, Vec<RingClient>, u64) {
    let s = Ringd::sqlite().start();
    let api = s.api().for_ring("cache");
    api.create_with(config).await;
    let ops: Vec<Value> = (0..10)
        .map(|i| json!({"op": "upsert", "node": {"id": format!("n-{i}")}}))
        .collect();
    let base = api.change(json!(ops)).await;
    let clients: Vec<RingClient> = (1..=3)
        .map(|i| client(&[&s.url], "cache", WatchMode::Sse, &format!("c-{i}")))
        .collect();
    for i in 1..=3 {
        api.wait_listed(&format!("c-{i}"), base).await;
    }
    ack_by_hand(&api, base).await;
    (s, api, clients, base)
}

async fn ack_by_hand(api: &TestApi, version: u64) {
    let fp = api.snapshot(version).await["fingerprint"]
        .as_str()
        .unwrap()
        .to_owned();
    api.ack("manual", version, &fp).await;
}

pub(crate) fn add_new(policy: Value) -> Value {
    json!({
        "ops": [{"op": "upsert", "node": {"id": "n-new", "address": "10.0.0.99:11211"}}],
        "reason": "add n-new",
        "policy": policy,
    })
}

async fn rollout(api: &TestApi, id: u64) -> Value {
    api.get_ok(&format!("/v1/rings/cache/rollouts/{id}")).await
}

/// Polls rollout `id` until `done` says so.
async fn until(api: &TestApi, id: u64, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = tokio::time::Instant::now() + LIMIT;
    loop {
        let r = rollout(api, id).await;
        if done(&r) {
            return r;
        }
        assert!(tokio::time::Instant::now() < deadline, "never {what}: {r}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Waits until rollout `id` holds at step `step`'s gate, the three real
/// clients on its version and only `manual` lagging; returns its version.
async fn held_at(api: &TestApi, id: u64, step: u64) -> u64 {
    let r = until(api, id, "held at the gate", |r| {
        r["step"] == step
            && r["state"] == "waiting_for_gate"
            && r["gate"]["acked"] == 3
            && r["gate"]["lagging"] == json!(["manual"])
    })
    .await;
    let gate = &r["gate"];
    assert_eq!(
        (&gate["live"], &gate["acked_share"], &gate["needed"]),
        (&json!(4), &json!(0.75), &json!(1.0)),
        "{r}"
    );
    gate["version"].as_u64().unwrap()
}

fn ramp_of(snapshot: &Value, id: &str) -> Option<Value> {
    snapshot["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["id"] == id)
        .map(|n| n.get("ramp").cloned().unwrap_or(json!("full")))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_node_joins_ten_in_five_steps_each_gated_on_every_client() {
    let (_s, api, clients, base) = setup(json!({})).await;
    let plan = expect_json(
        api.post("/v1/rings/cache/rollouts", {
            let mut b = add_new(json!({"steps": 5}));
            b["dry_run"] = json!(true);
            b
        })
        .await,
        StatusCode::OK,
    )
    .await;
    let ramps: Vec<&Value> = plan["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["nodes"][0]["ramp"])
        .collect();
    assert_eq!(
        ramps,
        [13_108, 26_215, 39_322, 52_429, 65_536]
            .map(|r| json!(r))
            .iter()
            .collect::<Vec<_>>()
    );
    assert_eq!(plan["base_version"], base);
    // Nothing stored by the dry run.
    assert_eq!(
        api.get_ok("/v1/rings/cache/rollouts").await["rollouts"],
        json!([])
    );

    let started = api
        .post("/v1/rings/cache/rollouts", add_new(json!({"steps": 5})))
        .await;
    assert_eq!(started.status(), StatusCode::CREATED);
    assert_eq!(started.headers()["location"], "/v1/rings/cache/rollouts/1");
    let started = started.json::<Value>().await.unwrap();
    assert_eq!((&started["id"], &started["steps"]), (&json!(1), &json!(5)));

    for step in 1..=5u64 {
        let version = held_at(&api, 1, step).await;
        assert_eq!(version, base + step, "one version per step");
        // Held: no next version while `manual` lags.
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(api.state_of("cache").await.0, base + step);
        ack_by_hand(&api, version).await;
    }
    let done = until(&api, 1, "done", |r| r["state"] == "done").await;
    assert_eq!(done["step"], 5);
    assert_eq!(api.state_of("cache").await.0, base + 5);

    let mut total = 0.0;
    for (i, step) in plan["steps"].as_array().unwrap().iter().enumerate() {
        let v = base + 1 + i as u64;
        let snap = api.snapshot(v).await;
        let expected_reason = format!(
            "rollout 1: step {} of 5 ({}): add n-new",
            i + 1,
            step["summary"].as_str().unwrap()
        );
        assert_eq!(snap["change"]["reason"], expected_reason);
        let want = if i < 4 {
            step["nodes"][0]["ramp"].clone()
        } else {
            json!("full")
        };
        assert_eq!(ramp_of(&snap, "n-new"), Some(want), "v{v}");
        assert_eq!(
            snap["fingerprint"], step["fingerprint"],
            "v{v} is the planned version"
        );
        assert_eq!(
            snap["change"]["moved_fraction"], step["moved_fraction"],
            "v{v} moved as planned"
        );
        total += step["moved_fraction"].as_f64().unwrap();
        assert_eq!(done["plan"][i]["version"], v);
    }
    assert_eq!(plan["steps"][0]["summary"], "n-new at 20.0% of weight 1");
    let direct = plan["direct_moved_fraction"].as_f64().unwrap();
    assert!((total - direct).abs() < 1e-9, "{total} vs {direct}");
    assert_eq!(api.state_of("cache").await.1, plan["target_fingerprint"]);
    // The same placement as the change made at once: its dry run's
    // fingerprint from the base equals the rollout's last.
    for c in &clients {
        api.assert_routes_like_server(c, base + 5).await;
    }
    let events: Vec<&str> = done["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        events,
        ["created", "step", "step", "step", "step", "step", "done"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_gate_that_times_out_pauses_and_resume_finishes() {
    let (_s, api, _clients, base) = setup(json!({})).await;
    let body = add_new(json!({"steps": 2, "gate_timeout": "1s"}));
    expect_json(
        api.post("/v1/rings/cache/rollouts", body).await,
        StatusCode::CREATED,
    )
    .await;
    let paused = until(&api, 1, "paused", |r| r["state"] == "paused").await;
    assert_eq!(
        paused["pause_reason"],
        format!("the gate timed out after 1s: 3 of 4 live clients applied version {} (needed 100%); lagging: `manual`", base + 1)
    );
    assert_eq!(paused["step"], 1);
    // Resuming while `manual` still lags waits at the gate again.
    ack_by_hand(&api, base + 1).await;
    let resumed = expect_json(
        api.post("/v1/rings/cache/rollouts/1/resume", json!({}))
            .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(resumed["pause_reason"], Value::Null);
    let v = held_at(&api, 1, 2).await;
    ack_by_hand(&api, v).await;
    until(&api, 1, "done", |r| r["state"] == "done").await;
    let resume_again = api
        .post("/v1/rings/cache/rollouts/1/resume", json!({}))
        .await;
    let p = expect_json(resume_again, StatusCode::CONFLICT).await;
    assert_eq!(p["reason"], "rollout_state");
    assert_eq!(
        p["detail"],
        "rollout 1 of ring `cache` is done: cannot resume it, since it has finished"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_abort_walks_back_to_the_base_fingerprint() {
    let (_s, api, _clients, base) = setup(json!({})).await;
    let (_, base_fp) = api.state_of("cache").await;
    expect_json(
        api.post("/v1/rings/cache/rollouts", add_new(json!({"steps": 5})))
            .await,
        StatusCode::CREATED,
    )
    .await;
    let v1 = held_at(&api, 1, 1).await;
    ack_by_hand(&api, v1).await;
    let v2 = held_at(&api, 1, 2).await;
    let aborting = expect_json(
        api.post("/v1/rings/cache/rollouts/1/abort", json!({}))
            .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(aborting["direction"], "back");
    // Back to step 1's state (gated), then to the base.
    let r = until(&api, 1, "back at step 1", |r| {
        r["step"] == 1 && r["direction"] == "back" && r["state"] == "waiting_for_gate"
    })
    .await;
    let back1 = r["gate"]["version"].as_u64().unwrap();
    assert_eq!(back1, v2 + 1);
    assert_eq!(
        api.snapshot(back1).await["fingerprint"],
        api.snapshot(v1).await["fingerprint"]
    );
    ack_by_hand(&api, back1).await;
    let r = until(&api, 1, "back at the base", |r| {
        r["step"] == 0 && r["direction"] == "back" && r["state"] == "waiting_for_gate"
    })
    .await;
    let back0 = r["gate"]["version"].as_u64().unwrap();
    ack_by_hand(&api, back0).await;
    let aborted = until(&api, 1, "aborted", |r| r["state"] == "aborted").await;
    assert_eq!(api.state_of("cache").await, (back0, base_fp.clone()));
    assert_eq!(
        api.snapshot(back0).await["change"]["reason"],
        format!("rollout 1: abort, back to version {base} (before the rollout): add n-new")
    );
    assert_eq!(aborted["applied"].as_array().unwrap().len(), 4);
    // The ring is free again.
    assert!(api.upsert("n-free", 1).await > back0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_table_rollout_aborted_at_once_restores_the_base_table() {
    let (_s, api, _clients, base) = setup(json!({"algorithm": "table", "partitions": 256})).await;
    let (_, base_fp) = api.state_of("cache").await;
    let started = expect_json(
        api.post(
            "/v1/rings/cache/rollouts",
            add_new(json!({"max_moves_per_node_per_step": 8})),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    let k = started["steps"].as_u64().unwrap();
    assert!(k > 2, "{started}");
    let v1 = held_at(&api, 1, 1).await;
    ack_by_hand(&api, v1).await;
    held_at(&api, 1, 2).await;
    let r = expect_json(
        api.post(
            "/v1/rings/cache/rollouts/1/abort",
            json!({"immediate": true}),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(r["direction"], "back");
    let aborted = until(&api, 1, "aborted", |r| r["state"] == "aborted").await;
    let last = aborted["applied"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        (&last["step"], &last["direction"]),
        (&json!(0), &json!("back"))
    );
    assert_eq!(api.state_of("cache").await.1, base_fp);
    assert_eq!(last["fingerprint"], base_fp);
    let back = last["version"].as_u64().unwrap();
    let a = api
        .get(&format!("/v1/rings/cache/snapshots/{base}/table"))
        .await;
    let b = api
        .get(&format!("/v1/rings/cache/snapshots/{back}/table"))
        .await;
    assert_eq!(a.bytes().await.unwrap(), b.bytes().await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_change_during_a_rollout_is_refused_unless_forced() {
    let (_s, api, _clients, _base) = setup(json!({})).await;
    expect_json(
        api.post("/v1/rings/cache/rollouts", add_new(json!({"steps": 3})))
            .await,
        StatusCode::CREATED,
    )
    .await;
    let v1 = held_at(&api, 1, 1).await;
    let change = json!({"ops": [{"op": "upsert", "node": {"id": "n-x"}}]});
    let refused = expect_json(
        api.post("/v1/rings/cache/changes", change.clone()).await,
        StatusCode::CONFLICT,
    )
    .await;
    assert_eq!(refused["reason"], "rollout_active");
    assert_eq!(refused["detail"], "ring `cache` is in rollout 1; wait for it to finish, or abort it (POST /v1/rings/cache/rollouts/1/abort)");
    let node = expect_json(
        api.put("/v1/rings/cache/nodes/n-y", json!({})).await,
        StatusCode::CONFLICT,
    )
    .await;
    assert_eq!(node["reason"], "rollout_active");
    assert_eq!(api.state_of("cache").await.0, v1, "nothing changed");
    let mut forced = change;
    forced["force"] = json!(true);
    let applied = expect_json(
        api.post("/v1/rings/cache/changes", forced).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(applied["version"], v1 + 1);
    // The gate opens; the next step finds the ring moved and pauses.
    ack_by_hand(&api, v1).await;
    let paused = until(&api, 1, "paused", |r| r["state"] == "paused").await;
    assert_eq!(
        paused["pause_reason"],
        format!("the ring moved to version {} outside the rollout (a forced change); resume to go on from that version, or abort", v1 + 1)
    );
    expect_json(
        api.post("/v1/rings/cache/rollouts/1/resume", json!({}))
            .await,
        StatusCode::OK,
    )
    .await;
    let v2 = held_at(&api, 1, 2).await;
    assert_eq!(v2, v1 + 2);
    let snap = api.snapshot(v2).await;
    assert!(ramp_of(&snap, "n-x").is_some(), "the forced node stays");
    ack_by_hand(&api, v2).await;
    let v3 = held_at(&api, 1, 3).await;
    ack_by_hand(&api, v3).await;
    until(&api, 1, "done", |r| r["state"] == "done").await;
}
