//! Client convergence acks against a live server on SQLite: acks listed
//! with exact fields, divergent fingerprints flagged and counted, lag after
//! further changes, expiry, bad input refused, and acks deleted with their
//! ring.


use std::time::Duration;

use crate::support::ringd::{expect_json, expect_problem, setup, Server};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// A fingerprint no placement has.
const WRONG: &str = "00000000000000000000000000000000000000000000000000000000000000ff";

fn ack_path(ring: &str, client: &str) -> String {
    format!("/v1/rings/{ring}/clients/{client}/ack")
}

/// POSTs an ack, asserting 200; returns the body.
async fn ack(s: &Server, client: &str, version: u64, fingerprint: &str) -> Value {
    let body = json!({"version": version, "fingerprint": fingerprint});
    expect_json(s.post(&ack_path("r", client), body).await, StatusCode::OK).await
}

fn time_of(v: &Value) -> OffsetDateTime {
    OffsetDateTime::parse(v.as_str().expect("a time string"), &Rfc3339).expect("RFC 3339")
}

/// `(client_id, version, lag, on_latest, matches, divergent)` of each client.
fn rows(list: &Value) -> Vec<(String, u64, u64, bool, Value, bool)> {
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

fn row(
    id: &str,
    v: u64,
    lag: u64,
    latest: bool,
    m: Value,
    div: bool,
) -> (String, u64, u64, bool, Value, bool) {
    (id.to_owned(), v, lag, latest, m, div)
}

async fn metrics(s: &Server) -> String {
    let r = s.get("/metrics").await;
    assert_eq!(r.status(), StatusCode::OK);
    r.text().await.unwrap()
}

#[tokio::test]
async fn acks_are_listed_judged_and_counted() {
    let (s, (v3, fp3)) = setup().await;
    assert_eq!(v3, 3);
    let fp2 = s.get_ok("/v1/rings/r/snapshots/2").await["fingerprint"]
        .as_str()
        .unwrap()
        .to_owned();

    let first = ack(&s, "web-1", 3, &fp3).await;
    let last_seen = time_of(&first["client"]["last_seen"]);
    let expires_at = time_of(&first["client"]["expires_at"]);
    assert_eq!(
        expires_at - last_seen,
        Duration::from_secs(300),
        "default TTL"
    );
    let age = OffsetDateTime::now_utc() - last_seen;
    assert!(
        age >= time::Duration::ZERO && age < Duration::from_secs(30),
        "{age}"
    );
    let expected_client = json!({
        "client_id": "web-1", "version": 3, "fingerprint": fp3, "lag": 0,
        "last_seen": first["client"]["last_seen"], "expires_at": first["client"]["expires_at"],
        "on_latest": true, "matches": true, "divergent": false,
    });
    assert_eq!(
        first,
        json!({"ring": "r", "version": 3, "fingerprint": fp3, "client": expected_client})
    );

    let behind = ack(&s, "web-0", 2, &fp2).await;
    assert_eq!(
        (&behind["client"]["lag"], &behind["client"]["matches"]),
        (&json!(1), &json!(true))
    );
    let wrong = ack(&s, "web-2", 3, WRONG).await;
    assert_eq!(
        (&wrong["client"]["matches"], &wrong["client"]["divergent"]),
        (&json!(false), &json!(true))
    );

    let list = s.get_ok("/v1/rings/r/clients").await;
    assert_eq!(
        (&list["ring"], &list["version"], &list["fingerprint"]),
        (&json!("r"), &json!(3), &json!(fp3))
    );
    assert_eq!(
        list["clients"][1], expected_client,
        "the stored ack, unchanged"
    );
    assert_eq!(
        rows(&list),
        vec![
            row("web-0", 2, 1, false, json!(true), false),
            row("web-1", 3, 0, true, json!(true), false),
            row("web-2", 3, 0, true, json!(false), true),
        ]
    );
    assert_eq!(list["clients"][2]["fingerprint"], WRONG);
    assert_eq!(
        list["summary"],
        json!({"clients": 3, "on_latest": 2, "on_latest_share": 2.0 / 3.0, "divergent": 1})
    );
    let text = metrics(&s).await;
    for line in [
        "ringd_clients{ring=\"r\"} 3\n",
        "ringd_clients_on_latest_ratio{ring=\"r\"} 0.6666666666666666\n",
        "ringd_clients_divergent{ring=\"r\"} 1\n",
        "# TYPE ringd_clients_on_latest_ratio gauge\n",
    ] {
        assert!(text.contains(line), "{line:?} missing from:\n{text}");
    }

    // Two more versions: everyone falls behind by exactly two.
    assert_eq!(add_nodes(&s, &["c", "d"]).await, 5);
    let list = s.get_ok("/v1/rings/r/clients").await;
    assert_eq!(list["version"], 5);
    assert_eq!(
        rows(&list),
        vec![
            row("web-0", 2, 3, false, json!(true), false),
            row("web-1", 3, 2, false, json!(true), false),
            row("web-2", 3, 2, false, json!(false), true),
        ]
    );
    assert_eq!(
        list["summary"],
        json!({"clients": 3, "on_latest": 0, "on_latest_share": 0.0, "divergent": 1})
    );
    assert!(metrics(&s)
        .await
        .contains("ringd_clients_on_latest_ratio{ring=\"r\"} 0\n"));

    // A client catching up replaces its earlier ack.
    let (_, fp5) = s.state_of("r").await;
    ack(&s, "web-2", 5, &fp5).await;
    let list = s.get_ok("/v1/rings/r/clients").await;
    assert_eq!(rows(&list)[2], row("web-2", 5, 0, true, json!(true), false));
    assert_eq!(
        list["summary"],
        json!({"clients": 3, "on_latest": 1, "on_latest_share": 1.0 / 3.0, "divergent": 0})
    );
}

/// Registers `nodes` in ring `r`; returns the last version.
async fn add_nodes(s: &Server, nodes: &[&str]) -> u64 {
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
    ];
    for (path, body, slug, field, detail) in cases {
        expect_problem(post(path, body).await, bad, slug, field, detail).await;
    }
    let malformed = s
        .req(Method::POST, &ack_path("r", "web"))
        .header("content-type", "application/json")
        .body("{\"version\": 3,")
        .send()
        .await
        .unwrap();
    expect_problem(malformed, bad, "malformed-json", None, "not valid JSON").await;

    // A version the ring does not have yet: 409 naming the current one.
    let ahead = post(
        ack_path("r", "web"),
        json!({"version": 4, "fingerprint": fp3}),
    )
    .await;
    let p = expect_problem(
        ahead,
        StatusCode::CONFLICT,
        "conflict",
        Some("version"),
        "version 4 does not exist yet",
    )
    .await;
    assert_eq!(p["current_version"], 3);

    let missing = post(ack_path("nope", "web"), good.clone()).await;
    expect_problem(
        missing,
        StatusCode::NOT_FOUND,
        "ring-not-found",
        None,
        "ring `nope` does not exist",
    )
    .await;
    let missing = s.get("/v1/rings/nope/clients").await;
    expect_problem(
        missing,
        StatusCode::NOT_FOUND,
        "ring-not-found",
        None,
        "ring `nope` does not exist",
    )
    .await;
    expect_problem(
        s.get("/v1/rings/Bad/clients").await,
        bad,
        "invalid-input",
        Some("ring"),
        "is invalid",
    )
    .await;

    let list = s.get_ok("/v1/rings/r/clients").await;
    assert_eq!(
        list,
        json!({"ring": "r", "version": 3, "fingerprint": fp3, "clients": [],
               "summary": {"clients": 0, "on_latest": 0, "on_latest_share": null, "divergent": 0}})
    );
    let text = metrics(&s).await;
    assert!(text.contains("ringd_clients{ring=\"r\"} 0\n"), "{text}");
    assert!(!text.contains("ringd_clients_on_latest_ratio{"), "{text}");
    assert_eq!(s.state_of("r").await.0, 3, "acks never create versions");
}

#[tokio::test]
async fn acks_expire_after_the_ttl() {
    // The shortest TTL the server accepts.
    let s = Server::start(&["--client-ttl", "10s"]);
    s.ring_with("r", &["a"]).await;
    let (_, fp) = s.state_of("r").await;
    let body = ack(&s, "web-1", 2, &fp).await;
    // After the answer, so `acked` is no earlier than the server's clock.
    let acked = std::time::Instant::now();
    let ttl = time_of(&body["client"]["expires_at"]) - time_of(&body["client"]["last_seen"]);
    assert_eq!(ttl, Duration::from_secs(10));
    let list = s.get_ok("/v1/rings/r/clients").await;
    assert_eq!(list["summary"]["clients"], 1);
    tokio::time::sleep(Duration::from_millis(10_300).saturating_sub(acked.elapsed())).await;
    let list = s.get_ok("/v1/rings/r/clients").await;
    assert_eq!(list["clients"], json!([]));
    assert_eq!(list["summary"]["clients"], 0);
    assert!(metrics(&s).await.contains("ringd_clients{ring=\"r\"} 0\n"));
    // Acking again brings the client back.
    ack(&s, "web-1", 2, &fp).await;
    assert_eq!(
        s.get_ok("/v1/rings/r/clients").await["summary"]["clients"],
        1
    );
}

#[tokio::test]
async fn acks_of_pruned_versions_are_kept_but_not_judged() {
    let s = Server::start(&["--retention", "2"]);
    assert_eq!(s.ring_with("r", &["a", "b"]).await, 3);
    let body = ack(&s, "old", 1, WRONG).await;
    assert_eq!(
        (
            &body["client"]["lag"],
            &body["client"]["matches"],
            &body["client"]["divergent"]
        ),
        (&json!(2), &Value::Null, &json!(false))
    );
    let list = s.get_ok("/v1/rings/r/clients").await;
    assert_eq!(
        rows(&list),
        vec![row("old", 1, 2, false, Value::Null, false)]
    );
    assert_eq!(list["summary"]["divergent"], 0);
}

#[tokio::test]
async fn deleting_a_ring_deletes_its_acks() {
    let (s, (_, fp3)) = setup().await;
    ack(&s, "web-1", 3, &fp3).await;
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
    let s = Server::start(&["--admin-token", "adm", "--read-token", "rd"]);
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
    expect_problem(
        anonymous,
        StatusCode::UNAUTHORIZED,
        "unauthorized",
        None,
        "read",
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
