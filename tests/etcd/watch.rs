//! Change notifications across instances: two `ringd serve` on one etcd.
//! Whichever instance a change is written through, watchers and long-polls
//! on the other one hear of it, in order, and a client can resume its
//! watch on another instance without a gap.
#![cfg(feature = "server")]

use std::ops::Deref;
use std::time::{Duration, Instant};

use crate::support::etcd_pair::EtcdPair;
use crate::support::sse::{Event, EventStream};
use serde_json::{json, Value};

/// How long an event written through one instance may take to reach a
/// watcher on the other: the second instance learns of it through its
/// etcd watch, and this VM is slow and shared.
const ACROSS: Duration = Duration::from_secs(10);

/// A test's etcd and its two instances, both ready; `a` takes the writes.
struct Pair(EtcdPair);

impl Deref for Pair {
    type Target = EtcdPair;

    fn deref(&self) -> &EtcdPair {
        &self.0
    }
}

impl Pair {
    async fn start(prefix: &str) -> Self {
        let pair = EtcdPair::start(prefix).await;
        // Ready, each is current: a stream opened before would start
        // marked stale and later say `stale: false`.
        pair.wait_ready().await;
        Self(pair)
    }

    /// Creates ring `r` through A; it is at version 1.
    async fn create(&self) {
        let r = self.a.put("/v1/rings/r", json!({})).await;
        assert_eq!(r.status(), 201);
    }

    /// Adds node `id` through A with a reason; returns the new version.
    async fn add(&self, id: &str) -> u64 {
        let r = self
            .a
            .post(
                "/v1/rings/r/changes",
                json!({"ops": [{"op": "upsert", "node": {"id": id}}],
                       "reason": format!("add {id}")}),
            )
            .await;
        assert_eq!(r.status(), 200, "add {id}");
        let body: Value = r.json().await.unwrap();
        body["version"].as_u64().unwrap()
    }

    /// Snapshot `v` as A serves it: the reference every event on B is
    /// compared with, so B must relay exactly what A committed.
    async fn snapshot(&self, v: u64) -> Value {
        self.a.get_ok(&format!("/v1/rings/r/snapshots/{v}")).await
    }

    /// Asserts that `e` is a `kind` event of version `v` whose data is
    /// exactly snapshot `v` as A serves it.
    async fn assert_snapshot(&self, e: &Event, kind: &str, v: u64) {
        assert_eq!((e.event.as_str(), e.id), (kind, Some(v)), "{e:?}");
        assert_eq!(e.data, self.snapshot(v).await, "version {v}");
    }
}

fn watch_url(base: &str, query: &str) -> String {
    format!("{base}/v1/rings/r/watch{query}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watcher_on_b_receives_every_version_written_through_a() {
    let p = Pair::start("/fanout").await;
    p.create().await;
    // Both watchers are open before the writes, so each version reaches
    // them live through B's etcd watch, not as a replay from the store.
    let mut full = EventStream::open(&watch_url(&p.b.url, ""), None).await;
    let mut light = EventStream::open(&watch_url(&p.b.url, "?mode=light"), None).await;
    p.assert_snapshot(&full.next_within(ACROSS).await, "snapshot", 1)
        .await;
    let first = light.next_within(ACROSS).await;
    assert_eq!((first.event.as_str(), first.id), ("snapshot", Some(1)));

    let written: Vec<u64> = {
        let mut v = Vec::new();
        for id in ["n1", "n2", "n3", "n4", "n5", "n6"] {
            v.push(p.add(id).await);
        }
        v
    };
    assert_eq!(written, [2, 3, 4, 5, 6, 7]);

    for v in 2..=7 {
        p.assert_snapshot(&full.next_within(ACROSS).await, "snapshot", v)
            .await;
    }
    for v in 2..=7 {
        let e = light.next_within(ACROSS).await;
        let s = p.snapshot(v).await;
        assert_eq!((e.event.as_str(), e.id), ("snapshot", Some(v)), "{e:?}");
        assert_eq!(
            e.data,
            json!({
                "ring": "r",
                "version": v,
                "fingerprint": s["fingerprint"],
                "created_at": s["created_at"],
                "ops": 1,
                "moved_fraction": s["change"]["moved_fraction"],
                "reason": format!("add n{}", v - 1),
                "role": "anonymous",
            })
        );
    }
    // Nothing twice, nothing extra.
    assert_eq!(full.quiet_for(Duration::from_millis(300)).await, None);
    assert_eq!(light.quiet_for(Duration::from_millis(300)).await, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_dropped_on_a_resumes_on_b_without_a_gap() {
    let p = Pair::start("/resume").await;
    p.create().await;
    // B holds the ring in memory from here on, so what it knows of the
    // versions below comes from its etcd watch, which may lag.
    assert_eq!(p.b.get_ok("/v1/rings/r/snapshot").await["version"], 1);

    let mut on_a = EventStream::open(&watch_url(&p.a.url, ""), None).await;
    p.assert_snapshot(&on_a.next_event().await, "snapshot", 1)
        .await;
    assert_eq!(p.add("n1").await, 2);
    assert_eq!(p.add("n2").await, 3);
    let mut last = 0;
    for v in 2..=3 {
        let e = on_a.next_event().await;
        p.assert_snapshot(&e, "snapshot", v).await;
        last = e.id.unwrap();
    }
    assert_eq!(last, 3);
    drop(on_a);

    // Changes the client misses while it reconnects elsewhere.
    let mut newest = 0;
    for id in ["n3", "n4", "n5", "n6"] {
        newest = p.add(id).await;
    }
    assert_eq!(newest, 7);

    let mut on_b = EventStream::open(&watch_url(&p.b.url, ""), Some(last)).await;
    let mut ids = Vec::new();
    while ids.last() != Some(&newest) {
        let e = on_b.next_within(ACROSS).await;
        // Only replayed snapshots: a keep-alive (B has not heard of the
        // newer versions yet) would be harmless, but with the default 15 s
        // interval it cannot come before ACROSS runs out; a reset would
        // make the client throw away state it holds, so it must not come.
        assert_eq!(e.event, "snapshot", "{e:?} after {ids:?}");
        p.assert_snapshot(&e, "snapshot", e.id.unwrap()).await;
        ids.push(e.id.unwrap());
    }
    assert_eq!(ids, (last + 1..=newest).collect::<Vec<_>>());
    assert_eq!(on_b.quiet_for(Duration::from_millis(300)).await, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_poll_on_b_wakes_up_on_a_write_through_a() {
    let p = Pair::start("/poll").await;
    p.create().await;
    let current = p.b.get_ok("/v1/rings/r/snapshot").await;
    assert_eq!(current["version"], 1);

    let b = p.b.api().clone();
    let started = Instant::now();
    let poll = tokio::spawn(async move { b.get("/v1/rings/r/snapshot?after=1&wait=20s").await });
    // The write must come after the poll is parked, or this would test
    // the immediate answer instead of the wake-up.
    while p.b.metric("ringd_long_polls_waiting").await != 1 {
        assert!(started.elapsed() < Duration::from_secs(5), "never waited");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(p.add("n1").await, 2);

    let answer = poll.await.unwrap();
    // Well short of the 20 s wait: woken by the write, not timed out.
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "it waited out the timeout"
    );
    assert_eq!(answer.status(), 200);
    assert_eq!(answer.headers()["etag"], "\"2\"");
    assert_eq!(answer.headers().get("ringd-reset"), None);
    let body: Value = answer.json().await.unwrap();
    assert_eq!(body["version"], 2);
    assert_eq!(body, p.snapshot(2).await);
    assert_eq!(p.b.metric("ringd_long_polls_waiting").await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ring_recreated_through_a_arrives_on_b_as_deleted_then_reset() {
    let p = Pair::start("/reset").await;
    p.create().await;
    assert_eq!(p.add("n1").await, 2);
    assert_eq!(p.add("n2").await, 3);
    let mut on_b = EventStream::open(&watch_url(&p.b.url, ""), None).await;
    // B may load the ring before or after its etcd watch delivers the
    // last write; either way it ends at version 3 without skipping.
    let mut e = on_b.next_within(ACROSS).await;
    while e.id != Some(3) {
        assert_eq!(e.event, "snapshot", "{e:?}");
        e = on_b.next_within(ACROSS).await;
    }
    p.assert_snapshot(&e, "snapshot", 3).await;

    let r = p.a.delete("/v1/rings/r").await;
    assert_eq!(r.status(), 204);
    let e = on_b.next_within(ACROSS).await;
    assert_eq!((e.event.as_str(), e.id), ("deleted", None), "{e:?}");
    assert_eq!(e.data, json!({"ring": "r"}));

    // Recreated only once B told of the deletion: a deletion and a
    // re-creation close together may reach B's hub as one change, which
    // rightly shows as a reset alone.
    p.create().await;
    p.assert_snapshot(&on_b.next_within(ACROSS).await, "reset", 1)
        .await;
    assert_eq!(on_b.quiet_for(Duration::from_millis(300)).await, None);
}

/// The race the gapless resume above only rarely meets: the client saw a
/// version on A and resumes on B before B's etcd watch delivered it. B
/// must not take its older cached version for a recreated ring and answer
/// with a `reset` (to a version older than the client's); it must say the
/// client is current. Likewise a long-poll with `after` beyond B's cache.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resuming_on_b_at_a_version_b_has_not_heard_of_yet_is_no_reset() {
    let p = Pair::start("/ahead").await;
    p.create().await;
    // B holds the ring in memory, so its view follows its etcd watch.
    assert_eq!(p.b.get_ok("/v1/rings/r/snapshot").await["version"], 1);
    // Several rounds: B is behind right after a write through A only some
    // of the time.
    for round in 0..10 {
        let v = p.add(&format!("n{round}")).await;
        let fingerprint = p.snapshot(v).await["fingerprint"].clone();
        if round % 2 == 0 {
            let mut on_b = EventStream::open(&watch_url(&p.b.url, ""), Some(v)).await;
            let e = on_b.next_within(ACROSS).await;
            assert_eq!((e.event.as_str(), e.id), ("keepalive", None), "{e:?}");
            assert_eq!(
                e.data,
                json!({"ring": "r", "version": v, "fingerprint": fingerprint})
            );
        } else {
            let r = p.b.get(&format!("/v1/rings/r/snapshot?after={v}")).await;
            assert_eq!(r.headers().get("ringd-reset"), None, "after={v}");
            assert_eq!(r.status(), 304, "after={v}");
            assert_eq!(r.headers()["etag"], format!("\"{v}\"").as_str());
        }
    }
}
