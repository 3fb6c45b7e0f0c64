//! What the rollout tests with client processes share, on any store: a
//! ring of ten nodes, the rollout that brings an eleventh in five ramped
//! steps, polling its record, and the check that the ring's history holds
//! each step exactly once.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};

use super::api::{expect_json, TestApi};
use super::followers::{Applied, Followers};

/// How long a rollout may take to reach a state in these tests: far above
/// what they need, so only a stuck rollout trips it.
pub(crate) const LIMIT: Duration = Duration::from_secs(60);

/// The summaries of the five steps that bring a weight-1 node in
/// (`docs/rollouts.md`: ramps `⌈i × 65,536 / 5⌉`, then full).
pub(crate) const SUMMARIES: [&str; 5] = [
    "n-new at 20.0% of weight 1",
    "n-new at 40.0% of weight 1",
    "n-new at 60.0% of weight 1",
    "n-new at 80.0% of weight 1",
    "n-new weight 1",
];

/// The rollout body that adds `n-new` under `policy`.
pub(crate) fn add_new(policy: Value) -> Value {
    json!({
        "ops": [{"op": "upsert", "node": {"id": "n-new", "address": "10.0.0.99:11211"}}],
        "reason": "add n-new",
        "policy": policy,
    })
}

/// The reason rollout 1 gives step `i` of `k` (of [`add_new`]).
pub(crate) fn step_reason(i: usize, k: usize, summary: &str) -> String {
    format!("rollout 1: step {i} of {k} ({summary}): add n-new")
}

/// Creates `api`'s ring with nodes `n-0` … `n-9` in one change (version 2);
/// returns that version, the base of the rollouts.
pub(crate) async fn ten_nodes(api: &TestApi) -> u64 {
    assert_eq!(api.create().await, 1);
    let ops: Vec<Value> = (0..10)
        .map(|i| json!({"op": "upsert", "node": {"id": format!("n-{i}")}}))
        .collect();
    let base = api.change(json!(ops)).await;
    assert_eq!(base, 2);
    base
}

/// The dry run of [`add_new`] under `policy`, checked to start at `base`
/// and to have `summaries`' steps; nothing is stored.
pub(crate) async fn dry_run(api: &TestApi, policy: Value, base: u64, summaries: &[&str]) -> Value {
    let mut body = add_new(policy);
    body["dry_run"] = json!(true);
    let plan = expect_json(
        api.post(&format!("/v1/rings/{}/rollouts", api.ring), body)
            .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(plan["base_version"], base, "{plan}");
    let got: Vec<&str> = plan["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["summary"].as_str().unwrap())
        .collect();
    assert_eq!(got, summaries, "{plan}");
    let last = &plan["steps"][summaries.len() - 1]["fingerprint"];
    assert_eq!(&plan["target_fingerprint"], last, "{plan}");
    plan
}

/// The planned fingerprint of each step.
pub(crate) fn fingerprints(plan: &Value) -> Vec<String> {
    plan["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["fingerprint"].as_str().unwrap().to_owned())
        .collect()
}

/// Starts rollout 1 of [`add_new`] under `policy`.
pub(crate) async fn start(api: &TestApi, policy: Value, steps: usize) -> Value {
    let r = api
        .post(&format!("/v1/rings/{}/rollouts", api.ring), add_new(policy))
        .await;
    let started = expect_json(r, StatusCode::CREATED).await;
    assert_eq!(
        (&started["id"], &started["steps"]),
        (&json!(1), &json!(steps))
    );
    started
}

/// `GET` rollout `id`.
pub(crate) async fn rollout(api: &TestApi, id: u64) -> Value {
    api.get_ok(&format!("/v1/rings/{}/rollouts/{id}", api.ring))
        .await
}

/// Polls rollout `id` until `done` says so; panics after [`LIMIT`].
pub(crate) async fn until(
    api: &TestApi,
    id: u64,
    what: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
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

/// The kinds of a rollout's events, oldest first.
pub(crate) fn event_kinds(r: &Value) -> Vec<&str> {
    r["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect()
}

/// `(client_id, version, matches)` of every live client, by id.
pub(crate) async fn listed(api: &TestApi) -> Vec<(String, u64, Value)> {
    let body = api.clients().await;
    let mut rows: Vec<(String, u64, Value)> = body["clients"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["client_id"].as_str().unwrap().to_owned(),
                c["version"].as_u64().unwrap(),
                c["matches"].clone(),
            )
        })
        .collect();
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    rows
}

/// `ids` each listed on exactly `version`, with the server's fingerprint.
pub(crate) fn all_on(ids: &[&str], version: u64) -> Vec<(String, u64, Value)> {
    ids.iter()
        .map(|id| ((*id).to_owned(), version, json!(true)))
        .collect()
}

/// Polls the client listing until it is `want`; panics after [`LIMIT`].
pub(crate) async fn wait_listing(api: &TestApi, want: &[(String, u64, Value)]) {
    let deadline = tokio::time::Instant::now() + LIMIT;
    loop {
        let rows = listed(api).await;
        if rows == want {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "clients never {want:?}: {rows:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Asserts that the ring's history after `base` is exactly the rollout's
/// steps, each once: versions `base + 1` … `base + k` in order, step `i`'s
/// reason, its planned fingerprint and the driver's idempotency key for
/// commit `i`, and nothing after them.
pub(crate) async fn assert_each_step_once(api: &TestApi, base: u64, plan: &Value) {
    let summaries: Vec<&str> = plan["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["summary"].as_str().unwrap())
        .collect();
    let k = summaries.len();
    let history = api.get_ok(&format!("/v1/rings/{}/history", api.ring)).await;
    let entries = history["entries"].as_array().unwrap();
    let versions: Vec<u64> = entries
        .iter()
        .map(|e| e["version"].as_u64().unwrap())
        .collect();
    let all: Vec<u64> = (1..=base + k as u64).collect();
    assert_eq!(
        versions, all,
        "every version once, none after the last step"
    );
    let steps: Vec<(u64, String, String, String)> = entries
        .iter()
        .filter(|e| e["version"].as_u64().unwrap() > base)
        .map(|e| {
            (
                e["version"].as_u64().unwrap(),
                e["reason"].as_str().unwrap().to_owned(),
                e["fingerprint"].as_str().unwrap().to_owned(),
                e["idempotency_key"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let want: Vec<(u64, String, String, String)> = summaries
        .iter()
        .zip(fingerprints(plan))
        .enumerate()
        .map(|(i, (summary, fp))| {
            (
                base + 1 + i as u64,
                step_reason(i + 1, k, summary),
                fp,
                format!("rollout-1-commit-{}", i + 1),
            )
        })
        .collect();
    assert_eq!(steps, want);
}

/// Asserts that a finished rollout recorded exactly one forward commit
/// per step, at versions `base + 1` … `base + k`, and ends on the plan's
/// target fingerprint.
pub(crate) async fn assert_done(api: &TestApi, done: &Value, base: u64, plan: &Value) {
    assert_eq!(done["state"], "done", "{done}");
    let fps = fingerprints(plan);
    let applied: Vec<(u64, u64, String, String)> = done["applied"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["step"].as_u64().unwrap(),
                a["version"].as_u64().unwrap(),
                a["direction"].as_str().unwrap().to_owned(),
                a["fingerprint"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let want: Vec<(u64, u64, String, String)> = fps
        .iter()
        .enumerate()
        .map(|(i, fp)| {
            (
                i as u64 + 1,
                base + 1 + i as u64,
                "forward".into(),
                fp.clone(),
            )
        })
        .collect();
    assert_eq!(applied, want, "{done}");
    assert_eq!(done["step"], fps.len(), "{done}");
    let (version, fingerprint) = api.state_of(&api.ring).await;
    assert_eq!(version, base + fps.len() as u64);
    assert_eq!(fingerprint, plan["target_fingerprint"].as_str().unwrap());
}

/// Asserts that each of `ids` printed exactly the base version and then
/// every step's version with the plan's fingerprint, in order.
pub(crate) async fn assert_followed(
    followers: &Followers,
    ids: &[&str],
    base: (u64, &str),
    plan: &Value,
) {
    let mut want = vec![Applied {
        version: base.0,
        fingerprint: base.1.to_owned(),
    }];
    for (i, fp) in fingerprints(plan).into_iter().enumerate() {
        want.push(Applied {
            version: base.0 + 1 + i as u64,
            fingerprint: fp,
        });
    }
    let last = want.last().unwrap().version;
    for id in ids {
        followers.wait_applied(id, last, LIMIT).await;
        assert_eq!(followers.applied(id), want, "{id}");
    }
}
