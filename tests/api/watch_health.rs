//! Health events on the watch stream (`?health=true`), on a real server
//! on SQLite with 1 s leases: each transition arrives once, in order,
//! after the version that brought the node in, with no `id` and no new
//! version; a watcher that did not ask hears none; a resume replays
//! versions only.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::support::api::{expect_json, TestApi};
use crate::support::in_process::setup;
use crate::support::ringd::Ringd;
use crate::support::sse::{Event, EventStream};

/// A 1 s lease is noticed as expired within this long: its TTL, the
/// monitor's 250 ms look, and room for a loaded machine.
const EXPIRY: Duration = Duration::from_secs(5);

fn watch_url(s: &TestApi, query: &str) -> String {
    format!("{}/v1/rings/r/watch{query}", s.base)
}

/// Registers node `c` on ring `r` with a 1 s lease; returns the answer.
async fn register(s: &TestApi, status: StatusCode) -> Value {
    register_for(s, "c", "1s", status).await
}

/// Registers node `node` on ring `r` with a lease of `ttl`.
async fn register_for(s: &TestApi, node: &str, ttl: &str, status: StatusCode) -> Value {
    let r = s
        .put(
            &format!("/v1/rings/r/nodes/{node}/lease"),
            json!({"address": "10.0.0.9:1", "ttl": ttl}),
        )
        .await;
    expect_json(r, status).await
}

/// The `health` event a lease answer and the health before it make: every
/// field of the event comes from the answer, so nothing is masked.
fn health_event(lease: &Value, health: &str, previous: Option<&str>) -> Event {
    Event {
        event: "health".into(),
        id: None,
        data: json!({
            "ring": "r",
            "node": lease["node"],
            "health": health,
            "previous": previous,
            "last_heartbeat": lease["last_heartbeat"],
            "deadline": lease["deadline"],
            "lease_id": lease["lease_id"],
        }),
    }
}

async fn assert_snapshot(s: &TestApi, e: &Event, v: u64) {
    assert_eq!((e.event.as_str(), e.id), ("snapshot", Some(v)), "{e:?}");
    assert_eq!(
        e.data,
        s.get_ok(&format!("/v1/rings/r/snapshots/{v}")).await
    );
}

#[tokio::test]
async fn a_health_watcher_hears_each_transition_once_in_order_and_no_version() {
    let (s, _) = setup().await;
    let mut health = EventStream::open(&watch_url(&s, "?health=true"), None).await;
    let mut plain = EventStream::open(&watch_url(&s, ""), None).await;
    assert_snapshot(&s, &health.next_event().await, 3).await;
    assert_snapshot(&s, &plain.next_event().await, 3).await;

    // Registration: the version first, then the node's health.
    let first = register(&s, StatusCode::CREATED).await;
    assert_eq!(first["version"], 4);
    assert_snapshot(&s, &health.next_event().await, 4).await;
    assert_eq!(
        health.next_event().await,
        health_event(&first, "healthy", None)
    );

    // No renewal: unhealthy after the TTL, and no version for it.
    assert_eq!(
        health.next_within(EXPIRY).await,
        health_event(&first, "unhealthy", Some("healthy"))
    );
    assert_eq!(s.state_of("r").await.0, 4, "expiry makes no version");

    // Registering the same record again: a new lease, healthy, no version.
    let second = register(&s, StatusCode::OK).await;
    assert_eq!(
        (&second["version"], &second["changed"]),
        (&json!(4), &json!(false))
    );
    assert_ne!(second["lease_id"], first["lease_id"]);
    assert_eq!(
        health.next_event().await,
        health_event(&second, "healthy", Some("unhealthy"))
    );

    // A release: the ring's default `on_leave: remove` removes the node at
    // once, so the watcher hears the version, then the node leave health
    // (the last lease it saw, `health: null`).
    let lease = second["lease_id"].as_str().unwrap();
    let r = s
        .delete(&format!("/v1/rings/r/nodes/c/lease/{lease}"))
        .await;
    let left = expect_json(r, StatusCode::OK).await;
    assert_eq!(
        (&left["version"], &left["changed"]),
        (&json!(5), &json!(true))
    );
    assert_snapshot(&s, &health.next_event().await, 5).await;
    let mut gone = health_event(&second, "healthy", Some("healthy"));
    gone.data["health"] = Value::Null;
    assert_eq!(health.next_event().await, gone);
    assert_eq!(s.state_of("r").await.0, 5);

    // The watcher that did not ask had the versions and nothing else.
    assert_snapshot(&s, &plain.next_event().await, 4).await;
    assert_snapshot(&s, &plain.next_event().await, 5).await;
    assert_eq!(plain.quiet_for(Duration::from_millis(500)).await, None);
    assert_eq!(health.quiet_for(Duration::from_millis(500)).await, None);
    for (to, n) in [("healthy", 2), ("unhealthy", 1), ("removed", 1)] {
        let name = format!("ringd_health_transitions_total{{ring=\"r\",to=\"{to}\"}}");
        assert_eq!(s.metric(&name).await, n, "{name}");
    }
}

#[tokio::test]
async fn a_resume_after_health_events_replays_versions_only() {
    let (s, _) = setup().await;
    let mut health = EventStream::open(&watch_url(&s, "?health=true"), None).await;
    assert_snapshot(&s, &health.next_event().await, 3).await;
    // Long leases: nothing expires while the test runs.
    let c = register_for(&s, "c", "1h", StatusCode::CREATED).await;
    assert_snapshot(&s, &health.next_event().await, 4).await;
    assert_eq!(health.next_event().await, health_event(&c, "healthy", None));
    assert_eq!(s.upsert("d", 1).await, 5);
    assert_snapshot(&s, &health.next_event().await, 5).await;
    drop(health);

    // The last id the client saw before the health event was 4: it gets
    // version 5 again and then what happens live, no health replayed.
    let mut resumed = EventStream::open(&watch_url(&s, "?health=true"), Some(4)).await;
    assert_snapshot(&s, &resumed.next_event().await, 5).await;
    let e = register_for(&s, "e", "1h", StatusCode::CREATED).await;
    assert_snapshot(&s, &resumed.next_event().await, 6).await;
    assert_eq!(
        resumed.next_event().await,
        health_event(&e, "healthy", None)
    );

    // At the newest version, a resume hears a keep-alive, not health.
    let mut at_newest = EventStream::open(&watch_url(&s, "?health=true"), Some(6)).await;
    let k = at_newest.next_event().await;
    assert_eq!((k.event.as_str(), k.id), ("keepalive", None), "{k:?}");
    assert_eq!(k.data["version"], 6);
    assert_eq!(at_newest.quiet_for(Duration::from_millis(500)).await, None);
}

#[tokio::test]
async fn the_health_event_is_one_frame_without_an_id_line() {
    let (s, _) = setup().await;
    let mut stream = s
        .req(Method::GET, "/v1/rings/r/watch?health=true&mode=light")
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    let first = stream.chunk().await.unwrap().unwrap();
    assert!(first.starts_with(b"event: snapshot\nid: 3\ndata: {"));
    let lease = register(&s, StatusCode::CREATED).await;
    let mut text = String::new();
    while text.matches("\n\n").count() < 2 {
        let chunk = tokio::time::timeout(Duration::from_secs(5), stream.chunk())
            .await
            .expect("an event within 5 s")
            .unwrap()
            .unwrap();
        text.push_str(std::str::from_utf8(&chunk).unwrap());
    }
    let health = text.split_once("\n\n").unwrap().1;
    assert_eq!(
        health,
        format!(
            "event: health\ndata: {{\"ring\":\"r\",\"node\":\"c\",\"health\":\"healthy\",\"previous\":null,\"last_heartbeat\":{},\"deadline\":{},\"lease_id\":{}}}\n\n",
            lease["last_heartbeat"], lease["deadline"], lease["lease_id"]
        )
    );
}

#[tokio::test]
async fn health_events_reach_a_watch_opened_with_the_read_token() {
    let s = Ringd::sqlite()
        .args(&["--admin-token", "adm", "--read-token", "rd"])
        .in_process()
        .start();
    let admin = |method: Method, path: &str| s.req(method, path).bearer_auth("adm");
    let created = admin(Method::PUT, "/v1/rings/r")
        .json(&json!({}))
        .send()
        .await;
    assert_eq!(created.unwrap().status(), StatusCode::CREATED);
    let response = s
        .req(Method::GET, "/v1/rings/r/watch?health=true")
        .bearer_auth("rd")
        .send()
        .await
        .unwrap();
    let mut watch = EventStream::from_response(response);
    assert_eq!(watch.next_event().await.id, Some(1));
    let r = admin(Method::PUT, "/v1/rings/r/nodes/c/lease")
        .json(&json!({"address": "10.0.0.9:1", "ttl": "1s"}))
        .send()
        .await
        .unwrap();
    let lease = expect_json(r, StatusCode::CREATED).await;
    assert_eq!(watch.next_event().await.id, Some(2));
    assert_eq!(
        watch.next_event().await,
        health_event(&lease, "healthy", None)
    );
    assert_eq!(
        watch.next_within(EXPIRY).await,
        health_event(&lease, "unhealthy", Some("healthy"))
    );
}

#[tokio::test]
async fn a_health_flag_that_is_not_a_boolean_is_refused() {
    let (s, _) = setup().await;
    for query in ["?health=yes", "?health=1", "?health="] {
        let r = s.get(&format!("/v1/rings/r/watch{query}")).await;
        let body = expect_json(r, StatusCode::BAD_REQUEST).await;
        assert_eq!(
            (&body["type"], &body["field"]),
            (&json!("urn:ringd:problem:invalid-input"), &json!("health")),
            "{query}: {body}"
        );
    }
    let r = s.get("/v1/rings/r/watch?health=false").await;
    assert_eq!(r.status(), StatusCode::OK);
}
