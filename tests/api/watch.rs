//! Change notifications on the SQLite store: the SSE watch stream (order,
//! resume, resets, keep-alives, light mode, closed and stalled streams).

use std::time::Duration;

use crate::support::api::{expect_json, TestApi};
use crate::support::in_process::setup;
use crate::support::ringd::Ringd;
use crate::support::sse::{Event, EventStream};
use reqwest::StatusCode;
use serde_json::{json, Value};

/// Adds node `id` to ring `r`; returns the new version.
async fn add(s: &TestApi, id: &str) -> u64 {
    let r = s.put(&format!("/v1/rings/r/nodes/{id}"), json!({})).await;
    expect_json(r, StatusCode::CREATED).await["version"]
        .as_u64()
        .unwrap()
}

fn watch_url(s: &TestApi, query: &str) -> String {
    format!("{}/v1/rings/r/watch{query}", s.base)
}

/// Asserts a `snapshot` event of version `v` whose data is exactly the
/// retained snapshot `v`.
async fn assert_snapshot(s: &TestApi, e: &Event, kind: &str, v: u64) {
    assert_eq!((e.event.as_str(), e.id), (kind, Some(v)), "{e:?}");
    let stored = s.get_ok(&format!("/v1/rings/r/snapshots/{v}")).await;
    assert_eq!(e.data, stored);
}

#[tokio::test]
async fn first_the_current_snapshot_then_every_version_in_order() {
    let (s, _) = setup().await;
    let mut w = EventStream::open(&watch_url(&s, ""), None).await;
    assert_snapshot(&s, &w.next_event().await, "snapshot", 3).await;
    for (i, id) in ["c", "d", "e"].iter().enumerate() {
        assert_eq!(add(&s, id).await, 4 + i as u64);
    }
    for v in 4..=6 {
        assert_snapshot(&s, &w.next_event().await, "snapshot", v).await;
    }
    assert_eq!(w.quiet_for(Duration::from_millis(300)).await, None);
    assert_eq!(s.metric("ringd_watch_streams").await, 1);
}

#[tokio::test]
async fn resume_by_last_event_id_or_after() {
    let (s, _) = setup().await;
    for id in ["c", "d", "e"] {
        add(&s, id).await;
    }
    let mut w = EventStream::open(&watch_url(&s, "?after=3"), None).await;
    for v in 4..=6 {
        assert_snapshot(&s, &w.next_event().await, "snapshot", v).await;
    }
    // Last-Event-ID (what EventSource sends on reconnect) wins over the
    // URL's `after`, which still names where the first connection began.
    let mut w = EventStream::open(&watch_url(&s, "?after=1"), Some(4)).await;
    for v in 5..=6 {
        assert_snapshot(&s, &w.next_event().await, "snapshot", v).await;
    }
    // Resuming at the newest version: nothing to replay, and a keep-alive
    // at once says so.
    let mut w = EventStream::open(&watch_url(&s, "?after=6"), None).await;
    let e = w.next_event().await;
    let (_, fingerprint) = s.state_of("r").await;
    assert_eq!(e.event, "keepalive");
    assert_eq!(e.id, None);
    assert_eq!(
        e.data,
        json!({"ring": "r", "version": 6, "fingerprint": fingerprint})
    );
    add(&s, "f").await;
    assert_snapshot(&s, &w.next_event().await, "snapshot", 7).await;
}

#[tokio::test]
async fn resume_across_a_restart() {
    let dir = tempfile::TempDir::new().unwrap();
    let mut s = Ringd::sqlite_in(dir.path()).start();
    assert_eq!(s.ring_with("r", &["a", "b"]).await, 3);
    let mut w = EventStream::open(&watch_url(&s, ""), None).await;
    assert_eq!(w.next_event().await.id, Some(3));
    add(&s, "c").await;
    assert_eq!(w.next_event().await.id, Some(4));
    s.terminate();
    let s = Ringd::sqlite_in(dir.path()).start();
    add(&s, "d").await;
    add(&s, "e").await;
    let mut w = EventStream::open(&watch_url(&s, ""), Some(4)).await;
    for v in 5..=6 {
        assert_snapshot(&s, &w.next_event().await, "snapshot", v).await;
    }
}

#[tokio::test]
async fn reset_when_history_is_too_old_or_the_ring_was_recreated() {
    let s = Ringd::sqlite()
        .args(&["--retention", "3"])
        .in_process()
        .start();
    assert_eq!(s.ring_with("r", &["a", "b", "c", "d"]).await, 5);
    // Versions 3–5 are retained; resuming after 1 needs 2, which is gone.
    let mut w = EventStream::open(&watch_url(&s, "?after=1"), None).await;
    assert_snapshot(&s, &w.next_event().await, "reset", 5).await;
    // After 2 is fine: 3, 4, 5 are all there.
    let mut w = EventStream::open(&watch_url(&s, "?after=2"), None).await;
    for v in 3..=5 {
        assert_snapshot(&s, &w.next_event().await, "snapshot", v).await;
    }

    // A live watcher sees the deletion, then the new ring as a reset.
    let r = s.delete("/v1/rings/r").await;
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    let e = w.next_event().await;
    assert_eq!((e.event.as_str(), e.id), ("deleted", None));
    assert_eq!(e.data, json!({"ring": "r"}));
    let r = s.put("/v1/rings/r", json!({})).await;
    assert_eq!(r.status(), StatusCode::CREATED);
    assert_snapshot(&s, &w.next_event().await, "reset", 1).await;
    // A client resuming with a version the new ring has not reached.
    let mut w = EventStream::open(&watch_url(&s, ""), Some(5)).await;
    assert_snapshot(&s, &w.next_event().await, "reset", 1).await;
    assert!(s.metric("ringd_watch_resets_total").await >= 3);
}

#[tokio::test]
async fn keepalives_carry_the_current_version() {
    // The shortest keep-alive the server accepts.
    let s = Ringd::sqlite()
        .args(&["--watch-keepalive", "1s"])
        .in_process()
        .start();
    s.ring_with("r", &["a"]).await;
    let (version, fingerprint) = s.state_of("r").await;
    let mut w = EventStream::open(&watch_url(&s, ""), None).await;
    assert_eq!(w.next_event().await.id, Some(version));
    for _ in 0..2 {
        let e = w.next_within(Duration::from_secs(2)).await;
        assert_eq!((e.event.as_str(), e.id), ("keepalive", None));
        assert_eq!(
            e.data,
            json!({"ring": "r", "version": version, "fingerprint": fingerprint})
        );
    }
}

#[tokio::test]
async fn light_mode_sends_version_fingerprint_and_change_summary() {
    let (s, _) = setup().await;
    let mut w = EventStream::open(&watch_url(&s, "?mode=light"), None).await;
    let first = w.next_event().await;
    assert_eq!(first.id, Some(3));
    let changed = s
        .post(
            "/v1/rings/r/changes",
            json!({"ops": [{"op": "upsert", "node": {"id": "c"}},
                           {"op": "remove", "id": "a"}],
                   "reason": "swap a for c"}),
        )
        .await;
    expect_json(changed, StatusCode::OK).await;
    let e = w.next_event().await;
    let full = s.get_ok("/v1/rings/r/snapshots/4").await;
    assert_eq!((e.event.as_str(), e.id), ("snapshot", Some(4)));
    assert_eq!(
        e.data,
        json!({
            "ring": "r",
            "version": 4,
            "fingerprint": full["fingerprint"],
            "created_at": full["created_at"],
            "ops": 2,
            "moved_fraction": full["change"]["moved_fraction"],
            "reason": "swap a for c",
            "role": "anonymous",
        })
    );
}

#[tokio::test]
async fn bad_watch_requests_are_refused() {
    let (s, _) = setup().await;
    for (query, field) in [
        ("?mode=heavy", Some("mode")),
        ("?after=x", Some("after")),
        ("?since=3", Some("since")),
    ] {
        let r = s.get(&format!("/v1/rings/r/watch{query}")).await;
        let body = expect_json(r, StatusCode::BAD_REQUEST).await;
        assert_eq!(
            body["type"], "urn:ringd:problem:invalid-input",
            "{query}: {body}"
        );
        assert_eq!(body.get("field").and_then(Value::as_str), field, "{query}");
    }
    let r = s
        .req(reqwest::Method::GET, "/v1/rings/r/watch")
        .header("Last-Event-ID", "abc")
        .send()
        .await
        .unwrap();
    let body = expect_json(r, StatusCode::BAD_REQUEST).await;
    assert_eq!(body["field"], "Last-Event-ID");
    assert_eq!(
        body["detail"],
        "Last-Event-ID `abc` is not a version: resume with the id of the last event received"
    );
    let r = s.get("/v1/rings/nope/watch").await;
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn closed_streams_are_freed() {
    let s = Ringd::sqlite()
        .args(&["--watch-keepalive", "1s"])
        .in_process()
        .start();
    s.ring_with("r", &["a"]).await;
    let mut w = EventStream::open(&watch_url(&s, ""), None).await;
    w.next_event().await;
    assert_eq!(s.metric("ringd_watch_streams").await, 1);
    drop(w);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while s.metric("ringd_watch_streams").await != 0 {
        assert!(std::time::Instant::now() < deadline, "stream never freed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_watch_on_a_reused_connection_streams_the_same_events() {
    let (s, _) = setup().await;
    // One client, one connection: the watch is its second request.
    let client = reqwest::Client::new();
    let first = client
        .get(format!("{}/v1/rings/r", s.url))
        .send()
        .await
        .unwrap();
    assert_eq!(first.status(), StatusCode::OK);
    first.bytes().await.unwrap();
    let mut response = client
        .get(watch_url(&s, "?mode=light"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let chunk = response.chunk().await.unwrap().unwrap();
    let text = String::from_utf8(chunk.to_vec()).unwrap();
    assert!(
        text.starts_with("event: snapshot\nid: 3\ndata: {\"ring\":\"r\",\"version\":3,"),
        "{text}"
    );
    let mut fresh = EventStream::open(&watch_url(&s, "?mode=light"), None).await;
    let e = fresh.next_event().await;
    let data = text.trim_end().split_once("data: ").unwrap().1;
    assert_eq!(e.data, serde_json::from_str::<Value>(data).unwrap());
}

#[tokio::test]
async fn watching_needs_the_read_token() {
    let s = Ringd::sqlite()
        .args(&["--admin-token", "adm", "--read-token", "rd"])
        .in_process()
        .start();
    let created = s
        .req(reqwest::Method::PUT, "/v1/rings/r")
        .bearer_auth("adm")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), StatusCode::CREATED);
    let anonymous = reqwest::get(watch_url(&s, "")).await.unwrap();
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        anonymous.headers()["content-type"],
        "application/problem+json"
    );
    let wrong = reqwest::Client::new()
        .get(watch_url(&s, ""))
        .bearer_auth("nope")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    let mut reader = reqwest::Client::new()
        .get(watch_url(&s, ""))
        .bearer_auth("rd")
        .send()
        .await
        .unwrap();
    assert_eq!(reader.status(), StatusCode::OK);
    let chunk = reader.chunk().await.unwrap().unwrap();
    assert!(chunk.starts_with(b"event: snapshot\nid: 1\n"));
}
