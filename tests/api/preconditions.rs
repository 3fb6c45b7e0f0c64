//! Preconditions count only where the request could otherwise succeed
//! (RFC 9110 §13.2.1): a mutation of a ring that does not exist is a 404
//! whatever its `If-Match` and `expected_version` say, even when the two
//! contradict each other. (schemathesis found these answering 400.)

use crate::support::api::rings;
use crate::support::in_process::setup;
use crate::support::problem::{assert_problem, Problem};
use reqwest::Method;
use serde_json::json;

#[tokio::test]
async fn a_missing_ring_is_404_whatever_the_precondition() {
    let (s, before) = setup().await;
    let requests = [
        (Method::DELETE, "/v1/rings/nope?expected_version=2", None),
        (
            Method::PUT,
            "/v1/rings/nope/nodes/c?expected_version=2",
            Some(json!({})),
        ),
        (
            Method::DELETE,
            "/v1/rings/nope/nodes/a?expected_version=2",
            None,
        ),
        (
            Method::POST,
            "/v1/rings/nope/changes",
            Some(json!({"ops": [{"op": "remove", "id": "a"}], "expected_version": 2})),
        ),
    ];
    for (method, path, body) in requests {
        // Contradictory (`"3"` against 2) and malformed (`3` unquoted).
        for if_match in ["\"3\"", "3"] {
            let mut r = s.req(method.clone(), path).header("if-match", if_match);
            if let Some(body) = &body {
                r = r.json(body);
            }
            let r = r.send().await.unwrap();
            assert_problem(
                r,
                Problem::status(404)
                    .slug("ring-not-found")
                    .detail_has("ring `nope`"),
            )
            .await;
        }
    }
    assert_eq!(rings(&s).await, ["r"]);
    assert_eq!(s.state_of("r").await, before);
}

#[tokio::test]
async fn an_existing_ring_still_refuses_contradictory_preconditions() {
    let (s, before) = setup().await;
    for (method, path) in [
        (Method::DELETE, "/v1/rings/r?expected_version=2"),
        (Method::DELETE, "/v1/rings/r/nodes/a?expected_version=2"),
    ] {
        let r = s
            .req(method, path)
            .header("if-match", "\"3\"")
            .send()
            .await
            .unwrap();
        assert_problem(
            r,
            Problem::status(400)
                .slug("invalid-input")
                .field("expected_version")
                .detail_has("If-Match names version 3 but expected_version is 2; send one of them"),
        )
        .await;
    }
    let r = s
        .req(Method::POST, "/v1/rings/r/changes")
        .header("if-match", "\"3\"")
        .json(&json!({"ops": [{"op": "remove", "id": "a"}], "expected_version": 2}))
        .send()
        .await
        .unwrap();
    assert_problem(
        r,
        Problem::status(400)
            .slug("invalid-input")
            .field("expected_version")
            .detail_has("send one of them"),
    )
    .await;
    assert_eq!(s.state_of("r").await, before);
}
