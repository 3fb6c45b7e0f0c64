//! What a client does so that a fleet of them fits an instance: it comes
//! back from a watch refused at capacity no sooner than the server's
//! `Retry-After`, and its acks leave no second connection open beside its
//! watch.
#![cfg(feature = "server")]

use std::time::Duration;

use crate::support::api::TestApi;
use crate::support::client::{wait_status, GUARD};
use crate::support::ringd::Ringd;
use crate::support::sse::EventStream;
use ringd::client::{RingClient, WatchMode};

/// The client's settings but for its id: the default backoff, whose
/// maximum (10 s) is above any `Retry-After` ringd sends.
fn default_client(url: &str, mode: WatchMode) -> RingClient {
    RingClient::builder(&[url], "r")
        .client_id("fleet-member")
        .watch_mode(mode)
        .start()
        .expect("client starts")
}

async fn metric_eventually(s: &TestApi, name: &str, want: u64) {
    let deadline = tokio::time::Instant::now() + GUARD;
    while s.metric(name).await != want {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{name} never {want}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn refused_watch_waits_for_retry_after(mode: WatchMode) {
    let s = Ringd::sqlite().args(&["--max-watchers", "1"]).start();
    let api = TestApi::new(&s.url, "r");
    let v = api.ring_with("r", &["a", "b"]).await;
    // The only slot, held by another watcher.
    let mut held = EventStream::open(&format!("{}/v1/rings/r/watch", s.url), None).await;
    assert_eq!(held.next_event().await.id, Some(v));
    // A long-poll is only a watcher once it waits: this client holds a
    // version already, so its first long-poll would wait.
    let c = default_client(&s.url, mode);
    if mode == WatchMode::LongPoll {
        // Its first request (no version held) is answered at once.
        c.wait_for_version(v, GUARD).await.expect("first snapshot");
    }
    metric_eventually(&api, "ringd_watchers_refused_total", 1).await;
    wait_status(&c, "the refusal", |st| {
        st.last_error
            .as_deref()
            .is_some_and(|e| e.contains("at-capacity") || e.contains("limit (--max-watchers)"))
    })
    .await;
    // Retry-After is at least 1 s; a client that ignored it would have
    // come back after its first backoff step (50–100 ms).
    tokio::time::sleep(Duration::from_millis(900)).await;
    assert_eq!(api.metric("ringd_watchers_refused_total").await, 1);
    drop(held);
    // Back within the longest Retry-After (10 s) and its second of jitter.
    let v2 = api.upsert("c", 1).await;
    c.wait_for_version(v2, Duration::from_secs(30))
        .await
        .expect("following once the slot is free");
    assert_eq!(api.metric("ringd_watchers").await, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_refused_at_capacity_comes_back_after_retry_after() {
    refused_watch_waits_for_retry_after(WatchMode::Sse).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_poll_refused_at_capacity_comes_back_after_retry_after() {
    refused_watch_waits_for_retry_after(WatchMode::LongPoll).await;
}

/// The server's open TCP sockets, from its descriptor table.
fn sockets_of(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("the server's descriptors")
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter(|l| l.to_string_lossy().starts_with("socket:"))
        .count()
}

/// The server's socket count once it has held still for 200 ms: the
/// connections of a dropped client take a moment to close.
async fn settled_sockets(pid: u32) -> usize {
    let deadline = tokio::time::Instant::now() + GUARD;
    let mut last = sockets_of(pid);
    loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let now = sockets_of(pid);
        if now == last || tokio::time::Instant::now() > deadline {
            return now;
        }
        last = now;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_following_client_holds_one_connection_once_it_has_acked() {
    let s = Ringd::sqlite().start();
    // The test's own requests go through a keep-alive pool, which may hold
    // one connection or two; dropping it closes them, so the count below is
    // the listener's and the client's alone.
    let api = TestApi::new(&s.url, "r");
    api.ring_with("r", &["a", "b"]).await;
    drop(api);
    let before = settled_sockets(s.pid()).await;
    let c = default_client(&s.url, WatchMode::Sse);
    let api = TestApi::new(&s.url, "r");
    let v = api.upsert("c", 1).await;
    c.wait_for_version(v, GUARD).await.expect("following");
    c.wait_for_ack(v, GUARD).await.expect("acked");
    api.wait_listed("fleet-member", v).await;
    drop(api);
    // The ack's connection closes once answered; the watch stays.
    let deadline = tokio::time::Instant::now() + GUARD;
    while sockets_of(s.pid()) != before + 1 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the server holds {} sockets for one client",
            sockets_of(s.pid()) - before
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
