//! `Idempotency-Key`: a retried change is answered with the version its
//! first attempt committed, never applied twice.

use crate::support::api::{expect_json, TestApi};
use crate::support::in_process::setup;
use crate::support::problem::{assert_problem, Problem};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

/// POSTs a change with `Idempotency-Key: key`.
async fn post_keyed(s: &TestApi, key: &str, body: &Value) -> reqwest::Response {
    s.req(Method::POST, "/v1/rings/r/changes")
        .header("Idempotency-Key", key)
        .json(body)
        .send()
        .await
        .expect("POST")
}

async fn versions(s: &TestApi) -> Vec<u64> {
    s.get_ok("/v1/rings/r/history").await["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["version"].as_u64().unwrap())
        .collect()
}

#[tokio::test]
async fn a_retry_returns_the_first_commit() {
    let (s, _) = setup().await;
    let add_c = json!({"ops": [{"op": "upsert", "node": {"id": "c"}}], "expected_version": 3});
    let first = expect_json(post_keyed(&s, "k-1", &add_c).await, StatusCode::OK).await;
    assert_eq!(first["version"], 4);
    assert_eq!(first["changed"], true);
    assert_eq!(first.get("replayed"), None, "{first}");

    // The response was "lost"; the client sends the same request again.
    let again = post_keyed(&s, "k-1", &add_c).await;
    assert_eq!(again.headers()["etag"], "\"4\"");
    let mut again = expect_json(again, StatusCode::OK).await;
    assert_eq!(again["replayed"], true, "{again}");
    again.as_object_mut().unwrap().remove("replayed");
    assert_eq!(again, first, "the replay repeats the first answer");
    assert_eq!(versions(&s).await, [1, 2, 3, 4]);

    // Another change moves the ring on; the retry still finds its version
    // even though its expected_version (3) is long gone.
    let add_d = json!({"ops": [{"op": "upsert", "node": {"id": "d"}}]});
    let d = expect_json(s.post("/v1/rings/r/changes", add_d).await, StatusCode::OK).await;
    assert_eq!(d["version"], 5);
    let late = expect_json(post_keyed(&s, "k-1", &add_c).await, StatusCode::OK).await;
    assert_eq!(
        (&late["version"], &late["base_version"], &late["replayed"]),
        (&json!(4), &json!(3), &json!(true))
    );
    assert_eq!(versions(&s).await, [1, 2, 3, 4, 5]);

    // The key is kept in the version's history entry.
    let history = s.get_ok("/v1/rings/r/history").await;
    assert_eq!(history["entries"][3]["idempotency_key"], "k-1");
    assert_eq!(history["entries"][4].get("idempotency_key"), None);
    let v4 = s.get_ok("/v1/rings/r/snapshots/4").await;
    assert_eq!(v4["change"]["idempotency_key"], "k-1", "{v4}");

    // A new key is a new change: its precondition is checked as usual...
    assert_problem(
        post_keyed(&s, "k-2", &add_c).await,
        Problem::status(412)
            .slug("precondition-failed")
            .detail_has("ring is at version 5, not the expected 3"),
    )
    .await;
    // ...and without one it applies (here a no-op: no version).
    let add_c_anyway = json!({"ops": [{"op": "upsert", "node": {"id": "c"}}]});
    let fresh = expect_json(post_keyed(&s, "k-2", &add_c_anyway).await, StatusCode::OK).await;
    assert_eq!(
        (&fresh["changed"], &fresh["version"]),
        (&json!(false), &json!(5))
    );
}

#[tokio::test]
async fn node_routes_take_keys_too() {
    let (s, _) = setup().await;
    let put = || async {
        s.req(Method::PUT, "/v1/rings/r/nodes/c")
            .header("Idempotency-Key", "put-c")
            .json(&json!({"weight": 2}))
            .send()
            .await
            .unwrap()
    };
    let first = expect_json(put().await, StatusCode::CREATED).await;
    assert_eq!(first["version"], 4);
    let again = expect_json(put().await, StatusCode::OK).await;
    assert_eq!(
        (&again["version"], &again["replayed"]),
        (&json!(4), &json!(true))
    );
    let delete = || async {
        s.req(Method::DELETE, "/v1/rings/r/nodes/a")
            .header("Idempotency-Key", "drop-a")
            .send()
            .await
            .unwrap()
    };
    assert_eq!(
        expect_json(delete().await, StatusCode::OK).await["version"],
        5
    );
    // Without the key the retry would be a 404: node `a` is gone.
    let again = expect_json(delete().await, StatusCode::OK).await;
    assert_eq!(
        (&again["version"], &again["replayed"]),
        (&json!(5), &json!(true))
    );
    assert_eq!(versions(&s).await, [1, 2, 3, 4, 5]);
}

#[tokio::test]
async fn concurrent_attempts_commit_once() {
    let (s, _) = setup().await;
    let body = json!({"ops": [{"op": "upsert", "node": {"id": "c", "weight": 7}}]});
    let attempts = (0..8).map(|_| post_keyed(&s, "same", &body));
    let mut answers = Vec::new();
    for r in futures::future::join_all(attempts).await {
        answers.push(expect_json(r, StatusCode::OK).await);
    }
    let committed: Vec<u64> = answers
        .iter()
        .map(|a| a["version"].as_u64().unwrap())
        .collect();
    assert_eq!(committed, [4; 8], "every attempt names the one version");
    let replays = answers.iter().filter(|a| a["replayed"] == true).count();
    assert_eq!(replays, 7, "one attempt committed, seven replayed it");
    assert_eq!(versions(&s).await, [1, 2, 3, 4]);
}

#[tokio::test]
async fn a_reused_key_or_a_bad_key_is_refused() {
    let (s, state) = setup().await;
    let add_c = json!({"ops": [{"op": "upsert", "node": {"id": "c"}}]});
    expect_json(post_keyed(&s, "k", &add_c).await, StatusCode::OK).await;
    let after = s.state_of("r").await;
    let add_e = json!({"ops": [{"op": "upsert", "node": {"id": "e"}}]});
    assert_problem(post_keyed(&s, "k", &add_e).await, Problem::status(422).slug("idempotency-key-reused").field("Idempotency-Key").detail_has("Idempotency-Key `k` was already used for a different change (version 4); use a new key for a new change"))
    .await;
    assert_eq!(s.state_of("r").await, after, "nothing changed");
    assert_ne!(after, state);

    let long = "x".repeat(256);
    for bad in ["", "has space", "caf\u{e9}", long.as_str()] {
        assert_problem(
            post_keyed(&s, bad, &add_e).await,
            Problem::status(400)
                .slug("invalid-input")
                .field("Idempotency-Key")
                .detail_has("use 1–255 visible ASCII characters, e.g. a UUID"),
        )
        .await;
    }
    let two = s
        .req(Method::POST, "/v1/rings/r/changes")
        .header("Idempotency-Key", "a")
        .header("Idempotency-Key", "b")
        .json(&add_e)
        .send()
        .await
        .unwrap();
    assert_problem(
        two,
        Problem::status(400)
            .slug("invalid-input")
            .field("Idempotency-Key")
            .detail_has("send one Idempotency-Key header, not several"),
    )
    .await;
    assert_eq!(s.state_of("r").await, after, "nothing changed");
    // A key of exactly 255 characters is fine.
    let max = "y".repeat(255);
    let ok = expect_json(post_keyed(&s, &max, &add_e).await, StatusCode::OK).await;
    assert_eq!(ok["version"], 5);
}
