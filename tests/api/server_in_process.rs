//! The server started in process: `Server::bind` on port 0 with a fresh
//! SQLite file, `run` on a task, real HTTP requests, and a shutdown
//! through the future `run` was given.

use std::time::Duration;

use ringd::server::{ServeConfig, Server};
use serde_json::{json, Value};
use tempfile::TempDir;
use tokio::sync::oneshot;

/// A config for a fresh SQLite file in `dir` on a free loopback port.
fn config(dir: &TempDir) -> ServeConfig {
    ServeConfig {
        listen: "127.0.0.1:0".into(),
        store_url: format!("sqlite://{}", dir.path().join("ringd.db").display()),
        ..ServeConfig::default()
    }
}

#[tokio::test]
async fn a_server_bound_in_process_serves_requests_and_stops_when_told() {
    let dir = TempDir::new().unwrap();
    let server = Server::bind(config(&dir)).await.unwrap();
    let addr = server.local_addr();
    assert!(addr.ip().is_loopback());
    assert_ne!(addr.port(), 0, "the real port, not the configured 0");
    let base = server.url();
    assert_eq!(base, format!("http://{addr}"));

    let (stop, stopped) = oneshot::channel::<()>();
    let running = tokio::spawn(server.run(async {
        let _ = stopped.await;
    }));

    let http = reqwest::Client::new();
    let created = http
        .put(format!("{base}/v1/rings/cache"))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    assert_eq!(created.headers()["location"], "/v1/rings/cache");
    let mut created: Value = created.json().await.unwrap();
    // The one field that differs between runs.
    let created_at = created
        .as_object_mut()
        .unwrap()
        .remove("created_at")
        .unwrap();
    assert!(
        created_at.as_str().is_some_and(|t| t.ends_with('Z')),
        "{created_at}"
    );
    assert_eq!(
        created,
        json!({
            "ring": "cache",
            "version": 1,
            "nodes": 0,
            "active_nodes": 0,
            "config": {
                "algorithm": "ring",
                "hash": "xxh3",
                "replication_factor": 3,
                "table_size": 65537,
                "vnodes_per_weight": 160,
                "zone_aware": false
            },
            "fingerprint": "ff4b8847401dc42681fc0ff4ebee49a95515e52fa976e2ea4dac5865f62c1dd8"
        })
    );
    created["created_at"] = created_at;

    let read = http
        .get(format!("{base}/v1/rings/cache"))
        .send()
        .await
        .unwrap();
    assert_eq!(read.status(), 200);
    assert_eq!(read.headers()["etag"], "\"1\"");
    let read: Value = read.json().await.unwrap();
    assert_eq!(read, created, "read back as it was created");

    let missing = http
        .get(format!("{base}/v1/rings/absent"))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    assert_eq!(
        missing.headers()["content-type"],
        "application/problem+json"
    );
    let missing: Value = missing.json().await.unwrap();
    assert_eq!(
        missing,
        json!({
            "type": "urn:ringd:problem:ring-not-found",
            "title": "Ring not found",
            "status": 404,
            "detail": "ring `absent` does not exist; create it with PUT /v1/rings/{ring}"
        })
    );

    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("run returns once the shutdown future completes")
        .unwrap();
    // The listener is closed: nothing answers on the port any more.
    let refused = http.get(format!("{base}/healthz")).send().await;
    assert!(refused.is_err(), "{refused:?}");
}
