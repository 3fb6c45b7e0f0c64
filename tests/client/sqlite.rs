//! The client library against a live ringd on SQLite: it converges on
//! every version in order (stream and long-poll), survives a crash and
//! restart of its server without missing a version, follows a ring's
//! deletion and re-creation, and falls back to long-polls when a proxy
//! refuses the stream.
#![cfg(feature = "server")]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::support::api::TestApi;
use crate::support::client::{client, keys, wait_status, Events, GUARD};
use crate::support::proxy::Proxy;
use crate::support::ringd::Ringd;
use ringd::client::{RingClient, Transport, WatchMode};

fn transport_of(mode: WatchMode) -> Transport {
    match mode {
        WatchMode::LongPoll => Transport::LongPoll,
        _ => Transport::Sse,
    }
}

/// Every key's owner as the client answers now.
fn owners(c: &RingClient) -> BTreeMap<String, Option<String>> {
    keys()
        .into_iter()
        .map(|k| {
            let o = c.owner(k.as_bytes()).map(|n| n.to_string());
            (k, o)
        })
        .collect()
}

/// Starts a client before its ring exists (so no event can be missed),
/// creates the ring and waits for version 1.
async fn client_then_ring(s: &TestApi, mode: WatchMode, id: &str) -> (TestApi, RingClient, Events) {
    let api = TestApi::new(&s.base, "cache");
    let c = client(&[&s.base], "cache", mode, id);
    let mut ev = Events::of(&c);
    let st = wait_status(&c, "a refusal", |st| st.last_error.is_some()).await;
    let err = st.last_error.unwrap();
    assert!(err.contains("ring-not-found"), "{err}");
    assert_eq!((st.version, st.transport), (None, Transport::Connecting));
    assert_eq!(api.create().await, 1);
    ev.applied(None, 1, false).await;
    (api, c, ev)
}

async fn converges(mode: WatchMode, id: &str) {
    let s = Ringd::sqlite().in_process().start();
    let (api, c, mut ev) = client_then_ring(&s, mode, id).await;
    // Adds, a weighted add, a reweight and a removal: six versions.
    assert_eq!(api.add_each(&["n1", "n2", "n3"]).await, 4);
    assert_eq!(api.upsert("n4", 3).await, 5);
    assert_eq!(api.upsert("n2", 2).await, 6);
    assert_eq!(api.remove("n1").await, 7);
    ev.run(&api, 1, 7).await;
    api.assert_routes_like_server(&c, 7).await;
    c.wait_for_ack(7, GUARD).await.expect("ack of v7");
    api.assert_acked(id, 7).await;
    let st = c.status();
    assert_eq!(st.version, Some(7));
    assert_eq!(st.acked, Some(7));
    assert!(!st.deleted);
    assert_eq!(st.transport, transport_of(mode));
    assert_eq!(st.server.as_deref(), Some(s.url.as_str()));
    // The only failures were the attempts before the ring existed.
    let err = st.last_error.expect("the ring was missing at first");
    assert!(err.contains("ring-not-found"), "{err}");
    // Nothing is applied twice.
    ev.none_within(Duration::from_millis(300)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn converges_on_every_version_over_sse() {
    converges(WatchMode::Sse, "sse-client").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn converges_on_every_version_by_long_polling() {
    converges(WatchMode::LongPoll, "lp-client").await;
}

async fn survives_restart(mode: WatchMode, id: &str) {
    let mut s = Ringd::sqlite().start();
    let port = s.url.rsplit(':').next().expect("port").to_owned();
    let (api, c, mut ev) = client_then_ring(&s, mode, id).await;
    assert_eq!(api.add_each(&["n1", "n2", "n3"]).await, 4);
    ev.run(&api, 1, 4).await;

    s.kill();
    wait_status(&c, "disconnected", |st| {
        st.transport == Transport::Connecting
    })
    .await;
    // While the client retries its only (dead) server, the ring moves on
    // through another instance on the same database, on another port.
    let side = Ringd::sqlite_in(&s.dir).start();
    assert_ne!(side.url, s.url);
    let side_api = api.on(&side.url);
    assert_eq!(side_api.upsert("n4", 2).await, 5);
    assert_eq!(side_api.remove("n2").await, 6);
    drop(side);
    assert_eq!(c.version(), Some(4), "the client cannot have seen v5");
    let st = c.status();
    assert_eq!((st.transport, st.server), (Transport::Connecting, None));
    assert!(st.last_error.is_some());

    // The server comes back on the same address and database.
    let addr = format!("127.0.0.1:{port}");
    let back = Ringd::sqlite_in(&s.dir).args(&["--listen", &addr]).start();
    assert_eq!(back.url, s.url);
    let api = api.on(&back.url);
    ev.run(&api, 4, 6).await;
    assert_eq!(api.upsert("n5", 1).await, 7);
    assert_eq!(api.upsert("n3", 4).await, 8);
    ev.run(&api, 6, 8).await;
    api.assert_routes_like_server(&c, 8).await;
    c.wait_for_ack(8, GUARD).await.expect("ack of v8");
    api.assert_acked(id, 8).await;
    let st = c.status();
    assert_eq!(st.transport, transport_of(mode));
    assert_eq!(st.server.as_deref(), Some(back.url.as_str()));
    ev.none_within(Duration::from_millis(300)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn survives_a_server_crash_and_restart_over_sse() {
    survives_restart(WatchMode::Sse, "restart-sse").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn survives_a_server_crash_and_restart_by_long_polling() {
    survives_restart(WatchMode::LongPoll, "restart-lp").await;
}

async fn deletion_and_recreation(mode: WatchMode, id: &str) {
    let s = Ringd::sqlite().in_process().start();
    let (api, c, mut ev) = client_then_ring(&s, mode, id).await;
    assert_eq!(api.add_each(&["n1", "n2", "n3"]).await, 4);
    ev.run(&api, 1, 4).await;
    api.assert_routes_like_server(&c, 4).await;
    c.wait_for_ack(4, GUARD).await.expect("ack of v4");
    api.assert_acked(id, 4).await;
    let before = owners(&c);
    assert!(before.values().all(Option::is_some));
    let mut old_router = c.router();
    assert_eq!(old_router.version(), Some(4));

    api.delete_ring().await;
    ev.deleted().await;
    let st = c.status();
    assert!(st.deleted);
    assert_eq!(st.version, Some(4));
    // Still routing on the last version, through handles old and new.
    assert_eq!(c.version(), Some(4));
    assert_eq!(owners(&c), before);
    let mut new_router = c.router();
    for (k, o) in &before {
        for r in [&mut old_router, &mut new_router] {
            assert_eq!(r.owner(k.as_bytes()).map(|n| n.id.to_string()), *o);
        }
    }

    // A new ring of the same name replaces what the client held.
    assert_eq!(api.create().await, 1);
    let change = ev.applied(Some(4), 1, true).await;
    assert!(change.view.snapshot().nodes.is_empty());
    assert!(!c.status().deleted);
    assert_eq!(c.owner(b"user:0"), None);
    assert_eq!(old_router.version(), Some(1));
    assert!(old_router.owner(b"user:0").is_none());
    assert_eq!(api.add_each(&["m1", "m2"]).await, 3);
    ev.run(&api, 1, 3).await;
    api.assert_routes_like_server(&c, 3).await;
    // Not `wait_for_ack(3)`: it trusts the old ring's ack of v4 (see
    // `the_ack_status_starts_over_with_a_recreated_ring`).
    api.wait_listed(id, 3).await;
    ev.none_within(Duration::from_millis(300)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deletion_keeps_the_last_version_and_recreation_resets_over_sse() {
    deletion_and_recreation(WatchMode::Sse, "del-sse").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deletion_keeps_the_last_version_and_recreation_resets_by_long_polling() {
    deletion_and_recreation(WatchMode::LongPoll, "del-lp").await;
}

/// After a reset to the new ring's lower version, `Status::acked` must not
/// keep the deleted ring's ack: `wait_for_ack(n)` for any n up to the old
/// version would return at once although the server lists no ack of the
/// new ring.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ack_status_starts_over_with_a_recreated_ring() {
    let s = Ringd::sqlite().in_process().start();
    let api = TestApi::new(&s.url, "cache");
    assert_eq!(api.create().await, 1);
    assert_eq!(api.add_each(&["n1", "n2", "n3"]).await, 4);
    // Through a proxy that can hold acks back, so the new ring's ack
    // cannot race the assertions below.
    let refuse_acks = Arc::new(AtomicBool::new(false));
    let (proxy, _) = refusing_proxy(s.url.clone(), refuse_acks.clone()).await;
    let c = client(&[&proxy], "cache", WatchMode::LongPoll, "reacked");
    c.wait_for_version(4, GUARD).await.expect("v4");
    let mut ev = Events::after_ready(&c, 4);
    c.wait_for_ack(4, GUARD).await.expect("ack of v4");
    api.assert_acked("reacked", 4).await;
    refuse_acks.store(true, Ordering::SeqCst);

    api.delete_ring().await;
    ev.deleted().await;
    assert_eq!(api.create().await, 1);
    ev.applied(Some(4), 1, true).await;
    // Deleting the ring deleted its acks, and no ack gets through: the
    // client has no ack of the new ring.
    assert_eq!(api.clients().await["clients"], serde_json::json!([]));
    let acked = c.status().acked;
    assert!(
        acked.is_none_or(|a| a <= 1),
        "status claims an ack of v{acked:?} on a ring at v1 that lists no client"
    );
    assert!(
        c.wait_for_ack(1, Duration::from_millis(300)).await.is_err(),
        "wait_for_ack(1) returned with no ack recorded"
    );
    refuse_acks.store(false, Ordering::SeqCst);
    c.wait_for_ack(1, GUARD).await.expect("ack of v1");
    api.assert_acked("reacked", 1).await;
}

/// A proxy in front of `upstream` that forwards every request except the
/// watch route, which it answers with a bare 404 (no problem document),
/// as a proxy that does not know the route would, and acks while
/// `refuse_acks` is set (503). Returns its URL and the number of watch
/// requests it refused.
async fn refusing_proxy(
    upstream: String,
    refuse_acks: Arc<AtomicBool>,
) -> (String, Arc<AtomicUsize>) {
    proxy(upstream, false, refuse_acks).await
}

/// Like [`refusing_proxy`]; with `silent`, it accepts the watch as an
/// event stream but never sends a byte of it, as a buffering proxy does.
async fn proxy(
    upstream: String,
    silent: bool,
    refuse_acks: Arc<AtomicBool>,
) -> (String, Arc<AtomicUsize>) {
    use axum::body::Body;
    use axum::response::Response;

    let refused = Arc::new(AtomicUsize::new(0));
    let counter = refused.clone();
    let url = Proxy::to(&upstream)
        .answering(move |req| {
            let path = req.uri().path();
            if path.ends_with("/ack") && refuse_acks.load(Ordering::SeqCst) {
                return Some(
                    Response::builder()
                        .status(503)
                        .body(Body::empty())
                        .expect("response"),
                );
            }
            if !path.ends_with("/watch") {
                return None;
            }
            counter.fetch_add(1, Ordering::SeqCst);
            let answer = if silent {
                let never = futures::stream::pending::<Result<Vec<u8>, std::io::Error>>();
                Response::builder()
                    .header("content-type", "text/event-stream")
                    .body(Body::from_stream(never))
            } else {
                Response::builder()
                    .status(404)
                    .header("content-type", "text/plain")
                    .body(Body::from("no such route"))
            };
            Some(answer.expect("response"))
        })
        .start()
        .await;
    (url, refused)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_mode_long_polls_when_a_proxy_refuses_the_stream() {
    let s = Ringd::sqlite().in_process().start();
    let api = TestApi::new(&s.url, "cache");
    assert_eq!(api.create().await, 1);
    assert_eq!(api.add_each(&["n1", "n2"]).await, 3);
    let (proxy, refused) = refusing_proxy(s.url.clone(), Arc::default()).await;
    let c = client(&[&proxy], "cache", WatchMode::Auto, "behind-proxy");
    c.ready(GUARD).await.expect("ready through the proxy");
    let mut ev = Events::after_ready(&c, 3);
    let st = c.status();
    assert_eq!(st.transport, Transport::LongPoll);
    assert_eq!(st.server.as_deref(), Some(proxy.as_str()));
    let err = st.last_error.expect("the refused stream is reported");
    assert!(err.contains("404"), "{err}");
    assert_eq!(refused.load(Ordering::SeqCst), 1);

    assert_eq!(api.add_each(&["n3", "n4"]).await, 5);
    assert_eq!(api.upsert("n1", 5).await, 6);
    ev.run(&api, 3, 6).await;
    api.assert_routes_like_server(&c, 6).await;
    c.wait_for_ack(6, GUARD)
        .await
        .expect("ack through the proxy");
    api.assert_acked("behind-proxy", 6).await;
    let st = c.status();
    assert_eq!(st.transport, Transport::LongPoll);
    // The stream is not tried again before `sse_retry` (5 min).
    assert_eq!(refused.load(Ordering::SeqCst), 1);
    ev.none_within(Duration::from_millis(300)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_mode_long_polls_when_a_proxy_buffers_the_stream() {
    let s = Ringd::sqlite().in_process().start();
    let api = TestApi::new(&s.url, "cache");
    assert_eq!(api.create().await, 1);
    assert_eq!(api.add_each(&["n1", "n2"]).await, 3);
    let (proxy, opened) = proxy(s.url.clone(), true, Arc::default()).await;
    let c = RingClient::builder(&[&proxy], "cache")
        .client_id("buffered")
        .idle_timeout(Duration::from_millis(500))
        .backoff(Duration::from_millis(20), Duration::from_millis(300))
        .long_poll_wait(Duration::from_secs(5))
        .start()
        .expect("client");
    c.ready(GUARD).await.expect("ready through the proxy");
    let mut ev = Events::after_ready(&c, 3);
    let st = c.status();
    assert_eq!(st.transport, Transport::LongPoll);
    assert_eq!(st.server.as_deref(), Some(proxy.as_str()));
    let err = st.last_error.expect("the silent stream is reported");
    assert_eq!(
        err,
        format!("{proxy} sent no event within 500ms (a buffering proxy?)")
    );
    assert_eq!(opened.load(Ordering::SeqCst), 1);
    assert_eq!(api.upsert("n3", 2).await, 4);
    assert_eq!(api.remove("n1").await, 5);
    ev.run(&api, 3, 5).await;
    api.assert_routes_like_server(&c, 5).await;
    c.wait_for_ack(5, GUARD)
        .await
        .expect("ack through the proxy");
    api.assert_acked("buffered", 5).await;
    assert_eq!(opened.load(Ordering::SeqCst), 1);
}
