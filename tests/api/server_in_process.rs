//! The server started in process: `Server::bind` on port 0 with a fresh
//! SQLite file, `run` on a task, real HTTP requests, and a shutdown
//! through the future `run` was given; and the launcher's in-process
//! mode built on it, with the configurations it refuses.

use std::time::Duration;

use ringd::server::{ServeConfig, Server};
use serde_json::{json, Value};
use tempfile::TempDir;
use tokio::sync::oneshot;

use crate::support::ringd::Ringd;

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
                "vnodes_per_weight": 160,
                "zone_aware": false,
                "membership": {
                    "on_join": "active", "activate_after": null, "drain_after": null,
                    "forget_after": null, "on_leave": "remove",
                    "max_unhealthy_fraction": 0.5, "max_auto_changes_per_minute": 10
                }
            },
            "fingerprint": "ff4b8847401dc42681fc0ff4ebee49a95515e52fa976e2ea4dac5865f62c1dd8",
            "membership": {"guard": {"blocked": false, "rule": null, "detail": null}, "pending": []},
            "health": {"healthy": 0, "unhealthy": 0, "left": 0, "unmanaged": 0}
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

/// The launcher's in-process mode from a sync test (no runtime of the
/// test's own): it serves, and dropping it closes the listener.
#[test]
fn the_in_process_launcher_serves_sync_tests_and_stops_on_drop() {
    use std::io::{Read, Write};
    use std::net::TcpStream;

    let s = Ringd::sqlite().in_process().start();
    let addr = s.url.trim_start_matches("http://").to_owned();
    let mut conn = TcpStream::connect(&addr).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    conn.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut answer = String::new();
    conn.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    drop(s);
    let refused = TcpStream::connect(&addr);
    assert!(refused.is_err(), "still listening after drop: {refused:?}");
}

#[test]
#[should_panic(expected = "in-process ringd cannot honour `--listen`")]
fn the_in_process_launcher_refuses_an_argument_it_cannot_honour() {
    let _ = Ringd::sqlite()
        .args(&["--listen", "0.0.0.0:0"])
        .in_process();
}

#[test]
#[should_panic(expected = "in-process ringd cannot honour environment variables")]
fn the_in_process_launcher_refuses_environment_variables() {
    let _ = Ringd::sqlite().env("RINGD_ADMIN_TOKEN", "t").in_process();
}

#[test]
#[should_panic(expected = "in-process ringd runs only on a fresh temporary SQLite file")]
fn the_in_process_launcher_refuses_a_kept_directory() {
    let dir = TempDir::new().unwrap();
    let _ = Ringd::sqlite_in(dir.path()).in_process();
}

#[test]
#[should_panic(expected = "in-process ringd: bad --client-ttl \"1s\"")]
fn the_in_process_launcher_checks_durations_as_the_flags_do() {
    let _ = Ringd::sqlite().args(&["--client-ttl", "1s"]).in_process();
}
