//! Rollout requests a server refuses, each with a clear 4xx that names
//! the field, and none of them changing the ring.
#![cfg(feature = "server")]

use reqwest::StatusCode;
use serde_json::{json, Value};

use super::rollouts::add_new;
use crate::support::api::expect_json;
use crate::support::ringd::Ringd;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn refused_rollout_requests_change_nothing() {
    let s = Ringd::sqlite().start();
    let api = s.api().for_ring("j");
    api.create_with(json!({"algorithm": "jump"})).await;
    let v = api.add_each(&["a", "b"]).await;
    let post = |body: Value| api.post("/v1/rings/j/rollouts", body);
    let jump = expect_json(
        post(add_new(json!({"steps": 2}))).await,
        StatusCode::UNPROCESSABLE_ENTITY,
    )
    .await;
    assert_eq!(
        (&jump["reason"], &jump["field"]),
        (&json!("single_step_only"), &json!("policy.steps"))
    );
    assert!(
        jump["detail"]
            .as_str()
            .unwrap()
            .starts_with("this change takes a single step: jump rings take no steps"),
        "{jump}"
    );
    let zero = expect_json(
        post(add_new(json!({"steps": 0}))).await,
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert_eq!(
        (&zero["field"], &zero["detail"]),
        (
            &json!("policy.steps"),
            &json!("0 is out of range: use 1 to 100 steps")
        )
    );
    let gate = expect_json(
        post(add_new(json!({"steps": 1, "gate": 2}))).await,
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert_eq!(gate["field"], "policy.gate");
    let unknown = expect_json(
        post(add_new(json!({"steps": 1, "pace": "fast"}))).await,
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert_eq!(unknown["field"], "policy.pace");
    let stale = {
        let mut b = add_new(json!({"steps": 1}));
        b["expected_version"] = json!(v - 1);
        expect_json(post(b).await, StatusCode::PRECONDITION_FAILED).await
    };
    assert_eq!(stale["current_version"], v);
    for (path, status, field) in [
        ("/v1/rings/j/rollouts/9", StatusCode::NOT_FOUND, "rollout"),
        ("/v1/rings/j/rollouts/0", StatusCode::NOT_FOUND, "rollout"),
        ("/v1/rings/j/rollouts/x", StatusCode::BAD_REQUEST, "rollout"),
    ] {
        let p = expect_json(api.get(path).await, status).await;
        assert_eq!(p["field"], field, "{path}: {p}");
    }
    let p = expect_json(
        api.post("/v1/rings/j/rollouts/9/pause", json!({})).await,
        StatusCode::NOT_FOUND,
    )
    .await;
    assert_eq!(
        p["detail"],
        "ring `j` has no rollout 9; GET /v1/rings/j/rollouts lists them"
    );
    assert_eq!(api.state_of("j").await.0, v);
    assert_eq!(
        api.get_ok("/v1/rings/j/rollouts").await["rollouts"],
        json!([])
    );
    // A one-step rollout of a jump ring is fine.
    let one = expect_json(
        post(add_new(json!({"steps": 1}))).await,
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(one["steps"], 1);
}
