//! The client library ignores event types it does not know: behind a proxy
//! that asks ringd for `health` events on every watch, the client follows
//! the versions exactly as without them and records no error.
#![cfg(feature = "server")]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use crate::support::api::TestApi;
use crate::support::client::{client, wait_status, Events, GUARD};
use crate::support::proxy::Proxy;
use crate::support::ringd::Ringd;
use ringd::client::{Transport, WatchMode};

/// A streaming proxy in front of `upstream` that adds `health=true` to
/// every watch request and counts the `health` events it passes on.
async fn health_proxy(upstream: String) -> (String, Arc<AtomicUsize>) {
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = seen.clone();
    let url = Proxy::to(&upstream)
        .forwarding_to(|uri| {
            let target = uri.path_and_query().map_or("/", |p| p.as_str());
            if !uri.path().ends_with("/watch") {
                return target.to_owned();
            }
            let glue = if uri.query().is_some() { '&' } else { '?' };
            format!("{target}{glue}health=true")
        })
        .tapping(move |uri| {
            if !uri.path().ends_with("/watch") {
                return None;
            }
            // Frames are counted on the text so far, so one split across
            // chunks is still counted once.
            let (counter, mut text) = (counter.clone(), String::new());
            Some(Box::new(move |bytes: &[u8]| {
                let before = text.matches("event: health\n").count();
                text.push_str(&String::from_utf8_lossy(bytes));
                let after = text.matches("event: health\n").count();
                counter.fetch_add(after - before, Ordering::SeqCst);
            }))
        })
        .start()
        .await;
    (url, seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_events_on_the_stream_are_ignored_by_the_client() {
    let s = Ringd::sqlite().in_process().start();
    let api = TestApi::new(&s.base, "cache");
    assert_eq!(api.create().await, 1);
    let (url, health_seen) = health_proxy(s.base.clone()).await;
    let c = client(&[&url], "cache", WatchMode::Sse, "health-client");
    let mut ev = Events::of(&c);
    ev.applied(None, 1, false).await;

    let r = api
        .put(
            "/v1/rings/cache/nodes/n1/lease",
            json!({"address": "10.0.0.1:1", "ttl": "1s"}),
        )
        .await;
    assert_eq!(r.status(), 201);
    // Healthy, then unhealthy once the lease expires unrenewed.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while health_seen.load(Ordering::SeqCst) < 2 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the proxy passed {} health events",
            health_seen.load(Ordering::SeqCst)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(api.add_each(&["n2", "n3"]).await, 4);
    ev.run(&api, 1, 4).await;
    api.assert_routes_like_server(&c, 4).await;
    c.wait_for_ack(4, GUARD).await.expect("ack of v4");
    let st = wait_status(&c, "version 4", |st| st.version == Some(4)).await;
    assert_eq!(st.transport, Transport::Sse);
    assert_eq!(st.last_error, None);
    assert_eq!(health_seen.load(Ordering::SeqCst), 2);
    ev.none_within(Duration::from_millis(300)).await;
}
