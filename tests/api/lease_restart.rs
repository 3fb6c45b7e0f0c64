//! Leases on SQLite across a restart and on disk: a node renewing through
//! a restart keeps its lease and its health, and renewals never write the
//! database.

use reqwest::{Method, StatusCode};
use rusqlite::{Connection, OpenFlags};
use serde_json::{json, Value};

use crate::support::api::{expect_json, TestApi};
use crate::support::ringd::Ringd;

async fn register(s: &TestApi, node: &str, body: Value) -> Value {
    let r = s
        .put(&format!("/v1/rings/r/nodes/{node}/lease"), body)
        .await;
    assert!(r.status().is_success(), "register {node}: {}", r.status());
    r.json().await.unwrap()
}

async fn renew(s: &TestApi, node: &str, id: &str) -> Value {
    let r = s
        .req(
            Method::POST,
            &format!("/v1/rings/r/nodes/{node}/lease/{id}/renew"),
        )
        .send()
        .await
        .unwrap();
    expect_json(r, StatusCode::OK).await
}

/// Each node's id and health.
async fn health(s: &TestApi) -> Vec<(String, String)> {
    let list = s.get_ok("/v1/rings/r/nodes").await;
    list["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["id"].as_str().unwrap().to_owned(),
                n["health"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn row(id: &str, health: &str) -> (String, String) {
    (id.to_owned(), health.to_owned())
}

#[tokio::test]
async fn a_lease_renewed_through_a_restart_keeps_its_id_and_its_health() {
    let dir = tempfile::TempDir::new().unwrap();
    let mut s = Ringd::sqlite_in(dir.path()).start();
    // A release drains the node (`on_leave: drain`), so it stays listed,
    // `left`, through the restart.
    let r = s
        .put("/v1/rings/r", json!({"membership": {"on_leave": "drain"}}))
        .await;
    expect_json(r, StatusCode::CREATED).await;
    let r = s.put("/v1/rings/r/nodes/a", json!({})).await;
    expect_json(r, StatusCode::CREATED).await;
    let c = register(&s, "c", json!({"address": "10.0.0.3:1", "ttl": "10s"})).await;
    let id = c["lease_id"].as_str().unwrap().to_owned();
    // A renewal before the crash moves the deadline in memory only.
    renew(&s, "c", &id).await;
    let d = register(&s, "d", json!({"ttl": "10s"})).await;
    let d_id = d["lease_id"].as_str().unwrap();
    let r = s.delete(&format!("/v1/rings/r/nodes/d/lease/{d_id}")).await;
    expect_json(r, StatusCode::OK).await;
    let version = s.state_of("r").await;
    assert_eq!(
        version.0, 5,
        "a, c and d were one version each, and d's release drained it"
    );

    // A crash, then a new process on the same file.
    s.kill();
    let s = Ringd::sqlite_in(dir.path()).start();
    let started = time::OffsetDateTime::now_utc();
    assert_eq!(
        health(&s).await,
        [row("a", "unmanaged"), row("c", "healthy"), row("d", "left")]
    );
    let renewed = renew(&s, "c", &id).await;
    assert_eq!(
        (
            &renewed["lease_id"],
            &renewed["health"],
            &renewed["version"]
        ),
        (&json!(id), &json!("healthy"), &json!(5))
    );
    let deadline = time::OffsetDateTime::parse(
        renewed["deadline"].as_str().unwrap(),
        &time::format_description::well_known::Rfc3339,
    )
    .unwrap();
    assert!(deadline > started, "{deadline} after {started}");
    // Registering the same record again is still a renewal of that lease.
    let again = register(&s, "c", json!({"address": "10.0.0.3:1", "ttl": "10s"})).await;
    assert_eq!(
        (&again["lease_id"], &again["changed"]),
        (&json!(id), &json!(false))
    );
    assert_eq!(s.state_of("r").await, version, "no new version");
    let summary = s.get_ok("/v1/rings/r").await;
    assert_eq!(
        summary["health"],
        json!({"healthy": 1, "unhealthy": 0, "left": 1, "unmanaged": 1})
    );
}

/// SQLite's `data_version` as a second connection sees it: it changes
/// exactly when another connection commits a write.
fn data_version(conn: &Connection) -> i64 {
    conn.pragma_query_value(None, "data_version", |r| r.get(0))
        .unwrap()
}

#[tokio::test]
async fn renewals_never_write_the_database() {
    let dir = tempfile::TempDir::new().unwrap();
    let s = Ringd::sqlite_in(dir.path()).start();
    s.ring_with("r", &["a"]).await;
    let c = register(&s, "c", json!({"ttl": "30s"})).await;
    let id = c["lease_id"].as_str().unwrap().to_owned();
    let probe = Connection::open_with_flags(
        dir.path().join("ringd.db"),
        OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let before = data_version(&probe);
    for _ in 0..50 {
        renew(&s, "c", &id).await;
    }
    for _ in 0..5 {
        // The same record again: a renewal too.
        let again = register(&s, "c", json!({"ttl": "30s"})).await;
        assert_eq!(again["lease_id"], json!(id));
    }
    assert_eq!(
        health(&s).await,
        [row("a", "unmanaged"), row("c", "healthy")]
    );
    assert_eq!(data_version(&probe), before, "a renewal wrote the database");

    // The probe does see writes: a new TTL is written, and so is a release.
    let longer = register(&s, "c", json!({"ttl": "40s"})).await;
    assert_eq!(longer["lease_id"], json!(id));
    let after_ttl = data_version(&probe);
    assert_ne!(after_ttl, before, "a changed lease is written");
    let r = s.delete(&format!("/v1/rings/r/nodes/c/lease/{id}")).await;
    expect_json(r, StatusCode::OK).await;
    assert_ne!(data_version(&probe), after_ttl, "a release is written");
}

#[tokio::test]
async fn accepted_heartbeats_are_not_logged_at_the_default_level() {
    let s = Ringd::sqlite().start();
    s.ring_with("r", &[]).await;
    let c = register(&s, "c", json!({"ttl": "10s"})).await;
    let id = c["lease_id"].as_str().unwrap().to_owned();
    for _ in 0..3 {
        renew(&s, "c", &id).await;
    }
    let r = s
        .post(
            "/v1/rings/r/nodes/c/lease/0123456789abcdef0123456789abcdef/renew",
            json!({}),
        )
        .await;
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    let log = s.log();
    let renewals: Vec<&str> = log.lines().filter(|l| l.contains("/renew")).collect();
    // Only the refused renewal: the three accepted ones are at debug.
    assert_eq!(renewals.len(), 1, "{log}");
    assert!(renewals[0].contains("status=404"), "{}", renewals[0]);
    assert!(
        log.lines()
            .any(|l| l.contains("/v1/rings/r/nodes/c/lease") && l.contains("status=201")),
        "the registration is logged: {log}"
    );
}
