//! Two ringd instances on one etcd with concurrent writers through both:
//! one gapless history, identical on both, holding every acknowledged
//! change, and never two fingerprints for one version.
#![cfg(feature = "server")]

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::api::TestApi;
use crate::support::etcd_pair::EtcdPair;

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
async fn writer(api: TestApi, task: String) -> Vec<Ack> {
    let mut acks = Vec::with_capacity(CHANGES_PER_TASK);
    for i in 0..CHANGES_PER_TASK {
        let node = format!("{task}-{}", i % NODES_PER_TASK);
        // Weight 1 on the first pass, 2 on the second…: every upsert changes
        // the ring, so none is a no-op.
        let weight = i / NODES_PER_TASK + 1;
        let body = json!({"address": "10.0.0.1:80", "weight": weight});
        let path = format!("/v1/rings/w/nodes/{node}");
        loop {
            let r = api.put(&path, body.clone()).await;
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
async fn history(api: &TestApi) -> Vec<(u64, String)> {
    let h = api.get_ok("/v1/rings/w/history").await;
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

async fn latest_version(api: &TestApi) -> u64 {
    api.state_of("w").await.0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writers_through_two_instances_share_one_history() {
    // Retention above the number of versions, so the whole history is kept.
    let pair = EtcdPair::start_each("/w", |r, _| r.args(&["--retention", "10000"])).await;
    let (a, b) = (&pair.a, &pair.b);
    let created = a
        .put("/v1/rings/w", json!({"algorithm": "rendezvous"}))
        .await;
    assert!(created.status().is_success(), "{}", created.status());

    let started = Instant::now();
    let mut writers = Vec::new();
    for (name, api) in [("a", a.api()), ("b", b.api())] {
        for t in 0..TASKS {
            writers.push(tokio::spawn(writer(api.clone(), format!("{name}{t}"))));
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
    for api in [a.api(), b.api()] {
        while latest_version(api).await < last {
            assert!(
                Instant::now() < deadline,
                "{} never reached version {last}",
                api.base
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    let on_a = history(a.api()).await;
    let on_b = history(b.api()).await;
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
