//! Long-poll: `GET …/snapshot?after=N&wait=D`.

use std::time::{Duration, Instant};

use crate::support::api::expect_json;
use crate::support::in_process::setup;
use crate::support::problem::{assert_problem, Problem};
use reqwest::StatusCode;
use serde_json::json;

#[tokio::test]
async fn returns_at_once_when_the_ring_is_already_past() {
    let (s, (version, _)) = setup().await;
    assert_eq!(version, 3);
    let r = s.get("/v1/rings/r/snapshot?after=1&wait=30s").await;
    assert_eq!(r.headers()["etag"], "\"3\"");
    assert_eq!(r.headers().get("ringd-reset"), None);
    let body = expect_json(r, StatusCode::OK).await;
    assert_eq!(body, s.get_ok("/v1/rings/r/snapshots/3").await);
}

#[tokio::test]
async fn wakes_up_on_the_next_version() {
    let (s, _) = setup().await;
    let url = format!("{}/v1/rings/r/snapshot?after=3&wait=20s", s.url);
    let started = Instant::now();
    let poll = tokio::spawn(async move { reqwest::get(url).await.unwrap() });
    // Wait until the poll is parked, then change the ring.
    while s.metric("ringd_long_polls_waiting").await != 1 {
        assert!(started.elapsed() < Duration::from_secs(5), "never waited");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let r = s.put("/v1/rings/r/nodes/c", json!({})).await;
    assert_eq!(r.status(), StatusCode::CREATED);
    let answer = poll.await.unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "it waited out the timeout"
    );
    assert_eq!(answer.headers()["etag"], "\"4\"");
    let body = expect_json(answer, StatusCode::OK).await;
    assert_eq!(body["version"], 4);
    assert_eq!(body, s.get_ok("/v1/rings/r/snapshots/4").await);
    assert_eq!(s.metric("ringd_long_polls_waiting").await, 0);
}

#[tokio::test]
async fn times_out_with_304() {
    let (s, _) = setup().await;
    let started = Instant::now();
    let r = s.get("/v1/rings/r/snapshot?after=3&wait=300ms").await;
    let waited = started.elapsed();
    assert_eq!(r.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(r.headers()["etag"], "\"3\"");
    // 300 ms plus at most 1/16 of jitter, with room for a slow machine.
    assert!(waited >= Duration::from_millis(300), "{waited:?}");
    // Without `wait` the answer is immediate.
    let r = s.get("/v1/rings/r/snapshot?after=3").await;
    assert_eq!(r.status(), StatusCode::NOT_MODIFIED);
}

#[tokio::test]
async fn a_ring_below_the_clients_version_says_reset() {
    let (s, _) = setup().await;
    let r = s.get("/v1/rings/r/snapshot?after=9&wait=10s").await;
    assert_eq!(r.headers()["ringd-reset"], "true");
    assert_eq!(r.headers()["etag"], "\"3\"");
    let body = expect_json(r, StatusCode::OK).await;
    assert_eq!(body["version"], 3);
}

#[tokio::test]
async fn bad_long_polls_are_refused() {
    let (s, _) = setup().await;
    for (query, field, detail) in [
        (
            "?after=3&wait=soon",
            "wait",
            "`soon` is not a duration: use e.g. 500ms, 15s, 5m or 1h",
        ),
        (
            "?after=3&wait=5x",
            "wait",
            "`5x` has an unknown unit: use ms, s, m or h",
        ),
        (
            "?after=3&wait=6m",
            "wait",
            "wait `6m` is above the 5m maximum; use 1ms to 5m",
        ),
        (
            "?after=3&wait=0",
            "wait",
            "wait `0` is below the 1ms minimum; use 1ms to 5m",
        ),
        (
            "?wait=10s",
            "wait",
            "`wait` needs `after`, the version the client holds",
        ),
        ("?after=-1", "after", "after"),
        ("?version=2", "version", "version"),
    ] {
        assert_problem(
            s.get(&format!("/v1/rings/r/snapshot{query}")).await,
            Problem::status(400)
                .slug("invalid-input")
                .field(field)
                .detail_has(detail),
        )
        .await;
    }
    assert_problem(
        s.get("/v1/rings/nope/snapshot?after=1&wait=1s").await,
        Problem::status(404)
            .slug("ring-not-found")
            .detail_has("ring `nope` does not exist"),
    )
    .await;
}
