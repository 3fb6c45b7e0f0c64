//! The `jump` bucket order on the wire: one id or `null` per bucket in
//! snapshots and full watch events, though ringd holds and stores runs,
//! the same after a restart, and read back into runs by the Rust client.
#![cfg(feature = "server")]

use crate::support::api::{expect_json, TestApi};
use crate::support::client::{client, wait_status};
use crate::support::ringd::Ringd;
use crate::support::sse::EventStream;
use reqwest::StatusCode;
use ringd::client::WatchMode;
use ringd::placement::NodeId;
use ringd::ring::BucketRun;
use serde_json::{json, Value};

async fn put_node(s: &TestApi, id: &str, weight: u64) -> u64 {
    let r = s
        .put(
            &format!("/v1/rings/j/nodes/{id}"),
            json!({ "weight": weight }),
        )
        .await;
    expect_json(r, StatusCode::CREATED).await["version"]
        .as_u64()
        .unwrap()
}

/// Ring `j` at version 5: `a` (2), `b` (1), `c` (3) joined and `b` left,
/// so its order is `a a - c c c`.
async fn ring_with_a_hole(s: &TestApi) {
    let r = s.put("/v1/rings/j", json!({"algorithm": "jump"})).await;
    expect_json(r, StatusCode::CREATED).await;
    put_node(s, "a", 2).await;
    put_node(s, "b", 1).await;
    assert_eq!(put_node(s, "c", 3).await, 4);
    let r = s.delete("/v1/rings/j/nodes/b").await;
    assert_eq!(expect_json(r, StatusCode::OK).await["version"], 5);
}

fn buckets(snapshot: &Value) -> &Value {
    &snapshot["buckets"]
}

#[tokio::test]
async fn snapshots_carry_one_entry_per_bucket() {
    let dir = tempfile::TempDir::new().unwrap();
    let mut s = Ringd::sqlite_in(dir.path()).start();
    ring_with_a_hole(&s).await;
    let latest = s.get_ok("/v1/rings/j/snapshot").await;
    assert_eq!(*buckets(&latest), json!(["a", "a", null, "c", "c", "c"]));
    let v4 = s.get_ok("/v1/rings/j/snapshots/4").await;
    assert_eq!(*buckets(&v4), json!(["a", "a", "b", "c", "c", "c"]));
    // Version 1 has no nodes: an empty order, still present.
    let v1 = s.get_ok("/v1/rings/j/snapshots/1").await;
    assert_eq!(*buckets(&v1), json!([]));
    // A new node fills the hole first.
    assert_eq!(put_node(&s, "d", 2).await, 6);
    let v6 = s.get_ok("/v1/rings/j/snapshot").await;
    assert_eq!(*buckets(&v6), json!(["a", "a", "d", "c", "c", "c", "d"]));

    // Other algorithms have no `buckets` at all.
    s.ring_with("plain", &["x"]).await;
    let plain = s.get_ok("/v1/rings/plain/snapshot").await;
    assert_eq!(plain.get("buckets"), None);

    // Stored as runs, served per bucket again after a restart.
    s.kill();
    let s = Ringd::sqlite_in(dir.path()).start();
    assert_eq!(s.get_ok("/v1/rings/j/snapshots/4").await, v4);
    assert_eq!(s.get_ok("/v1/rings/j/snapshots/5").await, latest);
    assert_eq!(s.get_ok("/v1/rings/j/snapshot").await, v6);
}

#[tokio::test]
async fn full_watch_events_carry_one_entry_per_bucket() {
    let s = Ringd::sqlite().in_process().start();
    ring_with_a_hole(&s).await;
    let url = format!("{}/v1/rings/j/watch?after=3", s.url);
    let mut w = EventStream::open(&url, None).await;
    for (v, order) in [
        (4, json!(["a", "a", "b", "c", "c", "c"])),
        (5, json!(["a", "a", null, "c", "c", "c"])),
    ] {
        let e = w.next_event().await;
        assert_eq!((e.event.as_str(), e.id), ("snapshot", Some(v)), "{e:?}");
        assert_eq!(*buckets(&e.data), order);
        assert_eq!(
            e.data,
            s.get_ok(&format!("/v1/rings/j/snapshots/{v}")).await
        );
    }
}

/// The client reads the per-bucket wire form into runs and routes every
/// key as the server does, by stream and by long-poll.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_reads_the_order_as_runs() {
    let s = Ringd::sqlite().in_process().start();
    let api = TestApi::new(&s.url, "j");
    assert_eq!(api.create_with(json!({"algorithm": "jump"})).await, 1);
    api.upsert("a", 2000).await;
    api.upsert("b", 3).await;
    api.upsert("c", 5000).await;
    assert_eq!(api.remove("b").await, 5);
    let run = |owner: Option<&str>, len| BucketRun {
        owner: owner.map(|o| NodeId::new(o).unwrap()),
        len,
    };
    for (mode, id) in [(WatchMode::Sse, "sse"), (WatchMode::LongPoll, "poll")] {
        let c = client(&[&s.url], "j", mode, id);
        wait_status(&c, "version 5", |st| st.version == Some(5)).await;
        let view = c.current().expect("a view");
        assert_eq!(
            view.snapshot()
                .bucket_runs
                .as_ref()
                .expect("a jump order")
                .runs(),
            [run(Some("a"), 2000), run(None, 3), run(Some("c"), 5000)],
            "{mode:?}"
        );
        let served = s.get_ok("/v1/rings/j/snapshot").await;
        assert_eq!(view.fingerprint().to_string(), served["fingerprint"]);
        api.assert_routes_like_server(&c, 5).await;
    }
}
