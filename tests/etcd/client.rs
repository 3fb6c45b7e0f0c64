//! The client library against two `ringd serve` instances on one real
//! etcd: it converges through whichever it is connected to, and when that
//! instance dies it fails over to the other and resumes without missing
//! or repeating a version, over SSE and by long-polling.
#![cfg(feature = "server")]

use std::time::Duration;

use crate::support::api::TestApi;
use crate::support::client::{client, wait_status, Events, GUARD};
use crate::support::etcd_pair::EtcdPair;
use ringd::client::{Transport, WatchMode};

async fn fails_over(mode: WatchMode, prefix: &str, id: &str) {
    // The instances move out; their etcd stays in `pair` and outlives them.
    let pair = EtcdPair::start(prefix).await;
    let mut instances = [Some(pair.a), Some(pair.b)];
    let urls: Vec<String> = instances
        .iter()
        .map(|i| i.as_ref().unwrap().url.clone())
        .collect();
    let transport = if mode == WatchMode::LongPoll {
        Transport::LongPoll
    } else {
        Transport::Sse
    };

    // The client starts before the ring exists, so it misses nothing.
    let c = client(&[&urls[0], &urls[1]], "cache", mode, id);
    let mut ev = Events::of(&c);
    wait_status(&c, "a refusal", |s| s.last_error.is_some()).await;
    let api = TestApi::new(&urls[1], "cache");
    assert_eq!(api.create().await, 1);
    ev.applied(None, 1, false).await;
    assert_eq!(api.add_each(&["n1", "n2", "n3"]).await, 4);
    ev.run(&api, 1, 4).await;
    c.wait_for_ack(4, GUARD).await.expect("ack of v4");
    let st = c.status();
    assert_eq!(st.transport, transport);
    let connected = st.server.expect("connected");
    let dead = urls
        .iter()
        .position(|u| *u == connected)
        .expect("one of ours");
    let alive = 1 - dead;
    // Both instances answer the same: the ack is listed through either.
    for u in &urls {
        api.on(u).assert_acked(id, 4).await;
    }
    api.on(&connected).assert_routes_like_server(&c, 4).await;

    // The instance the client is connected to dies; changes go on
    // through the other.
    drop(instances[dead].take());
    let api = api.on(&urls[alive]);
    assert_eq!(api.upsert("n4", 2).await, 5);
    assert_eq!(api.remove("n1").await, 6);
    assert_eq!(api.upsert("n2", 3).await, 7);
    ev.run(&api, 4, 7).await;
    let st = wait_status(&c, "connected to the survivor", |s| {
        s.server.as_deref() == Some(urls[alive].as_str())
    })
    .await;
    assert_eq!(st.transport, transport);
    assert_eq!(st.version, Some(7));
    assert!(!st.deleted);
    api.assert_routes_like_server(&c, 7).await;
    c.wait_for_ack(7, GUARD).await.expect("ack of v7");
    api.assert_acked(id, 7).await;

    // It stays with the survivor.
    assert_eq!(api.add_each(&["n5"]).await, 8);
    ev.run(&api, 7, 8).await;
    ev.none_within(Duration::from_millis(300)).await;
    assert!(instances[alive].as_mut().unwrap().is_running());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fails_over_to_the_other_instance_over_sse() {
    fails_over(WatchMode::Sse, "/client-sse", "etcd-sse").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fails_over_to_the_other_instance_by_long_polling() {
    fails_over(WatchMode::LongPoll, "/client-lp", "etcd-lp").await;
}
