//! Client acks against a live server on SQLite: what an ack must carry
//! (bad input refused, changing nothing), who may send one, and acks
//! deleted with their ring. What the server judges from them is in
//! `convergence.rs`.

use crate::support::api::{expect_json, TestApi};
use crate::support::in_process::setup;
use crate::support::problem::{assert_problem, Problem};
use crate::support::ringd::Ringd;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// A fingerprint no placement has.
pub(super) const WRONG: &str = "00000000000000000000000000000000000000000000000000000000000000ff";

pub(super) fn ack_path(ring: &str, client: &str) -> String {
    format!("/v1/rings/{ring}/clients/{client}/ack")
}

pub(super) fn time_of(v: &Value) -> OffsetDateTime {
    OffsetDateTime::parse(v.as_str().expect("a time string"), &Rfc3339).expect("RFC 3339")
}

/// `(client_id, version, lag, on_latest, matches, divergent)` of each client.
pub(super) fn rows(list: &Value) -> Vec<(String, u64, u64, bool, Value, bool)> {
    list["clients"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["client_id"].as_str().unwrap().to_owned(),
                c["version"].as_u64().unwrap(),
                c["lag"].as_u64().unwrap(),
                c["on_latest"].as_bool().unwrap(),
                c["matches"].clone(),
                c["divergent"].as_bool().unwrap(),
            )
        })
        .collect()
}

pub(super) fn row(
    id: &str,
    v: u64,
    lag: u64,
    latest: bool,
    m: Value,
    div: bool,
) -> (String, u64, u64, bool, Value, bool) {
    (id.to_owned(), v, lag, latest, m, div)
}

pub(super) async fn metrics(s: &TestApi) -> String {
    let r = s.get("/metrics").await;
    assert_eq!(r.status(), StatusCode::OK);
    r.text().await.unwrap()
}

/// Registers `nodes` in ring `r`; returns the last version.
pub(super) async fn add_nodes(s: &TestApi, nodes: &[&str]) -> u64 {
    let mut version = 0;
    for n in nodes {
        let r = s.put(&format!("/v1/rings/r/nodes/{n}"), json!({})).await;
        version = expect_json(r, StatusCode::CREATED).await["version"]
            .as_u64()
            .unwrap();
    }
    version
}

#[tokio::test]
async fn bad_acks_are_refused_and_change_nothing() {
    let (s, (_, fp3)) = setup().await;
    let post = |path: String, body: Value| {
        let s = &s;
        async move { s.post(&path, body).await }
    };
    let good = json!({"version": 3, "fingerprint": fp3});
    let bad = StatusCode::BAD_REQUEST;
    let cases: Vec<(String, Value, &str, Option<&str>, &str)> = vec![
        (
            ack_path("r", "-web"),
            good.clone(),
            "invalid-input",
            Some("client_id"),
            "client id `-web` is invalid",
        ),
        (
            ack_path("r", "web%2F1"),
            good.clone(),
            "invalid-input",
            Some("client_id"),
            "starting with a letter or digit",
        ),
        (
            ack_path("Bad", "web"),
            good.clone(),
            "invalid-input",
            Some("ring"),
            "ring name `Bad` is invalid",
        ),
        (
            ack_path("r", "web"),
            json!({"version": 0, "fingerprint": fp3}),
            "invalid-input",
            Some("version"),
            "versions start at 1",
        ),
        (
            ack_path("r", "web"),
            json!({"version": -1, "fingerprint": fp3}),
            "invalid-input",
            Some("version"),
            "invalid value at `version`",
        ),
        (
            ack_path("r", "web"),
            json!({"version": "3", "fingerprint": fp3}),
            "invalid-input",
            Some("version"),
            "invalid value at `version`",
        ),
        (
            ack_path("r", "web"),
            json!({"fingerprint": fp3}),
            "invalid-input",
            Some("version"),
            "`version` is required",
        ),
        (
            ack_path("r", "web"),
            json!({"version": 3}),
            "invalid-input",
            Some("fingerprint"),
            "`fingerprint` is required",
        ),
        (
            ack_path("r", "web"),
            json!({"version": 3, "fingerprint": fp3.to_uppercase()}),
            "invalid-input",
            Some("fingerprint"),
            "64 lowercase hex digits",
        ),
        (
            ack_path("r", "web"),
            json!({"version": 3, "fingerprint": "abc"}),
            "invalid-input",
            Some("fingerprint"),
            "fingerprint `abc` is invalid",
        ),
        (
            ack_path("r", "web"),
            json!({"version": 3, "fingerprint": fp3, "extra": 1}),
            "invalid-input",
            Some("extra"),
            "unknown field `extra`",
        ),
        (
            ack_path("r", "web"),
            json!({"version": 3, "fingerprint": fp3, "kind": "sidecar"}),
            "invalid-input",
            Some("kind"),
            "unknown variant `sidecar`",
        ),
        (
            ack_path("r", "web"),
            json!({"version": 2, "fingerprint": fp3, "failure": {"version": 2, "error": "x"}}),
            "invalid-input",
            Some("failure.version"),
            "`failure.version` 2 is not newer than the applied version 2",
        ),
        (
            ack_path("r", "web"),
            json!({"version": 2, "fingerprint": fp3, "failure": {"error": "x"}}),
            "invalid-input",
            Some("failure.version"),
            "`failure.version` is required",
        ),
        (
            ack_path("r", "web"),
            json!({"version": 2, "fingerprint": fp3, "failure": {"version": 3, "error": " \n"}}),
            "invalid-input",
            Some("failure.error"),
            "`failure.error` is required",
        ),
        (
            ack_path("r", "web"),
            json!({"version": 2, "fingerprint": fp3, "failure": {"version": 3, "error": "e".repeat(2049)}}),
            "invalid-input",
            Some("failure.error"),
            "`failure.error` is 2049 characters; keep it to 2048",
        ),
        (
            ack_path("r", "web"),
            json!({"version": 2, "fingerprint": fp3, "failure": {"version": 3, "error": "x", "at": 1}}),
            "invalid-input",
            Some("failure.at"),
            "unknown field `at`",
        ),
    ];
    for (path, body, slug, field, detail) in cases {
        assert_problem(
            post(path, body).await,
            Problem::status(bad)
                .slug(slug)
                .field_opt(field)
                .detail_has(detail),
        )
        .await;
    }
    let malformed = s
        .req(Method::POST, &ack_path("r", "web"))
        .header("content-type", "application/json")
        .body("{\"version\": 3,")
        .send()
        .await
        .unwrap();
    assert_problem(
        malformed,
        Problem::status(bad)
            .slug("malformed-json")
            .detail_has("not valid JSON"),
    )
    .await;

    // A version the ring does not have yet: 409 naming the current one.
    let ahead = post(
        ack_path("r", "web"),
        json!({"version": 4, "fingerprint": fp3}),
    )
    .await;
    let p = assert_problem(
        ahead,
        Problem::status(409)
            .slug("conflict")
            .field("version")
            .detail_has("version 4 does not exist yet"),
    )
    .await;
    assert_eq!(p["current_version"], 3);

    let missing = post(ack_path("nope", "web"), good.clone()).await;
    assert_problem(
        missing,
        Problem::status(404)
            .slug("ring-not-found")
            .detail_has("ring `nope` does not exist"),
    )
    .await;
    let missing = s.get("/v1/rings/nope/clients").await;
    assert_problem(
        missing,
        Problem::status(404)
            .slug("ring-not-found")
            .detail_has("ring `nope` does not exist"),
    )
    .await;
    assert_problem(
        s.get("/v1/rings/Bad/clients").await,
        Problem::status(bad)
            .slug("invalid-input")
            .field("ring")
            .detail_has("is invalid"),
    )
    .await;

    let list = s.get_ok("/v1/rings/r/clients").await;
    assert_eq!(
        list,
        json!({"ring": "r", "version": 3, "fingerprint": fp3, "clients": [],
               "summary": {"clients": 0, "on_latest": 0, "on_latest_share": null, "divergent": 0, "failing": 0}})
    );
    let text = metrics(&s).await;
    assert!(text.contains("ringd_clients{ring=\"r\"} 0\n"), "{text}");
    assert!(!text.contains("ringd_clients_on_latest_ratio{"), "{text}");
    assert_eq!(s.state_of("r").await.0, 3, "acks never create versions");
}

#[tokio::test]
async fn deleting_a_ring_deletes_its_acks() {
    let (s, (_, fp3)) = setup().await;
    s.ack("web-1", 3, &fp3).await;
    assert_eq!(
        s.delete("/v1/rings/r").await.status(),
        StatusCode::NO_CONTENT
    );
    expect_json(s.put("/v1/rings/r", json!({})).await, StatusCode::CREATED).await;
    let list = s.get_ok("/v1/rings/r/clients").await;
    assert_eq!(list["clients"], json!([]));
}

#[tokio::test]
async fn clients_ack_with_the_read_token() {
    let s = Ringd::sqlite()
        .args(&["--admin-token", "adm", "--read-token", "rd"])
        .in_process()
        .start();
    let created = s
        .req(Method::PUT, "/v1/rings/r")
        .bearer_auth("adm")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    let fp = expect_json(created, StatusCode::CREATED).await["fingerprint"]
        .as_str()
        .unwrap()
        .to_owned();
    let body = json!({"version": 1, "fingerprint": fp});
    let anonymous = s.post(&ack_path("r", "web"), body.clone()).await;
    assert_problem(
        anonymous,
        Problem::status(401).slug("unauthorized").detail_has("read"),
    )
    .await;
    let r = s
        .req(Method::POST, &ack_path("r", "web"))
        .bearer_auth("rd")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(
        expect_json(r, StatusCode::OK).await["client"]["matches"],
        true
    );
    let r = s
        .req(Method::GET, "/v1/rings/r/clients")
        .bearer_auth("rd")
        .send()
        .await
        .unwrap();
    assert_eq!(
        expect_json(r, StatusCode::OK).await["summary"]["clients"],
        1
    );
}
