//! The limits an instance holds a fleet within: the watcher cap
//! (`--max-watchers`), answered 503 with `Retry-After`, and the open-file
//! limit, raised at start, past which new connections are refused cleanly
//! while the open ones are served on.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::{json, Value};

use crate::support::api::TestApi;
use crate::support::ringd::Ringd;
use crate::support::sse::EventStream;

/// Asserts a 503 refusal for being at capacity, with its `Retry-After`.
async fn assert_at_capacity(r: reqwest::Response) {
    assert_eq!(r.status(), 503);
    let retry: u64 = r.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=10).contains(&retry), "Retry-After: {retry}");
    assert_eq!(r.headers()["content-type"], "application/problem+json");
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["type"], "urn:ringd:problem:at-capacity");
    assert_eq!(body["status"], 503);
    assert_eq!(
        body["detail"],
        "this instance already serves 2 watchers, its limit (--max-watchers); retry after the time Retry-After gives, or watch through another instance"
    );
}

async fn metric_eventually(s: &TestApi, name: &str, want: u64) {
    for _ in 0..250 {
        if s.metric(name).await == want {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(s.metric(name).await, want, "{name}");
}

#[tokio::test]
async fn watchers_past_the_cap_get_503_and_those_admitted_keep_streaming() {
    let s = Ringd::sqlite().args(&["--max-watchers", "2"]).start();
    let v = s.ring_with("r", &["a", "b"]).await;
    let watch = format!("{}/v1/rings/r/watch?mode=light", s.base);
    let mut first = EventStream::open(&watch, None).await;
    assert_eq!(first.next_event().await.id, Some(v));
    let mut rings = EventStream::open(&format!("{}/v1/watch", s.base), None).await;
    assert_eq!(rings.next_event().await.event, "ring");
    assert_eq!(s.metric("ringd_watchers").await, 2);
    assert_eq!(s.metric("ringd_watchers_limit").await, 2);

    // A third stream, of either kind, and a long-poll that would wait.
    assert_at_capacity(s.get("/v1/rings/r/watch").await).await;
    assert_at_capacity(s.get("/v1/watch").await).await;
    assert_at_capacity(
        s.get(&format!("/v1/rings/r/snapshot?after={v}&wait=5s"))
            .await,
    )
    .await;
    assert_eq!(s.metric("ringd_watchers_refused_total").await, 3);
    // What does not wait is not a watcher: a long-poll answered at once,
    // a plain read, a write.
    let behind = s
        .get(&format!("/v1/rings/r/snapshot?after={}&wait=5s", v - 1))
        .await;
    assert_eq!(behind.status(), 200);
    assert_eq!(s.get("/v1/rings/r").await.status(), 200);
    let r = s.put("/v1/rings/r/nodes/c", json!({})).await;
    assert_eq!(r.status(), 201);
    // The refusals changed nothing for the streams admitted.
    assert_eq!(first.next_event().await.id, Some(v + 1));
    let event = rings.next_event().await;
    assert_eq!(
        (event.event.as_str(), &event.data["version"]),
        ("ring", &json!(v + 1))
    );

    // A watcher that leaves frees its slot.
    drop(first);
    metric_eventually(&s, "ringd_watchers", 1).await;
    let mut again = EventStream::open(&watch, None).await;
    assert_eq!(again.next_event().await.id, Some(v + 1));
    assert_eq!(s.metric("ringd_watchers_refused_total").await, 3);
}

/// Descriptors the process has open now.
fn open_descriptors(pid: u32) -> u64 {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count() as u64
}

/// A request on `conn`, kept alive; returns the status line and body.
fn send(conn: &mut TcpStream, request: &str) -> String {
    conn.write_all(request.as_bytes()).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = conn.read(&mut buf).unwrap();
        assert!(n > 0, "closed: {:?}", String::from_utf8_lossy(&out));
        out.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&out);
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length: usize = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse().unwrap())
                })
                .unwrap_or(0);
            if body.len() >= length {
                return text.into_owned();
            }
        }
    }
}

#[tokio::test]
async fn out_of_descriptors_it_refuses_new_connections_and_serves_the_open_ones() {
    let s = Ringd::sqlite().start();
    let log = s.log();
    assert!(
        log.contains("open-file limit (RLIMIT_NOFILE) raised to its hard limit"),
        "{log}"
    );
    let v = s.ring_with("r", &["a"]).await;
    let addr = s.base.trim_start_matches("http://").to_owned();
    let mut watcher =
        EventStream::open(&format!("{}/v1/rings/r/watch?mode=light", s.base), None).await;
    assert_eq!(watcher.next_event().await.id, Some(v));
    // A connection for writes, opened while there is room.
    let mut writer = TcpStream::connect(&addr).unwrap();
    let put = format!("PUT /v1/rings/r/nodes/b HTTP/1.1\r\nHost: {addr}\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{{}}");

    // Room for three more connections, then none.
    let pid = s.pid();
    let limit = open_descriptors(pid) + 3;
    rlimit::prlimit(
        pid as i32,
        rlimit::Resource::NOFILE,
        Some((limit, limit)),
        None,
    )
    .unwrap();
    let mut held = Vec::new();
    let refusal = tokio::task::spawn_blocking(move || {
        for _ in 0..20 {
            let mut conn = TcpStream::connect(&addr).unwrap();
            conn.write_all(format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
                .unwrap();
            conn.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let mut answer = Vec::new();
            let mut buf = [0u8; 4096];
            // An accepted connection answers 200 and stays open; a refused
            // one is answered 503 and closed.
            while !String::from_utf8_lossy(&answer).contains("\r\n\r\n{") {
                match conn.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => answer.extend_from_slice(&buf[..n]),
                    Err(e) => panic!("no answer: {e}"),
                }
            }
            let text = String::from_utf8_lossy(&answer).into_owned();
            if text.starts_with("HTTP/1.1 503") {
                return (text, held);
            }
            assert!(text.starts_with("HTTP/1.1 200"), "{text}");
            held.push(conn);
        }
        panic!("20 connections accepted with room for three");
    })
    .await
    .unwrap();
    let (refusal, held) = refusal;
    // Three, or a few more: a descriptor counted above (a connection of
    // the set-up's requests that the server closes meanwhile) may free up.
    assert!(held.len() <= 6, "{} accepted", held.len());
    assert!(refusal.contains("retry-after: 10\r\n"), "{refusal}");
    assert!(refusal.contains("connection: close\r\n"), "{refusal}");
    let body: Value = serde_json::from_str(refusal.split_once("\r\n\r\n").unwrap().1).unwrap();
    assert_eq!(body["type"], "urn:ringd:problem:at-capacity");
    assert_eq!(
        body["detail"],
        "this instance has no file descriptor left for a new connection; retry after the time Retry-After gives, or connect to another instance"
    );

    // The connections it has are served: a write, and its event.
    let answer = tokio::task::spawn_blocking(move || (send(&mut writer, &put), writer))
        .await
        .unwrap();
    assert!(answer.0.starts_with("HTTP/1.1 201"), "{}", answer.0);
    assert_eq!(watcher.next_event().await.id, Some(v + 1));
    assert!(
        s.log()
            .contains("out of file descriptors: refusing new connections"),
        "{}",
        s.log()
    );

    // Room again: new connections are accepted.
    drop(held);
    let addr = s.base.trim_start_matches("http://").to_owned();
    let accepted = tokio::task::spawn_blocking(move || {
        (0..100).any(|_| {
            let mut conn = TcpStream::connect(&addr).unwrap();
            let request = format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\n\r\n");
            let answer = send(&mut conn, &request);
            if answer.starts_with("HTTP/1.1 200") {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
            false
        })
    })
    .await
    .unwrap();
    assert!(
        accepted,
        "no new connection accepted after descriptors were freed"
    );
}
