//! `ringd watch` and `ringd clients` against a real server.

use std::io::{BufRead, BufReader, Read};
use std::time::Duration;

use crate::support::cli::{check, command, golden, ok};
use crate::support::ringd::Ringd;
use serde_json::json;

/// A ring `cache` at version 4: nodes a, b (weight 2) and c, the last
/// with a reason.
fn ring_at_4(u: &str) {
    ok(u, &["ring", "create", "cache", "--vnodes-per-weight", "4"]);
    ok(u, &["node", "add", "cache", "a"]);
    ok(u, &["node", "add", "cache", "b", "--weight", "2"]);
    ok(
        u,
        &["node", "add", "cache", "c", "--reason", "more capacity"],
    );
}

#[test]
fn watch_replays_then_stops_after_count() {
    let s = Ringd::sqlite().start();
    let u = s.url.as_str();
    ring_at_4(u);
    check(
        u,
        "watch_after.txt",
        &["watch", "cache", "--after", "1", "--count", "3"],
    );
    check(
        u,
        "watch_after.json",
        &[
            "-o", "json", "watch", "cache", "--after", "2", "--count", "2",
        ],
    );
}

#[test]
fn watch_prints_live_versions() {
    let s = Ringd::sqlite().start();
    let u = s.url.as_str();
    ring_at_4(u);
    let mut child = command(u, &["watch", "cache", "--count", "3"])
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    // The first line is the current version: the stream is open, so the
    // changes below arrive through it.
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    ok(
        u,
        &["node", "drain", "cache", "a", "--reason", "maintenance"],
    );
    ok(u, &["node", "remove", "cache", "a"]);
    let mut rest = String::new();
    // Bounded: the child exits after its third line.
    let waiter = std::thread::spawn(move || {
        stdout.read_to_string(&mut rest).unwrap();
        rest
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("watch --count 3 did not exit");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success());
    golden(
        "watch_live.txt",
        &format!("{first}{}", waiter.join().unwrap()),
    );
}

#[tokio::test]
async fn clients_show_lag_and_divergence() {
    let s = Ringd::sqlite().start();
    let u = s.url.clone();
    ring_at_4(&u);
    check(&u, "clients_none.txt", &["clients", "cache"]);
    let v3 = s.get_ok("/v1/rings/cache/snapshots/3").await["fingerprint"].clone();
    let v4 = s.get_ok("/v1/rings/cache").await["fingerprint"].clone();
    let acks = [
        ("web-1", json!({"version": 4, "fingerprint": v4})),
        ("web-2", json!({"version": 3, "fingerprint": v3})),
        // Right version, wrong placement: a divergent client.
        (
            "web-3",
            json!({"version": 4, "fingerprint": "0".repeat(64)}),
        ),
        // A proxy whose agent could not load version 4: the proxy's own
        // message, with a terminal escape that must not reach the screen.
        (
            "nginx-1",
            json!({"version": 3, "fingerprint": v3, "kind": "proxy", "failure": {
                "version": 4,
                "error": "nginx: [emerg] \u{1b}[31mhost not found\nnginx: configuration file test failed",
            }}),
        ),
    ];
    for (id, body) in acks {
        let r = s
            .post(&format!("/v1/rings/cache/clients/{id}/ack"), body)
            .await;
        assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
    }
    check(&u, "clients.txt", &["clients", "cache"]);
    check(&u, "clients.json", &["-o", "json", "clients", "cache"]);
}
