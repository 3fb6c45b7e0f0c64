//! `ringd serve --store etcd://…` end to end: two instances on one etcd
//! serve the same rings.
#![cfg(feature = "server")]

mod common_etcd;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common_etcd::Etcd;

/// A `ringd serve` on `store`; killed when dropped.
struct Ringd {
    child: Child,
    url: String,
}

impl Ringd {
    fn start(store: &str, prefix: &str) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ringd"))
            .args(["serve", "--listen", "127.0.0.1:0", "--store", store])
            .args(["--etcd-prefix", prefix])
            .env_remove("RINGD_STORE")
            .env_remove("RINGD_ADMIN_TOKEN")
            .env_remove("RINGD_READ_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn ringd");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("ringd prints its URL");
        let url = line
            .trim()
            .strip_prefix("ringd listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_owned();
        Ringd { child, url }
    }
}

impl Drop for Ringd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

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
