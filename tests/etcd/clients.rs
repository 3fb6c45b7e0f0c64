//! Client acks with two ringd instances on one etcd: an ack sent through
//! one instance is listed, judged and counted by the other, expires on
//! time everywhere (and its etcd key goes with its lease), and goes with
//! its ring.
#![cfg(feature = "server")]

use std::time::{Duration, Instant};

use crate::support::etcd::Etcd;
use crate::support::ringd::Ringd;
use etcd_client::GetOptions;
use serde_json::{json, Value};

/// A fingerprint no placement has.
const WRONG: &str = "00000000000000000000000000000000000000000000000000000000000000ff";

struct Http(reqwest::Client);

impl Http {
    async fn send(&self, req: reqwest::RequestBuilder, status: u16) -> Value {
        let r = req.send().await.expect("request");
        let got = r.status().as_u16();
        let text = r.text().await.expect("body");
        assert_eq!(got, status, "{text}");
        serde_json::from_str(&text).unwrap_or(Value::Null)
    }

    async fn get(&self, url: &str) -> Value {
        self.send(self.0.get(url), 200).await
    }

    async fn ack(&self, base: &str, client: &str, version: u64, fp: &str) -> Value {
        let url = format!("{base}/v1/rings/r/clients/{client}/ack");
        let body = json!({"version": version, "fingerprint": fp});
        self.send(self.0.post(url).json(&body), 200).await
    }

    async fn clients(&self, base: &str) -> Value {
        self.get(&format!("{base}/v1/rings/r/clients")).await
    }
}

/// `(client_id, version, lag, matches, divergent)` of each listed client.
fn rows(list: &Value) -> Vec<(String, u64, u64, Value, bool)> {
    list["clients"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["client_id"].as_str().unwrap().to_owned(),
                c["version"].as_u64().unwrap(),
                c["lag"].as_u64().unwrap(),
                c["matches"].clone(),
                c["divergent"].as_bool().unwrap(),
            )
        })
        .collect()
}

/// Keys under `prefix` in etcd.
async fn keys(etcd: &Etcd, prefix: &str) -> Vec<String> {
    let resp = etcd
        .client()
        .await
        .get(
            prefix,
            Some(GetOptions::new().with_prefix().with_keys_only()),
        )
        .await
        .unwrap();
    resp.kvs()
        .iter()
        .map(|kv| kv.key_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ack_through_one_instance_is_seen_by_the_other() {
    let etcd = Etcd::start().await;
    let store = format!("etcd://{}", etcd.host_port);
    let a = Ringd::on(&store).prefix("/conv").start();
    let b = Ringd::on(&store).prefix("/conv").start();
    let http = Http(reqwest::Client::new());
    http.send(
        http.0.put(format!("{}/v1/rings/r", a.url)).json(&json!({})),
        201,
    )
    .await;
    // B holds version 1 in memory before A commits version 2.
    assert_eq!(http.clients(&b.url).await["version"], 1);
    let v2 = http
        .send(
            http.0
                .put(format!("{}/v1/rings/r/nodes/n1", a.url))
                .json(&json!({})),
            201,
        )
        .await;
    assert_eq!(v2["version"], 2);
    let summary = http.get(&format!("{}/v1/rings/r", a.url)).await;
    let fp2 = summary["fingerprint"].as_str().unwrap().to_owned();

    http.ack(&a.url, "web-1", 2, &fp2).await;
    // Through B at once, even if B's watch has not delivered version 2 yet:
    // B asks etcd before calling the version unknown.
    let wrong = http.ack(&b.url, "web-2", 2, WRONG).await;
    assert_eq!(
        (&wrong["version"], &wrong["client"]["divergent"]),
        (&json!(2), &json!(true))
    );

    for base in [&b.url, &a.url] {
        let list = http.clients(base).await;
        assert_eq!(
            (&list["version"], &list["fingerprint"]),
            (&json!(2), &json!(fp2))
        );
        assert_eq!(
            rows(&list),
            vec![
                ("web-1".to_owned(), 2, 0, json!(true), false),
                ("web-2".to_owned(), 2, 0, json!(false), true),
            ]
        );
        assert_eq!(
            list["summary"],
            json!({"clients": 2, "on_latest": 2, "on_latest_share": 1.0, "divergent": 1})
        );
        let text = http
            .0
            .get(format!("{base}/metrics"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        for line in [
            "ringd_clients{ring=\"r\"} 2\n",
            "ringd_clients_on_latest_ratio{ring=\"r\"} 1\n",
            "ringd_clients_divergent{ring=\"r\"} 1\n",
        ] {
            assert!(text.contains(line), "{line:?} missing from:\n{text}");
        }
    }
    assert_eq!(
        keys(&etcd, "/conv/acks/").await,
        ["/conv/acks/r/web-1", "/conv/acks/r/web-2"]
    );

    // Deleting the ring through A deletes its acks for everyone.
    http.send(http.0.delete(format!("{}/v1/rings/r", a.url)), 204)
        .await;
    assert_eq!(keys(&etcd, "/conv/acks/").await, Vec::<String>::new());
    let gone = http
        .send(
            http.0
                .post(format!("{}/v1/rings/r/clients/web-1/ack", b.url))
                .json(&json!({"version": 1, "fingerprint": fp2})),
            404,
        )
        .await;
    assert_eq!(gone["type"], "urn:ringd:problem:ring-not-found");
    http.send(
        http.0.put(format!("{}/v1/rings/r", b.url)).json(&json!({})),
        201,
    )
    .await;
    assert_eq!(http.clients(&a.url).await["clients"], json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acks_expire_on_every_instance_and_leave_etcd() {
    let etcd = Etcd::start().await;
    let store = format!("etcd://{}", etcd.host_port);
    // The shortest TTL the server accepts (etcd's own minimum lease TTL,
    // about 1.5 election timeouts, is below it).
    let ttl = ["--client-ttl", "10s"];
    let a = Ringd::on(&store).prefix("/ttl").args(&ttl).start();
    let b = Ringd::on(&store).prefix("/ttl").args(&ttl).start();
    let http = Http(reqwest::Client::new());
    let created = http
        .send(
            http.0.put(format!("{}/v1/rings/r", a.url)).json(&json!({})),
            201,
        )
        .await;
    let fp = created["fingerprint"].as_str().unwrap().to_owned();
    let acked = Instant::now();
    http.ack(&a.url, "web-1", 1, &fp).await;
    assert_eq!(http.clients(&b.url).await["summary"]["clients"], 1);
    let kv = etcd
        .client()
        .await
        .get("/ttl/acks/r/web-1", None)
        .await
        .unwrap();
    assert_ne!(kv.kvs()[0].lease(), 0, "the ack is on a lease");

    tokio::time::sleep(Duration::from_millis(10_200).saturating_sub(acked.elapsed())).await;
    // Listings hide it at `expires_at` exactly, whatever etcd still holds.
    for base in [&a.url, &b.url] {
        assert_eq!(http.clients(base).await["clients"], json!([]));
    }
    // etcd drops the key when the shared lease (TTL plus a 1 s window) ends.
    let deadline = Instant::now() + Duration::from_secs(15);
    while !keys(&etcd, "/ttl/acks/").await.is_empty() {
        assert!(Instant::now() < deadline, "the ack key outlived its lease");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
