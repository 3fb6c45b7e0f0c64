//! `ringd serve --store etcd://…` end to end: two instances on one etcd
//! serve the same rings.
#![cfg(feature = "server")]

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::support::api::{expect_json, TestApi};
use crate::support::etcd_pair::EtcdPair;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_share_one_etcd() {
    let pair = EtcdPair::start("/it").await;
    let (a, b) = (&pair.a, &pair.b);
    let created = a.put("/v1/rings/cache", json!({"algorithm": "ring"})).await;
    expect_json(created, StatusCode::CREATED).await;
    // B reads version 1 first, so it holds the ring in memory: seeing
    // version 2 below then needs its etcd watch, not a cold read.
    let first = b.get_ok("/v1/rings/cache/snapshot").await;
    assert_eq!(first["version"], 1, "{first}");
    let node = a
        .put("/v1/rings/cache/nodes/n1", json!({"address": "10.0.0.1:1"}))
        .await;
    expect_json(node, StatusCode::CREATED).await;
    // B follows etcd through a watch: it serves version 2 soon after A
    // acknowledged it, not necessarily at once.
    let deadline = Instant::now() + Duration::from_secs(5);
    let snapshot = loop {
        let s = b.get_ok("/v1/rings/cache/snapshot").await;
        if s["version"] == 2 || Instant::now() > deadline {
            break s;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(snapshot["version"], 2, "{snapshot}");
    assert_eq!(snapshot["nodes"][0]["id"], "n1", "{snapshot}");
}

/// Posts the keyed change that registers `node` through `api`.
async fn keyed_upsert(api: &TestApi, key: &str, node: &str) -> reqwest::Response {
    api.req(reqwest::Method::POST, "/v1/rings/cache/changes")
        .header("Idempotency-Key", key)
        .json(&json!({"ops": [{"op": "upsert", "node": {"id": node}}]}))
        .send()
        .await
        .expect("POST changes")
}

/// A change retried through another instance, after its first attempt's
/// response was lost, is answered with the version the first committed;
/// attempts racing through both instances commit it once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keyed_retry_on_another_instance_is_not_applied_twice() {
    let pair = EtcdPair::start("/idem").await;
    let (a, b) = (&pair.a, &pair.b);
    let created = a.put("/v1/rings/cache", json!({})).await;
    assert_eq!(created.status(), 201);
    let first = expect_json(keyed_upsert(a, "add-n1", "n1").await, StatusCode::OK).await;
    assert_eq!(first["version"], 2, "{first}");
    let retry = expect_json(keyed_upsert(b, "add-n1", "n1").await, StatusCode::OK).await;
    assert_eq!(
        (&retry["version"], &retry["replayed"]),
        (&json!(2), &json!(true)),
        "{retry}"
    );

    // Eight attempts of one keyed change, half through each instance.
    let attempts = (0..8).map(|i| {
        let api = if i % 2 == 0 { a.api() } else { b.api() };
        keyed_upsert(api, "add-n2", "n2")
    });
    let mut versions = Vec::new();
    let mut replays = 0;
    for r in futures::future::join_all(attempts).await {
        assert_eq!(r.status(), 200);
        let body: Value = r.json().await.unwrap();
        versions.push(body["version"].as_u64().unwrap());
        replays += usize::from(body["replayed"] == true);
    }
    assert_eq!(versions, [3; 8], "one version for every attempt");
    assert_eq!(replays, 7);
    let history = b.get_ok("/v1/rings/cache/history").await;
    let keys: Vec<&Value> = history["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["idempotency_key"])
        .collect();
    assert_eq!(keys, [&Value::Null, &"add-n1".into(), &"add-n2".into()]);
}
