//! The listener: every connection, a watch stream as its first request
//! included, goes through hyper and the router, with a bound on the
//! request head and a graceful shutdown that ends watch streams cleanly.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::support::api::TestApi;
use crate::support::ringd::Ringd;
use crate::support::sse::EventStream;

fn addr(s: &TestApi) -> String {
    s.base.trim_start_matches("http://").to_owned()
}

/// Reads from `conn` until it closes or `limit` passes.
fn read_until_closed(conn: &mut TcpStream, limit: Duration) -> String {
    conn.set_read_timeout(Some(limit)).unwrap();
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match conn.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) => panic!(
                "connection still open after {limit:?} ({e}); read so far: {:?}",
                String::from_utf8_lossy(&out)
            ),
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Reads from `conn` until `needle` has arrived.
fn read_until(conn: &mut TcpStream, needle: &str) -> String {
    conn.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&out).contains(needle) {
        let n = conn.read(&mut buf).expect("read");
        assert!(
            n > 0,
            "closed before {needle:?}: {:?}",
            String::from_utf8_lossy(&out)
        );
        out.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[tokio::test]
async fn an_oversized_head_gets_431_before_it_is_read_in_full() {
    let s = Ringd::sqlite().in_process().start();
    s.ring_with("r", &["a"]).await;
    let a = addr(&s);
    let raw = tokio::task::spawn_blocking(move || {
        let mut conn = TcpStream::connect(&a).unwrap();
        // 20 KiB of one header, and no end of the head: the server must
        // answer without waiting for the rest of the 200 KB it announces.
        let head = format!(
            "GET /v1/rings/r/watch HTTP/1.1\r\nHost: {a}\r\nX-Big: {}",
            "a".repeat(20 * 1024)
        );
        conn.write_all(head.as_bytes()).unwrap();
        read_until_closed(&mut conn, Duration::from_secs(10))
    })
    .await
    .unwrap();
    assert!(
        raw.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"),
        "{raw}"
    );
    // The server still serves.
    assert_eq!(s.get("/healthz").await.status(), 200);
}

#[tokio::test]
async fn a_head_just_under_the_limit_is_served() {
    let s = Ringd::sqlite().in_process().start();
    s.ring_with("r", &["a"]).await;
    let r = s
        .req(reqwest::Method::GET, "/v1/rings/r")
        .header("x-padding", "p".repeat(15 * 1024))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
}

#[tokio::test]
async fn a_watch_with_bare_lf_line_endings_is_answered() {
    let s = Ringd::sqlite().in_process().start();
    s.ring_with("r", &["a"]).await;
    let a = addr(&s);
    let raw = tokio::task::spawn_blocking(move || {
        let mut conn = TcpStream::connect(&a).unwrap();
        let head = format!("GET /v1/rings/r/watch?mode=light HTTP/1.1\nHost: {a}\n\n");
        conn.write_all(head.as_bytes()).unwrap();
        read_until(&mut conn, "event: snapshot\n")
    })
    .await
    .unwrap();
    assert!(raw.starts_with("HTTP/1.1 200 OK\r\n"), "{raw}");
    let head = raw.split("\r\n\r\n").next().unwrap().to_ascii_lowercase();
    assert!(
        head.contains("\r\ncontent-type: text/event-stream\r\n"),
        "{raw}"
    );
    assert!(head.contains("\r\ntransfer-encoding: chunked\r\n"), "{raw}");
}

#[tokio::test]
async fn a_watch_goes_through_the_router_layers() {
    // A watch is routine traffic, logged at debug.
    let s = Ringd::sqlite()
        .env("RUST_LOG", "info,ringd::http=debug")
        .start();
    s.ring_with("r", &["a"]).await;
    // The watch is this connection's first request.
    let response = reqwest::Client::new()
        .get(format!("{}/v1/rings/r/watch", s.url))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let date = response.headers()["date"].to_str().unwrap().to_owned();
    assert!(date.ends_with(" GMT"), "{date}");
    let metrics = s.get("/metrics").await.text().await.unwrap();
    assert!(
        metrics.contains(
            "ringd_http_requests_total{route=\"/v1/rings/{ring}/watch\",method=\"GET\",status=\"200\"} 1\n"
        ),
        "{metrics}"
    );
    let log = s.log();
    let lines: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("request") && l.contains("path=/v1/rings/r/watch"))
        .collect();
    assert_eq!(lines.len(), 1, "{log}");
    assert!(lines[0].contains("status=200"), "{}", lines[0]);
    assert!(lines[0].contains(" DEBUG "), "{}", lines[0]);
}

#[tokio::test]
async fn at_info_the_log_has_writes_and_refusals_but_not_answered_reads() {
    let s = Ringd::sqlite().start();
    s.ring_with("r", &["a"]).await;
    let batch = serde_json::json!({"keys": ["k"]});
    assert_eq!(s.get("/v1/rings/r/lookup?key=k").await.status(), 200);
    assert_eq!(
        s.post("/v1/rings/r/lookup", batch.clone()).await.status(),
        200
    );
    assert_eq!(s.get("/v1/rings/nope/lookup?key=k").await.status(), 404);
    assert_eq!(s.post("/v1/rings/nope/lookup", batch).await.status(), 404);
    let log = s.log();
    let lines = |path: &str| -> Vec<String> {
        log.lines()
            .filter(|l| l.contains(" request ") && l.contains(&format!("path={path} ")))
            .map(|l| l.split_once(" request ").unwrap().1.to_owned())
            .collect()
    };
    assert_eq!(lines("/v1/rings/r/lookup"), Vec::<String>::new(), "{log}");
    let refused = lines("/v1/rings/nope/lookup");
    assert_eq!(refused.len(), 2, "{log}");
    assert!(refused[0].starts_with("method=\"GET\" route=\"/v1/rings/{ring}/lookup\" path=/v1/rings/nope/lookup status=404"), "{log}");
    assert!(refused[1].starts_with("method=\"POST\" route=\"/v1/rings/{ring}/lookup\" path=/v1/rings/nope/lookup status=404"), "{log}");
    // The ring's creation and its change, writes, are there.
    let writes: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(" INFO ringd::http: request method=\"P"))
        .collect();
    assert!(writes.len() >= 2, "{log}");
}

#[tokio::test]
async fn shutdown_ends_watch_streams_cleanly_and_waits_for_them() {
    let mut s = Ringd::sqlite().start();
    s.ring_with("r", &["a"]).await;
    let mut w = EventStream::open(&format!("{}/v1/rings/r/watch", s.url), None).await;
    assert_eq!(w.next_event().await.id, Some(2));
    let status = s.terminate();
    assert!(status.success(), "{status:?}");
    // The stream ended with its last chunk, not a reset connection: the
    // shutdown let it finish.
    assert_eq!(w.next().await, None);
    let log = s.log();
    let stopping = log.find("shutting down").expect("shutdown logged");
    let stopped = log.find("stopped").expect("stop logged");
    assert!(stopping < stopped, "{log}");
}

#[tokio::test]
async fn an_ack_closes_its_connection_once_answered() {
    // A following client's watch holds one connection; its ack, once a
    // minute, must not keep a second one idle on the server.
    let s = Ringd::sqlite().in_process().start();
    s.ring_with("r", &["a"]).await;
    let ring: serde_json::Value = s.get("/v1/rings/r").await.json().await.unwrap();
    let body = serde_json::json!({
        "version": ring["version"],
        "fingerprint": ring["fingerprint"],
    })
    .to_string();
    let a = addr(&s);
    let raw = tokio::task::spawn_blocking(move || {
        let mut conn = TcpStream::connect(&a).unwrap();
        let head = format!(
            "POST /v1/rings/r/clients/web-1/ack HTTP/1.1\r\nHost: {a}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        conn.write_all(head.as_bytes()).unwrap();
        // Kept alive, the server would hold it until its 30 s header-read
        // timeout.
        read_until_closed(&mut conn, Duration::from_secs(5))
    })
    .await
    .unwrap();
    assert!(raw.starts_with("HTTP/1.1 200 OK\r\n"), "{raw}");
    let head = raw.split("\r\n\r\n").next().unwrap().to_ascii_lowercase();
    assert!(head.contains("\r\nconnection: close\r\n"), "{raw}");
    assert!(raw.contains("\"client_id\":\"web-1\""), "{raw}");
    // Other answers keep their connection: a lookup's stays open.
    let a = addr(&s);
    tokio::task::spawn_blocking(move || {
        let mut conn = TcpStream::connect(&a).unwrap();
        for _ in 0..2 {
            conn.write_all(format!("GET /healthz HTTP/1.1\r\nHost: {a}\r\n\r\n").as_bytes())
                .unwrap();
            read_until(&mut conn, "\r\n\r\n");
        }
    })
    .await
    .unwrap();
}
