//! `Ringd-Timeout`: how long a client lets a change wait for the store.
//! Refused when it is not a duration in range, honoured otherwise.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::support::in_process::setup;
use crate::support::problem::{assert_problem, Problem};

#[tokio::test]
async fn a_bad_ringd_timeout_is_refused_and_changes_nothing() {
    let (s, before) = setup().await;
    for (value, detail) in [
        (
            "soon",
            "`soon` is not a duration: use e.g. 500ms, 15s, 5m or 1h",
        ),
        (
            "50ms",
            "Ringd-Timeout `50ms` is below the 100ms minimum; use 100ms to 5m",
        ),
        (
            "6m",
            "Ringd-Timeout `6m` is above the 5m maximum; use 100ms to 5m",
        ),
    ] {
        let r = s
            .req(Method::PUT, "/v1/rings/r/nodes/n1")
            .header("Ringd-Timeout", value)
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        let problem = assert_problem(
            r,
            Problem::status(400)
                .slug("invalid-input")
                .field("Ringd-Timeout")
                .detail_has(detail),
        )
        .await;
        assert_eq!(problem["detail"], detail, "{problem}");
    }
    assert_eq!(s.state_of("r").await, before);
    // In range, it is honoured: the change commits.
    let r = s
        .req(Method::PUT, "/v1/rings/r/nodes/n1")
        .header("Ringd-Timeout", "10s")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::CREATED);
    assert_eq!(s.state_of("r").await.0, before.0 + 1);
}
