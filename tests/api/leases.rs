//! Leases over HTTP: a node registers itself, renews, releases; only a new
//! or changed record makes a version; health shows in the node list and
//! in `/metrics`; and every bad request is a 4xx that changes nothing.

use reqwest::Method;
use ringd::ring::Clock;
use serde_json::{json, Value};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use crate::support::api::{expect_json, TestApi};
use crate::support::in_process::{manual_clock, setup};
use crate::support::problem::{assert_problem, Problem};
use crate::support::ringd::Ringd;

fn time_of(v: &Value) -> OffsetDateTime {
    OffsetDateTime::parse(v.as_str().expect("a timestamp"), &Rfc3339).expect("RFC 3339")
}

async fn register(s: &TestApi, node: &str, body: Value, status: u16) -> Value {
    let r = s
        .put(&format!("/v1/rings/r/nodes/{node}/lease"), body)
        .await;
    expect_json(r, reqwest::StatusCode::from_u16(status).unwrap()).await
}

async fn renew(s: &TestApi, node: &str, lease: &str) -> reqwest::Response {
    s.req(
        Method::POST,
        &format!("/v1/rings/r/nodes/{node}/lease/{lease}/renew"),
    )
    .send()
    .await
    .unwrap()
}

/// Each node's id and health, and whether it has a last heartbeat.
async fn health(s: &TestApi) -> Vec<(String, String, bool)> {
    let list = s.get_ok("/v1/rings/r/nodes").await;
    list["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["id"].as_str().unwrap().to_owned(),
                n["health"].as_str().unwrap().to_owned(),
                n.get("last_heartbeat").is_some(),
            )
        })
        .collect()
}

fn row(id: &str, health: &str, heartbeat: bool) -> (String, String, bool) {
    (id.to_owned(), health.to_owned(), heartbeat)
}

async fn counts(s: &TestApi) -> [u64; 4] {
    let mut out = [0; 4];
    for (i, h) in ["healthy", "unhealthy", "left", "unmanaged"]
        .iter()
        .enumerate()
    {
        out[i] = s
            .metric(&format!("ringd_nodes{{ring=\"r\",health=\"{h}\"}}"))
            .await;
    }
    out
}

/// The ring summary's health counts, as `GET /v1/rings/r` and the ring's
/// entry in `GET /v1/rings` both give them.
async fn summary_health(s: &TestApi) -> Value {
    let one = s.get_ok("/v1/rings/r").await;
    let list = s.get_ok("/v1/rings").await;
    assert_eq!(list["rings"][0]["ring"], "r");
    assert_eq!(list["rings"][0]["health"], one["health"]);
    one["health"].clone()
}

fn health_counts(healthy: u64, unhealthy: u64, left: u64, unmanaged: u64) -> Value {
    json!({"healthy": healthy, "unhealthy": unhealthy, "left": left, "unmanaged": unmanaged})
}

#[tokio::test]
async fn a_node_registers_renews_and_leaves_and_only_record_changes_make_versions() {
    let (s, (v3, _)) = setup().await;
    assert_eq!(v3, 3);
    let first = register(&s, "c", json!({"address": "10.0.0.9:1", "ttl": "30s"}), 201).await;
    let id = first["lease_id"].as_str().unwrap().to_owned();
    assert_eq!(id.len(), 32);
    assert!(id
        .bytes()
        .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
    assert_eq!(
        (
            &first["ring"],
            &first["node"],
            &first["ttl"],
            &first["health"]
        ),
        (&json!("r"), &json!("c"), &json!("30s"), &json!("healthy"))
    );
    assert_eq!(
        (&first["version"], &first["changed"]),
        (&json!(4), &json!(true))
    );
    assert_eq!(
        time_of(&first["deadline"]) - time_of(&first["last_heartbeat"]),
        time::Duration::seconds(30)
    );

    // The same record again: a renewal, no version, the same lease.
    let again = register(&s, "c", json!({"address": "10.0.0.9:1", "ttl": "30s"}), 200).await;
    assert_eq!(
        (&again["version"], &again["changed"]),
        (&json!(4), &json!(false))
    );
    assert_eq!(again["lease_id"], id);

    let renewed = renew(&s, "c", &id).await;
    let renewed = expect_json(renewed, reqwest::StatusCode::OK).await;
    assert_eq!(
        (&renewed["lease_id"], &renewed["version"]),
        (&json!(id), &json!(4))
    );
    assert_eq!(renewed["changed"], false);
    assert!(time_of(&renewed["last_heartbeat"]) >= time_of(&again["last_heartbeat"]));
    assert_eq!(s.state_of("r").await.0, 4, "renewals make no version");

    let nodes = s.get_ok("/v1/rings/r/nodes").await;
    assert_eq!(
        nodes["nodes"][2]["last_heartbeat"],
        renewed["last_heartbeat"]
    );
    assert_eq!(
        health(&s).await,
        [
            row("a", "unmanaged", false),
            row("b", "unmanaged", false),
            row("c", "healthy", true)
        ]
    );
    assert_eq!(counts(&s).await, [1, 0, 0, 2]);
    assert_eq!(summary_health(&s).await, health_counts(1, 0, 0, 2));

    // A changed record: one version, the same lease.
    let heavier = register(&s, "c", json!({"address": "10.0.0.9:1", "weight": 2}), 200).await;
    assert_eq!(
        (&heavier["version"], &heavier["changed"]),
        (&json!(5), &json!(true))
    );
    assert_eq!(
        (&heavier["lease_id"], &heavier["ttl"]),
        (&json!(id), &json!("10s"))
    );
    // A single node's read is its record alone, fit to be sent back to
    // `PUT …/nodes/{node}`.
    let node = s.get_ok("/v1/rings/r/nodes/c").await;
    assert_eq!(
        node,
        json!({"id": "c", "address": "10.0.0.9:1", "weight": 2, "labels": {}, "state": "active"})
    );

    // A release: the ring's `on_leave` (by default `remove`) removes the
    // node at once, one version.
    let r = s.delete(&format!("/v1/rings/r/nodes/c/lease/{id}")).await;
    let left = expect_json(r, reqwest::StatusCode::OK).await;
    assert_eq!(
        (&left["health"], &left["version"], &left["changed"]),
        (&json!("left"), &json!(6), &json!(true))
    );
    assert_eq!(
        health(&s).await,
        [row("a", "unmanaged", false), row("b", "unmanaged", false)]
    );
    assert_eq!(counts(&s).await, [0, 0, 0, 2]);
    assert_eq!(summary_health(&s).await, health_counts(0, 0, 0, 2));
    assert_eq!(s.state_of("r").await.0, 6);
    // Snapshots carry no health: it is not part of a version.
    let snapshot = s.get_ok("/v1/rings/r/snapshot").await;
    assert_eq!(snapshot["nodes"][1].get("health"), None);

    // Registering again after leaving is a new lease, and a new node.
    let back = register(&s, "c", json!({"address": "10.0.0.9:1", "weight": 2}), 201).await;
    assert_ne!(back["lease_id"], id);
    assert_eq!(
        (&back["health"], &back["changed"], &back["version"]),
        (&json!("healthy"), &json!(true), &json!(7))
    );
}

#[tokio::test]
async fn an_expired_lease_is_unhealthy_and_renews_no_more() {
    let clock = manual_clock();
    let s = Ringd::sqlite().in_process().clock(clock.clone()).start();
    assert_eq!(s.ring_with("r", &["a", "b"]).await, 3);
    let lease = register(&s, "c", json!({"ttl": "1s"}), 201).await;
    let id = lease["lease_id"].as_str().unwrap().to_owned();
    let deadline = clock.now() + time::Duration::SECOND;
    assert_eq!(time_of(&lease["deadline"]), deadline);
    // Healthy up to its deadline, unhealthy the moment after.
    clock.set(deadline);
    assert_eq!(health(&s).await[2], row("c", "healthy", true));
    clock.advance(time::Duration::MICROSECOND);
    assert_eq!(health(&s).await[2], row("c", "unhealthy", true));
    assert_eq!(counts(&s).await, [0, 1, 0, 2]);
    assert_eq!(summary_health(&s).await, health_counts(0, 1, 0, 2));
    assert_problem(
        renew(&s, "c", &id).await,
        Problem::status(404)
            .slug("lease-not-found")
            .field("lease_id")
            .detail_has(&format!(
                "lease `{id}` of node `c` expired at 2025-06-15T15:06:41Z;"
            )),
    )
    .await;
    let back = register(&s, "c", json!({"ttl": "1s"}), 200).await;
    assert_ne!(back["lease_id"], id);
    assert_eq!(
        (&back["changed"], &back["version"]),
        (&json!(false), &json!(4))
    );
}

#[tokio::test]
async fn bad_lease_requests_get_a_4xx_and_change_nothing() {
    let (s, _) = setup().await;
    let lease = register(&s, "c", json!({"ttl": "30s"}), 201).await;
    let id = lease["lease_id"].as_str().unwrap().to_owned();
    let before = s.state_of("r").await;
    let unknown = "0000000000000000000000000000002a";

    let bodies = [
        (
            json!({"ttl": "0s"}),
            Some("ttl"),
            "ttl `0s` is below the 1s minimum; use 1s to 1h",
        ),
        (
            json!({"ttl": "999ms"}),
            Some("ttl"),
            "ttl `999ms` is below the 1s minimum; use 1s to 1h",
        ),
        (
            json!({"ttl": "3601s"}),
            Some("ttl"),
            "ttl `3601s` is above the 1h maximum; use 1s to 1h",
        ),
        (
            json!({"ttl": "soon"}),
            Some("ttl"),
            "`soon` is not a duration",
        ),
        (
            json!({"ttl": 10}),
            Some("ttl"),
            "ttl must be a duration string such as \"10s\" (1s to 1h), not 10",
        ),
        (
            json!({"weight": 0}),
            Some("weight"),
            "invalid value at `weight`",
        ),
        (
            json!({"colour": "red"}),
            Some("colour"),
            "unknown field `colour`",
        ),
        (
            json!({"id": "e"}),
            Some("id"),
            "the body names node `e` but the path names `d`",
        ),
    ];
    for (body, field, detail) in bodies {
        let r = s.put("/v1/rings/r/nodes/d/lease", body.clone()).await;
        assert_problem(
            r,
            Problem::status(400)
                .slug("invalid-input")
                .field_opt(field)
                .detail_has(detail),
        )
        .await;
    }
    let paths = [
        (
            Method::POST,
            format!("/v1/rings/r/nodes/c/lease/{unknown}/renew"),
            404,
            "lease-not-found",
            Some("lease_id"),
            format!("node `c` of ring `r` holds no lease `{unknown}`"),
        ),
        (
            Method::DELETE,
            format!("/v1/rings/r/nodes/c/lease/{unknown}"),
            404,
            "lease-not-found",
            Some("lease_id"),
            format!("holds no lease `{unknown}`"),
        ),
        (
            Method::POST,
            "/v1/rings/r/nodes/c/lease/XYZ/renew".to_owned(),
            400,
            "invalid-input",
            Some("lease_id"),
            "lease id `XYZ` is invalid".to_owned(),
        ),
        (
            Method::POST,
            format!("/v1/rings/r/nodes/a/lease/{id}/renew"),
            409,
            "conflict",
            Some("lease_id"),
            format!("lease `{id}` belongs to node `c`, not `a`"),
        ),
        (
            Method::DELETE,
            format!("/v1/rings/r/nodes/a/lease/{id}"),
            409,
            "conflict",
            Some("lease_id"),
            format!("lease `{id}` belongs to node `c`, not `a`"),
        ),
        (
            Method::POST,
            format!("/v1/rings/nope/nodes/c/lease/{id}/renew"),
            404,
            "ring-not-found",
            None,
            "ring `nope`".to_owned(),
        ),
        (
            Method::DELETE,
            format!("/v1/rings/nope/nodes/c/lease/{id}"),
            404,
            "ring-not-found",
            None,
            "ring `nope`".to_owned(),
        ),
    ];
    for (method, path, status, slug, field, detail) in paths {
        let r = s.req(method, &path).send().await.unwrap();
        assert_problem(
            r,
            Problem::status(status)
                .slug(slug)
                .field_opt(field)
                .detail_has(&detail),
        )
        .await;
    }
    let r = s
        .put("/v1/rings/nope/nodes/c/lease", json!({"ttl": "10s"}))
        .await;
    assert_problem(
        r,
        Problem::status(404)
            .slug("ring-not-found")
            .detail_has("ring `nope`"),
    )
    .await;
    assert_eq!(crate::support::api::rings(&s).await, ["r"]);

    // Nothing changed: the same version, no node d, c's lease still live.
    assert_eq!(s.state_of("r").await, before);
    assert_eq!(
        health(&s).await,
        [
            row("a", "unmanaged", false),
            row("b", "unmanaged", false),
            row("c", "healthy", true)
        ]
    );
    let r = renew(&s, "c", &id).await;
    assert_eq!(
        expect_json(r, reqwest::StatusCode::OK).await["lease_id"],
        id
    );
}
