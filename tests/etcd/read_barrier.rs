//! An answer without `Ringd-Stale` is current: a read through one
//! instance reflects every change acknowledged through another before the
//! read was sent, though the second instance hears of it only through its
//! etcd watch.
#![cfg(feature = "server")]

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::support::api::{expect_json, TestApi};
use crate::support::etcd_pair::EtcdPair;

/// Changes made through A, each read back through B at once.
const ROUNDS: u64 = 60;

/// `path` through `api`: its status, whether it was marked stale, its body.
async fn read(api: &TestApi, path: &str) -> (StatusCode, bool, Value) {
    let r = api.get(path).await;
    let stale = r.headers().contains_key("ringd-stale");
    (r.status(), stale, r.json().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_through_b_right_after_a_write_through_a_sees_it() {
    let pair = EtcdPair::start("/barrier").await;
    pair.wait_ready().await;
    let (a, b) = (&pair.a, &pair.b);
    let created = a.put("/v1/rings/cache", json!({"algorithm": "ring"})).await;
    expect_json(created, StatusCode::CREATED).await;
    // B holds the ring in memory from here on, so what it answers below
    // comes from its cache, which only its watch moves forward.
    let (_, _, first) = read(b.api(), "/v1/rings/cache/snapshot").await;
    assert_eq!(first["version"], 1, "{first}");
    for i in 1..=ROUNDS {
        let node = format!("n{i}");
        let put = a
            .put(
                &format!("/v1/rings/cache/nodes/{node}"),
                json!({"address": format!("10.0.0.{i}:80")}),
            )
            .await;
        let put = expect_json(put, StatusCode::CREATED).await;
        let version = i + 1;
        assert_eq!(put["version"], version, "{put}");
        // Each read path, at once: the snapshot, a lookup, ownership and
        // the history all name the version A acknowledged.
        let (status, stale, snapshot) = read(b.api(), "/v1/rings/cache/snapshot").await;
        assert_eq!((status, stale), (StatusCode::OK, false), "{snapshot}");
        assert_eq!(snapshot["version"], version, "round {i}: {snapshot}");
        let (status, stale, lookup) = read(b.api(), "/v1/rings/cache/lookup?key=k").await;
        assert_eq!((status, stale), (StatusCode::OK, false), "{lookup}");
        assert_eq!(lookup["version"], version, "round {i}: {lookup}");
        let (status, stale, owners) = read(b.api(), "/v1/rings/cache/ownership").await;
        assert_eq!((status, stale), (StatusCode::OK, false), "{owners}");
        assert_eq!(owners["version"], version, "round {i}: {owners}");
        // A long-poll for anything newer than the previous version answers
        // at once with this one.
        let (status, stale, polled) = read(
            b.api(),
            &format!("/v1/rings/cache/snapshot?after={}&wait=5s", version - 1),
        )
        .await;
        assert_eq!((status, stale), (StatusCode::OK, false), "{polled}");
        assert_eq!(polled["version"], version, "round {i}: {polled}");
    }
    let (_, stale, history) = read(b.api(), "/v1/rings/cache/history").await;
    assert!(!stale);
    let versions: Vec<u64> = history["entries"]
        .as_array()
        .unwrap_or_else(|| panic!("no entries in {history}"))
        .iter()
        .map(|v| v["version"].as_u64().unwrap())
        .collect();
    assert_eq!(versions, (1..=ROUNDS + 1).collect::<Vec<_>>());
}
