//! Rollouts on etcd gated on real client processes: two ringd instances
//! on one etcd and three `ringd follow` children pointed at both (in
//! either order, so some are on the decision-maker whichever it is). A
//! node joins ten in five steps, each seen acked through the other
//! instance; and the decision-maker SIGKILLed mid-rollout, during a
//! step's dwell, as a step is committed, or having committed a step it
//! did not record, hands the rollout to the survivor, which finishes it
//! with every step committed exactly once.
#![cfg(feature = "server")]

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::leader::agreed;
use crate::support::api::{expect_json, TestApi};
use crate::support::etcd_pair::EtcdPair;
use crate::support::followers::Followers;
use crate::support::ringd::{Ringd, Server};
use crate::support::rollouts::{
    all_on, assert_done, assert_each_step_once, assert_followed, dry_run, event_kinds, listed,
    rollout, start, step_reason, ten_nodes, until, wait_listing, SUMMARIES,
};

const IDS: [&str; 3] = ["follower-1", "follower-2", "follower-3"];

/// The election TTL: a SIGKILLed leader is replaced within twice it.
const TTL: Duration = Duration::from_secs(3);

/// How long the first election may take.
const SETTLE: Duration = Duration::from_secs(20);

/// How each instance is started: a candidate with [`TTL`] under its name.
fn elected(ringd: Ringd, name: &str) -> Ringd {
    ringd.args(&["--election-ttl", "3s", "--instance-id", name])
}

/// Instances `a` and `b` (started [`elected`]) agreeing on a leader, ring
/// `cache` of ten nodes, and the three followers listed on its base
/// version; returns the instances, the leader's index, the followers and
/// the base version and fingerprint.
async fn setup(a: Server, b: Server) -> ([Option<Server>; 2], usize, Followers, u64, String) {
    let view = agreed(&[&a, &b], &["a", "b"], SETTLE).await;
    let leader = match view["leader"]["instance"].as_str() {
        Some("a") => 0,
        Some("b") => 1,
        other => panic!("leader {other:?}: {view}"),
    };
    let api = a.api().for_ring("cache");
    let base = ten_nodes(&api).await;
    // b hears of the base through its watch of etcd, a moment later; a
    // follower that connected to it before would print version 1 first.
    let deadline = Instant::now() + SETTLE;
    while b.state_of("cache").await.0 < base {
        assert!(Instant::now() < deadline, "b never served v{base}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let (ab, ba) = (
        format!("{},{}", a.url, b.url),
        format!("{},{}", b.url, a.url),
    );
    let followers = Followers::start_each("cache", &[(&ab, IDS[0]), (&ba, IDS[1]), (&ab, IDS[2])]);
    // Listed through both instances: the acks are in etcd.
    wait_listing(&api, &all_on(&IDS, base)).await;
    wait_listing(&b.api().for_ring("cache"), &all_on(&IDS, base)).await;
    let (_, fp) = api.state_of("cache").await;
    ([Some(a), Some(b)], leader, followers, base, fp)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rollout_on_two_instances_waits_for_three_client_processes() {
    let pair = EtcdPair::start_each("/rollout", elected).await;
    // The instances move out; their etcd stays in `pair` and outlives them.
    let (servers, _, mut followers, base, base_fp) = setup(pair.a, pair.b).await;
    let [Some(a), Some(b)] = &servers else {
        unreachable!("both started")
    };
    let (on_a, on_b) = (a.api().for_ring("cache"), b.api().for_ring("cache"));
    let policy = json!({"steps": 5, "gate": 1.0, "min_dwell": "2s"});
    let plan = dry_run(&on_b, policy.clone(), base, &SUMMARIES).await;
    // Started through one instance, read through the other.
    start(&on_b, policy, 5).await;
    for i in 1..=5u64 {
        let v = base + i;
        let r = until(
            &on_a,
            1,
            &format!("step {i} acked by every follower"),
            |r| r["step"] == i && r["state"] == "waiting_for_gate" && r["gate"]["acked"] == 3,
        )
        .await;
        assert_eq!(
            r["gate"],
            json!({"version": v, "live": 3, "acked": 3, "acked_share": 1.0,
                   "needed": 1.0, "lagging": [], "divergent": []}),
            "{r}"
        );
        assert_eq!(listed(&on_b).await, all_on(&IDS, v), "step {i}");
        assert_eq!(on_b.state_of("cache").await.0, v, "step {i} held");
        let snap = on_b.snapshot(v).await;
        assert_eq!(
            snap["change"]["reason"],
            step_reason(i as usize, 5, SUMMARIES[i as usize - 1])
        );
    }
    let done = until(&on_a, 1, "done", |r| r["state"] == "done").await;
    assert_done(&on_a, &done, base, &plan).await;
    assert_each_step_once(&on_b, base, &plan).await;
    assert_followed(&followers, &IDS, (base, &base_fp), &plan).await;
    assert_eq!(
        event_kinds(&done),
        ["created", "step", "step", "step", "step", "step", "done"]
    );
    followers.terminate();
}

/// When the decision-maker is killed.
#[derive(Clone, Copy, Debug)]
enum Kill {
    /// Step 2 is committed, acked by every follower and held by its
    /// dwell: the record says so.
    InStepTwosDwell,
    /// As soon as the survivor serves step 2's version, whatever the
    /// record says yet: no dwell, so the next steps follow at once.
    AsStepTwoCommits,
    /// Having committed step 3 but not recorded it: killed in step 2's
    /// dwell, then step 3 is committed by hand with the driver's own key,
    /// ops and reason, as the leader's last act would have been.
    BeforeRecordingStepThree,
}

/// Commits step 3 of rollout 1 as its driver does (`docs/rollouts.md`,
/// "Failover and exactly-once"), while no instance is in office to
/// record it: the dead leader's lease has not run out yet.
async fn commit_step_three_by_hand(api: &TestApi, plan: &Value, base: u64, survivor: &str) {
    let body = json!({
        "ops": plan["steps"][2]["ops"],
        "expected_version": base + 2,
        "reason": step_reason(3, 5, SUMMARIES[2]),
        "force": true,
    });
    let r = api
        .req(Method::POST, "/v1/rings/cache/changes")
        .header("idempotency-key", "rollout-1-commit-3")
        .json(&body)
        .send()
        .await
        .unwrap();
    let committed = expect_json(r, StatusCode::OK).await;
    assert_eq!(committed["version"], base + 3, "{committed}");
    let cluster = api.get_ok("/v1/cluster").await;
    assert_ne!(
        cluster["leader"]["instance"], survivor,
        "the survivor took office before the commit: {cluster}"
    );
    let r = rollout(api, 1).await;
    assert_eq!(
        (&r["step"], r["applied"].as_array().unwrap().len()),
        (&json!(2), 2),
        "step 3 is not recorded: {r}"
    );
}

/// A five-step rollout whose decision-maker is SIGKILLed at `when`: the
/// survivor takes office within twice the TTL and finishes the rollout,
/// and the ring's history holds each step exactly once.
async fn leader_killed(prefix: &str, when: Kill) {
    let pair = EtcdPair::start_each(prefix, elected).await;
    // The instances move out; their etcd stays in `pair` and outlives them.
    let (mut servers, leader, mut followers, base, base_fp) = setup(pair.a, pair.b).await;
    let survivor_ix = 1 - leader;
    let survivor_id = ["a", "b"][survivor_ix];
    let on_survivor = servers[survivor_ix]
        .as_ref()
        .unwrap()
        .api()
        .for_ring("cache");
    let dwell = match when {
        Kill::AsStepTwoCommits => "0s",
        Kill::InStepTwosDwell | Kill::BeforeRecordingStepThree => "2s",
    };
    let policy = json!({"steps": 5, "gate": 1.0, "min_dwell": dwell});
    let plan = dry_run(&on_survivor, policy.clone(), base, &SUMMARIES).await;
    start(&on_survivor, policy, 5).await;
    match when {
        Kill::InStepTwosDwell | Kill::BeforeRecordingStepThree => {
            until(&on_survivor, 1, "step 2 acked by every follower", |r| {
                r["step"] == 2 && r["state"] == "waiting_for_gate" && r["gate"]["acked"] == 3
            })
            .await;
        }
        Kill::AsStepTwoCommits => {
            let deadline = Instant::now() + SETTLE;
            while on_survivor.state_of("cache").await.0 < base + 2 {
                assert!(Instant::now() < deadline, "step 2 never committed");
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
    }
    let killed_at = time::OffsetDateTime::now_utc();
    servers[leader].as_mut().unwrap().kill();
    servers[leader] = None;
    if !matches!(when, Kill::AsStepTwoCommits) {
        // Killed within the dwell: nothing after step 2 yet.
        assert_eq!(on_survivor.state_of("cache").await.0, base + 2);
    }
    if let Kill::BeforeRecordingStepThree = when {
        commit_step_three_by_hand(&on_survivor, &plan, base, survivor_id).await;
    }
    let survivor = servers[survivor_ix].as_ref().unwrap();
    let view = agreed(
        &[survivor],
        &[survivor_id],
        2 * TTL + Duration::from_secs(5),
    )
    .await;
    assert_eq!(view["leader"]["instance"], survivor_id);

    let done = until(&on_survivor, 1, "done", |r| r["state"] == "done").await;
    assert_done(&on_survivor, &done, base, &plan).await;
    assert_each_step_once(&on_survivor, base, &plan).await;
    assert_followed(&followers, &IDS, (base, &base_fp), &plan).await;
    assert_eq!(listed(&on_survivor).await, all_on(&IDS, base + 5));
    assert_eq!(
        event_kinds(&done),
        ["created", "step", "step", "step", "step", "step", "done"],
        "{done}"
    );
    if !matches!(when, Kill::AsStepTwoCommits) {
        // Steps 3 to 5 come after the kill.
        for a in &done["applied"].as_array().unwrap()[2..] {
            let at = time::OffsetDateTime::parse(
                a["at"].as_str().unwrap(),
                &time::format_description::well_known::Rfc3339,
            )
            .unwrap();
            assert!(at > killed_at, "{a} before the kill at {killed_at}");
        }
    }
    followers.terminate();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_survivor_finishes_a_rollout_whose_leader_died_in_a_dwell() {
    leader_killed("/rollout-dwell", Kill::InStepTwosDwell).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_survivor_finishes_a_rollout_whose_leader_died_as_a_step_committed() {
    leader_killed("/rollout-commit", Kill::AsStepTwoCommits).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_survivor_records_a_step_its_leader_committed_but_did_not_record() {
    leader_killed("/rollout-unrecorded", Kill::BeforeRecordingStepThree).await;
}
