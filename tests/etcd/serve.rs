//! `ringd serve --store etcd://…` end to end: two instances on one etcd
//! serve the same rings.
#![cfg(feature = "server")]


use std::time::{Duration, Instant};

use crate::support::etcd::Etcd;
use crate::support::etcd_ringd::Ringd;

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

/// A change retried through another instance, after its first attempt's
/// response was lost, is answered with the version the first committed;
/// attempts racing through both instances commit it once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keyed_retry_on_another_instance_is_not_applied_twice() {
    let etcd = Etcd::start().await;
    let store = format!("etcd://{}", etcd.host_port);
    let a = Ringd::start(&store, "/idem");
    let b = Ringd::start(&store, "/idem");
    let http = reqwest::Client::new();
    let created = http
        .put(format!("{}/v1/rings/cache", a.url))
        .json(&serde_json::json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    let post = |url: &str, key: &str, node: &str| {
        http.post(format!("{url}/v1/rings/cache/changes"))
            .header("Idempotency-Key", key)
            .json(&serde_json::json!({"ops": [{"op": "upsert", "node": {"id": node}}]}))
            .send()
    };
    let first: serde_json::Value = post(&a.url, "add-n1", "n1")
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(first["version"], 2, "{first}");
    let retry: serde_json::Value = post(&b.url, "add-n1", "n1")
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        (&retry["version"], &retry["replayed"]),
        (&serde_json::json!(2), &serde_json::json!(true)),
        "{retry}"
    );

    // Eight attempts of one keyed change, half through each instance.
    let attempts = (0..8).map(|i| {
        let url = if i % 2 == 0 { &a.url } else { &b.url };
        post(url, "add-n2", "n2")
    });
    let mut versions = Vec::new();
    let mut replays = 0;
    for r in futures::future::join_all(attempts).await {
        let r = r.unwrap();
        assert_eq!(r.status(), 200);
        let body: serde_json::Value = r.json().await.unwrap();
        versions.push(body["version"].as_u64().unwrap());
        replays += usize::from(body["replayed"] == true);
    }
    assert_eq!(versions, [3; 8], "one version for every attempt");
    assert_eq!(replays, 7);
    let history: serde_json::Value = http
        .get(format!("{}/v1/rings/cache/history", b.url))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let keys: Vec<&serde_json::Value> = history["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["idempotency_key"])
        .collect();
    assert_eq!(
        keys,
        [&serde_json::Value::Null, &"add-n1".into(), &"add-n2".into()]
    );
}
