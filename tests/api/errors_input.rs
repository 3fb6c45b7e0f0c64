//! Every refusal of invalid or malformed input (names, ids, weights,
//! algorithms, unknown fields, JSON syntax, content type): its status, a
//! problem+json body whose detail names the problem and the field, and no
//! change to the ring (same version, same fingerprint).

use crate::support::api::rings;
use crate::support::in_process::setup;
use crate::support::problem::{assert_problem, Problem};
use reqwest::{Method, StatusCode};
use serde_json::json;

/// Asserts a 400 invalid-input problem blaming `field`.
async fn invalid(r: reqwest::Response, field: &str, detail: &str) {
    assert_problem(
        r,
        Problem::status(400)
            .slug("invalid-input")
            .field(field)
            .detail_has(detail),
    )
    .await;
}

#[tokio::test]
async fn invalid_names_and_ids() {
    let (s, before) = setup().await;
    for bad in ["Upper", "-dash", "a%2Fb", &"x".repeat(64)] {
        let r = s.put(&format!("/v1/rings/{bad}"), json!({})).await;
        invalid(r, "ring", "1–63 characters of a-z").await;
    }
    for bad in ["-n", "n%20m", "n%2Fm", &"n".repeat(129)] {
        let r = s.put(&format!("/v1/rings/r/nodes/{bad}"), json!({})).await;
        invalid(r, "node", "is invalid").await;
    }
    let r = s
        .post(
            "/v1/rings/r/changes",
            json!({"ops": [{"op": "upsert", "node": {"id": "bad id"}}]}),
        )
        .await;
    invalid(r, "ops[0].node.id", "node id `bad id` is invalid").await;
    let r = s
        .post(
            "/v1/rings/r/changes",
            json!({"ops": [{"op": "upsert", "node": {"weight": 2}}]}),
        )
        .await;
    invalid(r, "ops[0].node.id", "an upsert op needs `node.id`").await;
    let r = s
        .post(
            "/v1/rings/r/changes",
            json!({"ops": [{"op": "remove", "id": "a"}, {"op": "remove", "id": "Bad/Id"}]}),
        )
        .await;
    invalid(r, "ops[1].id", "node id `Bad/Id` is invalid").await;
    let r = s.put("/v1/rings/r/nodes/a", json!({"id": "b"})).await;
    invalid(r, "id", "the body names node `b` but the path names `a`").await;
    let r = s
        .put("/v1/rings/r/nodes/c", json!({"zone": "bad zone"}))
        .await;
    invalid(r, "zone", "zone `bad zone` is invalid").await;
    let r = s
        .put("/v1/rings/r/nodes/c", json!({"address": "has space"}))
        .await;
    invalid(r, "address", "address `has space` is invalid").await;
    let r = s
        .put("/v1/rings/r/nodes/c", json!({"state": "sleeping"}))
        .await;
    invalid(r, "state", "unknown variant `sleeping`").await;
    assert_eq!(s.state_of("r").await, before);
    assert_eq!(rings(&s).await, ["r"]);
}

#[tokio::test]
async fn weights_out_of_range() {
    let (s, before) = setup().await;
    for w in [json!(0), json!(1_000_001), json!(-1), json!(1.5)] {
        let r = s.put("/v1/rings/r/nodes/c", json!({"weight": w})).await;
        invalid(r, "weight", "weight").await;
    }
    let r = s
        .post(
            "/v1/rings/r/changes",
            json!({"ops": [{"op": "upsert", "node": {"id": "a", "weight": 0}}]}),
        )
        .await;
    invalid(r, "ops[0].node.weight", "weight 0 is out of range").await;
    assert_eq!(s.state_of("r").await, before);
}

#[tokio::test]
async fn unknown_algorithm_or_field() {
    let (s, before) = setup().await;
    let r = s.put("/v1/rings/new", json!({"algorithm": "chord"})).await;
    invalid(r, "algorithm", "unknown algorithm `chord`").await;
    // The refusal lists every field a config accepts, `membership` too.
    const ACCEPTED: &str = "expected one of `algorithm`, `hash`, `vnodes_per_weight`, \
                            `table_size`, `replication_factor`, `zone_aware`, `partitions`, \
                            `avalanche`, `hash_tag`, `minimum_ring_size`, `maximum_ring_size`, \
                            `membership`";
    let r = s
        .put(
            "/v1/rings/new",
            json!({"algorithm": "ring", "colour": "red"}),
        )
        .await;
    let detail = format!("invalid value at `colour`: unknown field `colour`, {ACCEPTED}");
    let body = assert_problem(
        r,
        Problem::status(400)
            .slug("invalid-input")
            .field("colour")
            .detail_has(&detail),
    )
    .await;
    assert_eq!(body["detail"], detail);
    let r = s
        .post(
            "/v1/rings/r/changes",
            json!({"ops": [{"op": "update_config", "config": {"membership": {}, "colour": "red"}}]}),
        )
        .await;
    let detail =
        format!("invalid value at `ops[0].config.colour`: unknown field `colour`, {ACCEPTED}");
    let body = assert_problem(
        r,
        Problem::status(400)
            .slug("invalid-input")
            .field("ops[0].config.colour")
            .detail_has(&detail),
    )
    .await;
    assert_eq!(body["detail"], detail);
    let r = s
        .put(
            "/v1/rings/new",
            json!({"algorithm": "ketama", "hash": "xxh3"}),
        )
        .await;
    invalid(r, "hash", "only supports hash `md5`").await;
    let r = s
        .put(
            "/v1/rings/new",
            json!({"algorithm": "maglev", "table_size": 100}),
        )
        .await;
    invalid(r, "table_size", "not prime").await;
    let r = s
        .post(
            "/v1/rings/r/changes",
            json!({"ops": [{"op": "set_config", "config": {"algorithm": "chord"}}]}),
        )
        .await;
    invalid(r, "ops[0].config.algorithm", "unknown algorithm `chord`").await;
    let r = s
        .post(
            "/v1/rings/r/changes",
            json!({"ops": [{"op": "upsert", "node": {"id": "c", "colour": "red"}}]}),
        )
        .await;
    invalid(r, "ops[0].node.colour", "unknown field `colour`").await;
    let r = s
        .post(
            "/v1/rings/r/changes",
            json!({"ops": [{"op": "remove", "id": "a", "node": {}}]}),
        )
        .await;
    invalid(r, "ops[0].node", "unknown field `node`").await;
    let r = s
        .post("/v1/rings/r/changes", json!({"ops": [{"op": "frob"}]}))
        .await;
    invalid(r, "ops[0].op", "unknown op `frob`").await;
    let r = s
        .post(
            "/v1/rings/r/changes",
            json!({"ops": [{"op": "remove", "id": "a"}], "dryrun": true}),
        )
        .await;
    invalid(r, "dryrun", "unknown field `dryrun`").await;
    let r = s.put("/v1/rings/r/nodes/c", json!({"wieght": 2})).await;
    invalid(r, "wieght", "unknown field `wieght`").await;
    let r = s.get("/v1/rings/r/lookup?key=k&replica=2").await;
    invalid(r, "replica", "unknown field `replica`").await;
    let r = s.get("/v1/rings/r/lookup?replicas=2").await;
    invalid(r, "key", "`key` is required").await;
    let r = s.get("/v1/rings/r/lookup?key=k&replicas=65").await;
    invalid(r, "replicas", "replicas 65 is out of range").await;
    let r = s.post("/v1/rings/r/changes", json!({"ops": []})).await;
    invalid(r, "ops", "at least one op").await;
    let r = s
        .post(
            "/v1/rings/r/changes",
            json!({"ops": [{"op": "remove", "id": "a"}], "reason": "x".repeat(1025)}),
        )
        .await;
    invalid(r, "reason", "at most 1024").await;
    assert_eq!(s.state_of("r").await, before);
    assert_eq!(rings(&s).await, ["r"]);
}
#[tokio::test]
async fn malformed_json_and_wrong_content_type() {
    let (s, before) = setup().await;
    let send = |ct: Option<&'static str>, body: &'static str| {
        let mut r = s.req(Method::POST, "/v1/rings/r/changes").body(body);
        if let Some(ct) = ct {
            r = r.header("content-type", ct);
        }
        r.send()
    };
    let r = send(
        Some("application/json"),
        r#"{"ops": [{"op": "remove", "id": "a"}"#,
    )
    .await
    .unwrap();
    assert_problem(
        r,
        Problem::status(400)
            .slug("malformed-json")
            .detail_has("not valid JSON"),
    )
    .await;
    let r = send(Some("application/json"), r#"{"ops": []} trailing"#)
        .await
        .unwrap();
    assert_problem(
        r,
        Problem::status(400)
            .slug("malformed-json")
            .detail_has("trailing characters"),
    )
    .await;
    let r = send(Some("application/json"), "").await.unwrap();
    assert_problem(
        r,
        Problem::status(400)
            .slug("malformed-json")
            .detail_has("EOF"),
    )
    .await;
    let r = send(
        Some("text/plain"),
        r#"{"ops": [{"op": "remove", "id": "a"}]}"#,
    )
    .await
    .unwrap();
    assert_problem(
        r,
        Problem::status(415)
            .slug("unsupported-media-type")
            .field("Content-Type")
            .detail_has("`text/plain` is not accepted"),
    )
    .await;
    let r = send(None, r#"{"ops": [{"op": "remove", "id": "a"}]}"#)
        .await
        .unwrap();
    assert_problem(
        r,
        Problem::status(415)
            .slug("unsupported-media-type")
            .field("Content-Type")
            .detail_has("no Content-Type"),
    )
    .await;
    let r = send(
        Some("application/json; charset=utf-8"),
        r#"{"ops": [{"op": "remove", "id": "a"}], "dry_run": true}"#,
    )
    .await
    .unwrap();
    assert_eq!(
        r.status(),
        StatusCode::OK,
        "parameters on the media type are fine"
    );
    assert_eq!(s.state_of("r").await, before);
}
