//! Two ringd instances on one etcd with concurrent writers through both:
//! one gapless history, identical on both, holding every acknowledged
//! change, and never two fingerprints for one version.
#![cfg(feature = "server")]


use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::support::etcd::Etcd;
use crate::support::etcd_ringd::Ringd;
use serde_json::{json, Value};

/// Writer tasks per instance.
const TASKS: usize = 4;
/// Changes each task gets acknowledged.
const CHANGES_PER_TASK: usize = 64;
/// Node ids each task cycles through: the first pass adds them, later
/// passes re-weight them.
const NODES_PER_TASK: usize = 8;

/// One acknowledged change: `(version, fingerprint, changed)`.
type Ack = (u64, String, bool);

/// Upserts this task's nodes without an expected version, so the service
/// retries on conflicts; a 503 (other writers kept winning) is retried
/// here. Returns every acknowledged response.
async fn writer(http: reqwest::Client, base: String, task: String) -> Vec<Ack> {
    let mut acks = Vec::with_capacity(CHANGES_PER_TASK);
    for i in 0..CHANGES_PER_TASK {
        let node = format!("{task}-{}", i % NODES_PER_TASK);
        // Weight 1 on the first pass, 2 on the second…: every upsert changes
        // the ring, so none is a no-op.
        let weight = i / NODES_PER_TASK + 1;
        let body = json!({"address": "10.0.0.1:80", "weight": weight});
        let url = format!("{base}/v1/rings/w/nodes/{node}");
        loop {
            let r = http.put(&url).json(&body).send().await.unwrap();
            let status = r.status();
            let v: Value = r.json().await.unwrap();
            if status == reqwest::StatusCode::SERVICE_UNAVAILABLE {
                tokio::time::sleep(Duration::from_millis(5)).await;
                continue;
            }
            assert!(status.is_success(), "{status}: {v}");
            let version = v["version"].as_u64().expect("version");
            let fingerprint = v["summary"]["fingerprint"]
                .as_str()
                .expect("fingerprint")
                .to_owned();
            acks.push((version, fingerprint, v["changed"] == true));
            break;
        }
    }
    acks
}

/// `(version, fingerprint)` of every history entry.
async fn history(http: &reqwest::Client, base: &str) -> Vec<(u64, String)> {
    let h: Value = http
        .get(format!("{base}/v1/rings/w/history"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    h["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| {
            (
                e["version"].as_u64().unwrap(),
                e["fingerprint"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

async fn latest_version(http: &reqwest::Client, base: &str) -> u64 {
    let s: Value = http
        .get(format!("{base}/v1/rings/w"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    s["version"].as_u64().expect("version")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writers_through_two_instances_share_one_history() {
    let etcd = Etcd::start().await;
    let store = format!("etcd://{}", etcd.endpoint.trim_start_matches("http://"));
    // Retention above the number of versions, so the whole history is kept.
    let a = Ringd::start_with(&store, "/w", &["--retention", "10000"]);
    let b = Ringd::start_with(&store, "/w", &["--retention", "10000"]);
    let http = reqwest::Client::new();
    let created = http
        .put(format!("{}/v1/rings/w", a.url))
        .json(&json!({"algorithm": "rendezvous"}))
        .send()
        .await
        .unwrap();
    assert!(created.status().is_success(), "{}", created.status());

    let started = Instant::now();
    let mut writers = Vec::new();
    for (name, base) in [("a", &a.url), ("b", &b.url)] {
        for t in 0..TASKS {
            writers.push(tokio::spawn(writer(
                http.clone(),
                base.clone(),
                format!("{name}{t}"),
            )));
        }
    }
    let mut acks = Vec::new();
    for w in writers {
        acks.extend(w.await.unwrap());
    }
    let elapsed = started.elapsed();
    assert!(acks.len() >= 500, "{} changes", acks.len());

    // Both instances serve the last acknowledged version once their
    // watches have caught up with the writes made through the other one.
    let last = acks.iter().map(|(v, _, _)| *v).max().expect("acks");
    let deadline = Instant::now() + Duration::from_secs(10);
    for base in [&a.url, &b.url] {
        while latest_version(&http, base).await < last {
            assert!(
                Instant::now() < deadline,
                "{base} never reached version {last}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    let on_a = history(&http, &a.url).await;
    let on_b = history(&http, &b.url).await;
    assert_eq!(on_a, on_b, "the two instances disagree on the history");
    let versions: Vec<u64> = on_a.iter().map(|(v, _)| *v).collect();
    let n = versions.len() as u64;
    assert_eq!(versions, (1..=n).collect::<Vec<_>>(), "history has gaps");
    assert_eq!(n, last);
    let by_version: BTreeMap<u64, &str> = on_a.iter().map(|(v, f)| (*v, f.as_str())).collect();

    // Every acknowledged change is in the history with its fingerprint,
    // and no version was acknowledged twice with different fingerprints.
    let mut acked: BTreeMap<u64, &str> = BTreeMap::new();
    for (version, fingerprint, _) in &acks {
        assert_eq!(
            by_version.get(version).copied(),
            Some(fingerprint.as_str()),
            "acknowledged version {version} is missing or differs"
        );
        let seen = acked.entry(*version).or_insert(fingerprint);
        assert_eq!(*seen, fingerprint, "version {version} has two fingerprints");
    }
    // Version 1 is the creation; every other version is exactly one
    // acknowledged change.
    let changed = acks.iter().filter(|(_, _, c)| *c).count() as u64;
    assert_eq!(n - 1, changed, "versions beyond 1 vs acknowledged changes");
    let distinct = acks.iter().filter(|(_, _, c)| *c).map(|(v, _, _)| *v);
    assert_eq!(
        distinct.collect::<std::collections::BTreeSet<_>>().len() as u64,
        changed,
        "two acknowledged changes share a version"
    );
    eprintln!(
        "{} changes through two instances in {elapsed:?}",
        acks.len()
    );
}
