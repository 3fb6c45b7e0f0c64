//! Free text (reasons, addresses, label values, hash keys) with control
//! characters, line separators or bidirectional formatting characters is
//! refused where it arrives: 400 invalid-input naming the exact field,
//! and the ring unchanged.

use crate::support::in_process::setup;
use crate::support::problem::{assert_problem, Problem};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

/// One request: method, path (with its query), JSON body.
struct Case {
    method: Method,
    path: &'static str,
    body: Option<Value>,
    field: &'static str,
    detail: &'static str,
}

fn case(
    method: Method,
    path: &'static str,
    body: Option<Value>,
    field: &'static str,
    detail: &'static str,
) -> Case {
    Case {
        method,
        path,
        body,
        field,
        detail,
    }
}

#[tokio::test]
async fn refused_characters_name_their_field() {
    let (s, before) = setup().await;
    let changes = "/v1/rings/r/changes";
    let upsert = |node: Value| Some(json!({"ops": [{"op": "upsert", "node": node}]}));
    let cases = [
        // ESC ] 0 ; … BEL sets a terminal's title.
        case(
            Method::POST,
            changes,
            Some(json!({"ops": [{"op": "remove", "id": "a"}], "reason": "ok\u{1b}]0;pwned\u{7}"})),
            "reason",
            "`reason` contains U+001B (a control character) at byte 2: control characters, line separators and bidirectional formatting characters are refused in text",
        ),
        case(
            Method::POST,
            changes,
            Some(json!({"ops": [{"op": "remove", "id": "a"}], "reason": "line\nversion 9 at …"})),
            "reason",
            "U+000A (a control character) at byte 4",
        ),
        case(
            Method::POST,
            changes,
            Some(json!({"ops": [{"op": "remove", "id": "a"}], "reason": "abc\u{202e}fed"})),
            "reason",
            "U+202E (a bidirectional formatting character) at byte 3",
        ),
        case(
            Method::POST,
            changes,
            Some(json!({"ops": [{"op": "remove", "id": "a"}], "reason": "a\u{2028}b"})),
            "reason",
            "U+2028 (a line or paragraph separator) at byte 1",
        ),
        case(
            Method::POST,
            changes,
            Some(json!({"ops": [{"op": "remove", "id": "a"}], "reason": "c1 \u{9b}2J"})),
            "reason",
            "U+009B (a control character) at byte 3",
        ),
        case(
            Method::PUT,
            "/v1/rings/r/nodes/c?reason=x%1B%5B2J",
            Some(json!({})),
            "reason",
            "U+001B (a control character) at byte 1",
        ),
        case(
            Method::DELETE,
            "/v1/rings/r/nodes/a?reason=%E2%80%AE",
            None,
            "reason",
            "U+202E (a bidirectional formatting character) at byte 0",
        ),
        case(
            Method::PUT,
            "/v1/rings/r/nodes/c",
            Some(json!({"labels": {"team": "ops\u{1b}[31m"}})),
            "labels.team",
            "the value of label `team` is invalid",
        ),
        case(
            Method::PUT,
            "/v1/rings/r/nodes/c",
            Some(json!({"labels": {"team": "ops\u{2066}x"}})),
            "labels.team",
            "`labels.team` contains U+2066 (a bidirectional formatting character) at byte 3",
        ),
        case(
            Method::PUT,
            "/v1/rings/r/nodes/c",
            Some(json!({"labels": {"te\u{1b}am": "x"}})),
            "labels",
            "label key `te\\u{1b}am` is invalid",
        ),
        case(
            Method::PUT,
            "/v1/rings/r/nodes/c",
            Some(json!({"address": "10.0.0.1\u{200f}:80"})),
            "address",
            "`address` contains U+200F (a bidirectional formatting character) at byte 8",
        ),
        case(
            Method::PUT,
            "/v1/rings/r/nodes/c",
            Some(json!({"address": "10.0.0.1\u{1b}"})),
            "address",
            "address `10.0.0.1\\u{1b}` is invalid",
        ),
        case(
            Method::PUT,
            "/v1/rings/r/nodes/c",
            Some(json!({"hash_key": "old-\u{202d}c"})),
            "hash_key",
            "`hash_key` contains U+202D (a bidirectional formatting character) at byte 4",
        ),
        case(
            Method::POST,
            changes,
            upsert(json!({"id": "c", "labels": {"team": "a\u{7f}"}})),
            "ops[0].node.labels.team",
            "the value of label `team` is invalid",
        ),
        case(
            Method::POST,
            changes,
            upsert(json!({"id": "c", "labels": {"team": "a\u{61c}"}})),
            "ops[0].node.labels.team",
            "`labels.team` contains U+061C",
        ),
        case(
            Method::POST,
            changes,
            Some(json!({"ops": [
                {"op": "upsert", "node": {"id": "c"}},
                {"op": "upsert", "node": {"id": "d", "hash_key": "k\u{2029}"}}]})),
            "ops[1].node.hash_key",
            "U+2029 (a line or paragraph separator) at byte 1",
        ),
        case(
            Method::POST,
            changes,
            upsert(json!({"id": "c", "address": "h\u{85}:1"})),
            "ops[0].node.address",
            "address `h\\u{85}:1` is invalid",
        ),
    ];
    for c in cases {
        let mut req = s.req(c.method.clone(), c.path);
        if let Some(body) = &c.body {
            req = req.json(body);
        }
        let r = req.send().await.unwrap();
        assert_problem(
            r,
            Problem::status(400)
                .slug("invalid-input")
                .field(c.field)
                .detail_has(c.detail),
        )
        .await;
    }
    assert_eq!(s.state_of("r").await, before);

    // Text of any script, emoji sequences and tabs-free punctuation pass.
    let r = s
        .put(
            "/v1/rings/r/nodes/c?reason=%E6%89%A9%E5%AE%B9",
            json!({"labels": {"team": "数据库 👩\u{200d}💻", "note": "a\\b \"q\""},
                   "address": "节点-3:11211", "hash_key": "ключ"}),
        )
        .await;
    let body = crate::support::api::expect_json(r, StatusCode::CREATED).await;
    assert_eq!(body["version"], 4);
    let node = s.get_ok("/v1/rings/r/nodes/c").await;
    assert_eq!(node["labels"]["team"], "数据库 👩\u{200d}💻");
    assert_eq!(node["address"], "节点-3:11211");
    let history = s.get_ok("/v1/rings/r/history").await;
    let entries = history["entries"].as_array().unwrap();
    assert_eq!(entries.last().unwrap()["reason"], "扩容");
}
