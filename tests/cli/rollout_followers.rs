//! Rollouts gated on real client processes: `ringd serve` on SQLite and
//! three `ringd follow` children, each running the client library and
//! acking as `follower-1` … `follower-3`. A node joins ten in five steps,
//! each held by its dwell until the test has seen every follower listed
//! on it; and a follower frozen with SIGSTOP holds a step until the gate
//! times out and pauses the rollout, which finishes once it is thawed and
//! the rollout resumed.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::support::api::expect_json;
use crate::support::followers::Followers;
use crate::support::ringd::{Ringd, Server};
use crate::support::rollouts::{
    all_on, assert_done, assert_each_step_once, assert_followed, dry_run, event_kinds, listed,
    start, step_reason, ten_nodes, until, wait_listing, SUMMARIES,
};

const IDS: [&str; 3] = ["follower-1", "follower-2", "follower-3"];

/// A server with ring `cache` of ten nodes and the three followers listed
/// on its base version; returns the base version and fingerprint.
async fn setup() -> (Server, Followers, u64, String) {
    let s = Ringd::sqlite().start();
    let api = s.api().for_ring("cache");
    let base = ten_nodes(&api).await;
    let followers = Followers::start(&s.url, "cache", &IDS);
    wait_listing(&api, &all_on(&IDS, base)).await;
    let (_, fp) = api.state_of("cache").await;
    (s, followers, base, fp)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_step_waits_for_three_client_processes() {
    let (s, mut followers, base, base_fp) = setup().await;
    let api = s.api().for_ring("cache");
    // The dwell holds each step after its acks long enough for the test
    // to see them, and is the only pace: the acks come within
    // milliseconds.
    let policy = json!({"steps": 5, "gate": 1.0, "min_dwell": "2s"});
    let plan = dry_run(&api, policy.clone(), base, &SUMMARIES).await;
    start(&api, policy, 5).await;
    for i in 1..=5u64 {
        let v = base + i;
        let r = until(&api, 1, &format!("step {i} acked by every follower"), |r| {
            r["step"] == i && r["state"] == "waiting_for_gate" && r["gate"]["acked"] == 3
        })
        .await;
        assert_eq!(
            r["gate"],
            json!({"version": v, "live": 3, "acked": 3, "acked_share": 1.0,
                   "needed": 1.0, "lagging": [], "divergent": []}),
            "{r}"
        );
        assert_eq!(listed(&api).await, all_on(&IDS, v), "step {i}");
        // Still this step: the next waits for the dwell.
        assert_eq!(api.state_of("cache").await.0, v, "step {i} held");
        let snap = api.snapshot(v).await;
        assert_eq!(
            snap["change"]["reason"],
            step_reason(i as usize, 5, SUMMARIES[i as usize - 1])
        );
        assert_eq!(
            snap["fingerprint"],
            plan["steps"][i as usize - 1]["fingerprint"]
        );
    }
    let done = until(&api, 1, "done", |r| r["state"] == "done").await;
    assert_done(&api, &done, base, &plan).await;
    assert_each_step_once(&api, base, &plan).await;
    assert_followed(&followers, &IDS, (base, &base_fp), &plan).await;
    assert_eq!(listed(&api).await, all_on(&IDS, base + 5));
    assert_eq!(
        event_kinds(&done),
        ["created", "step", "step", "step", "step", "step", "done"]
    );
    followers.terminate();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_client_holds_its_step_until_the_gate_times_out() {
    let (s, mut followers, base, base_fp) = setup().await;
    let api = s.api().for_ring("cache");
    let summaries = [
        "n-new at 33.3% of weight 1",
        "n-new at 66.7% of weight 1",
        "n-new weight 1",
    ];
    let policy = json!({"steps": 3, "gate": 1.0, "min_dwell": "2s", "gate_timeout": "3s"});
    let plan = dry_run(&api, policy.clone(), base, &summaries).await;
    start(&api, policy, 3).await;
    // Step 1 passes with all three; follower-2 freezes during its dwell.
    until(&api, 1, "step 1 acked by every follower", |r| {
        r["step"] == 1 && r["gate"]["acked"] == 3
    })
    .await;
    followers.signal("follower-2", "STOP");
    assert_eq!(
        api.state_of("cache").await.0,
        base + 1,
        "frozen within step 1"
    );
    assert_eq!(listed(&api).await, all_on(&IDS, base + 1));

    // Step 2: the other two ack it, the frozen one cannot.
    let v2 = base + 2;
    let r = until(&api, 1, "step 2 waiting for follower-2", |r| {
        r["step"] == 2 && r["state"] == "waiting_for_gate" && r["gate"]["acked"] == 2
    })
    .await;
    assert_eq!(
        r["gate"],
        json!({"version": v2, "live": 3, "acked": 2, "acked_share": 2.0 / 3.0,
               "needed": 1.0, "lagging": ["follower-2"], "divergent": []}),
        "{r}"
    );
    let paused = until(&api, 1, "paused", |r| r["state"] == "paused").await;
    assert_eq!(
        paused["pause_reason"],
        format!("the gate timed out after 3s: 2 of 3 live clients applied version {v2} (needed 100%); lagging: `follower-2`")
    );
    assert_eq!(paused["step"], 2);
    assert_eq!(api.state_of("cache").await.0, v2, "nothing after step 2");
    let mut rows = all_on(&IDS, v2);
    rows[1].1 = base + 1;
    assert_eq!(listed(&api).await, rows);

    // Thawed, it catches up; resumed, the rollout goes on from step 2.
    followers.signal("follower-2", "CONT");
    wait_listing(&api, &all_on(&IDS, v2)).await;
    let resumed = api
        .post("/v1/rings/cache/rollouts/1/resume", json!({}))
        .await;
    let resumed = expect_json(resumed, StatusCode::OK).await;
    assert_eq!(
        (&resumed["state"], &resumed["pause_reason"]),
        (&json!("waiting_for_gate"), &Value::Null)
    );
    let done = until(&api, 1, "done", |r| r["state"] == "done").await;
    assert_done(&api, &done, base, &plan).await;
    assert_each_step_once(&api, base, &plan).await;
    assert_eq!(
        event_kinds(&done),
        ["created", "step", "step", "paused", "resumed", "step", "done"]
    );
    // Thawed, the frozen one applied what its stream held, in order.
    assert_followed(&followers, &IDS, (base, &base_fp), &plan).await;
    followers.terminate();
}
