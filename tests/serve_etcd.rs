//! `ringd serve --store etcd://…` end to end: two instances on one etcd
//! serve the same rings.
#![cfg(feature = "server")]

mod common_etcd;
mod common_ringd;

use std::time::{Duration, Instant};

use common_etcd::Etcd;
use common_ringd::Ringd;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_share_one_etcd() {
    let etcd = Etcd::start().await;
    let store = format!("etcd://{}", etcd.endpoint.trim_start_matches("http://"));
    let a = Ringd::start(&store, "/it");
    let b = Ringd::start(&store, "/it");
    let http = reqwest::Client::new();
    let created = http
        .put(format!("{}/v1/rings/cache", a.url))
        .json(&serde_json::json!({"algorithm": "ring"}))
        .send()
        .await
        .unwrap();
    assert!(created.status().is_success(), "{}", created.status());
    // B reads version 1 first, so it holds the ring in memory: seeing
    // version 2 below then needs its etcd watch, not a cold read.
    let first: serde_json::Value = http
        .get(format!("{}/v1/rings/cache/snapshot", b.url))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(first["version"], 1, "{first}");
    let node = http
        .put(format!("{}/v1/rings/cache/nodes/n1", a.url))
        .json(&serde_json::json!({"address": "10.0.0.1:1"}))
        .send()
        .await
        .unwrap();
    assert!(node.status().is_success(), "{}", node.status());
    // B follows etcd through a watch: it serves version 2 soon after A
    // acknowledged it, not necessarily at once.
    let deadline = Instant::now() + Duration::from_secs(5);
    let snapshot = loop {
        let s: serde_json::Value = http
            .get(format!("{}/v1/rings/cache/snapshot", b.url))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if s["version"] == 2 || Instant::now() > deadline {
            break s;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(snapshot["version"], 2, "{snapshot}");
    assert_eq!(snapshot["nodes"][0]["id"], "n1", "{snapshot}");
}
