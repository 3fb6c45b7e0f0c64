//! A watcher that stops reading neither holds back the others nor makes
//! the server queue without bound: when it reads again it gets a reset to
//! the newest version instead of the backlog.

use std::time::Duration;

use crate::support::api::expect_json;
use crate::support::ringd::Ringd;
use crate::support::sse::EventStream;
use reqwest::StatusCode;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Nodes in the ring: each full event is then about 80 KB.
const NODES: usize = 1_000;
/// Changes made while one watcher is stalled: far more than the 64
/// versions a stream may fall behind, and far more bytes than the kernel's
/// socket buffers hold.
const CHANGES: u64 = 120;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_watcher_ends_in_a_reset_and_delays_nobody() {
    let s = Ringd::sqlite().in_process().start();
    expect_json(s.put("/v1/rings/r", json!({})).await, StatusCode::CREATED).await;
    let ops: Vec<_> = (0..NODES)
        .map(|i| json!({"op": "upsert", "node": {"id": format!("node-{i:04}"), "address": format!("10.0.{}.{}:11211", i / 250, i % 250)}}))
        .collect();
    let r = s.post("/v1/rings/r/changes", json!({"ops": ops})).await;
    assert_eq!(expect_json(r, StatusCode::OK).await["version"], 2);

    // The stalled watcher: a tiny receive buffer, and it never reads.
    let addr = s.url.trim_start_matches("http://").parse().unwrap();
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut stalled = socket.connect(addr).await.unwrap();
    stalled
        .write_all(b"GET /v1/rings/r/watch HTTP/1.1\r\nHost: ringd\r\n\r\n")
        .await
        .unwrap();
    let mut fast = EventStream::open(&format!("{}/v1/rings/r/watch", s.url), None).await;
    assert_eq!(fast.next_event().await.id, Some(2));

    for v in 3..=CHANGES + 2 {
        let i = v as usize % NODES;
        let r = s
            .put(
                &format!("/v1/rings/r/nodes/node-{i:04}"),
                json!({"weight": 1 + v % 3 + 1}),
            )
            .await;
        assert_eq!(expect_json(r, StatusCode::OK).await["version"], v);
        // The fast watcher gets each version right away, in order.
        let e = fast.next_event().await;
        assert_eq!((e.event.as_str(), e.id), ("snapshot", Some(v)));
    }
    let newest = CHANGES + 2;

    // Now the stalled watcher reads everything that is waiting for it.
    let mut text = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    let seen = loop {
        let n = tokio::time::timeout(Duration::from_secs(10), stalled.read(&mut buf))
            .await
            .expect("the stalled watcher gets its events")
            .unwrap();
        assert!(n > 0, "the stream ended");
        text.extend_from_slice(&buf[..n]);
        let seen = events(&text);
        if seen.last().is_some_and(|(_, id)| *id == newest) {
            break seen;
        }
    };
    // A prefix of versions in order, then one reset to the newest.
    let (kind, id) = seen.last().unwrap().clone();
    assert_eq!((kind.as_str(), id), ("reset", newest), "{seen:?}");
    let before: Vec<u64> = seen[..seen.len() - 1].iter().map(|(_, id)| *id).collect();
    assert!(seen[..seen.len() - 1].iter().all(|(k, _)| k == "snapshot"));
    assert_eq!(before, (2..2 + before.len() as u64).collect::<Vec<_>>());
    assert!(
        (before.len() as u64) < CHANGES,
        "the backlog was not cut short: {before:?}"
    );
    let metrics = s.get("/metrics").await.text().await.unwrap();
    assert!(
        metrics.contains("ringd_watch_resets_total 1\n"),
        "{metrics}"
    );
}

/// The (event, id) of every complete event in a raw chunked response.
fn events(raw: &[u8]) -> Vec<(String, u64)> {
    let text = String::from_utf8_lossy(raw);
    let mut out = Vec::new();
    let mut kind = None;
    for line in text.lines() {
        if let Some(k) = line.strip_prefix("event: ") {
            kind = Some(k.to_owned());
        } else if let Some(id) = line.strip_prefix("id: ") {
            if let (Some(k), Ok(id)) = (kind.take(), id.parse()) {
                out.push((k, id));
            }
        }
    }
    out
}
