//! Writers to one ring through several ringd instances on one etcd, with
//! no preconditions: every change is acknowledged (none answers 503 for
//! losing too many compare-and-swaps), and the history is gapless, holds
//! exactly the acknowledged changes and is the same on every instance.
#![cfg(feature = "server")]

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::api::TestApi;
use crate::support::etcd::Etcd;
use crate::support::ringd::{Ringd, Server};

/// Node ids each writer cycles through: the first pass adds them, later
/// passes re-weight them, so every upsert changes the ring.
const NODES_PER_WRITER: usize = 7;

/// One acknowledged change: `(version, fingerprint)`.
type Ack = (u64, String);

/// Upserts `changes` times through `api`, without an expected version and
/// without retrying: the first refusal fails the test with its answer.
async fn writer(api: TestApi, name: String, changes: usize) -> (Vec<Ack>, Vec<Duration>) {
    let mut acks = Vec::with_capacity(changes);
    let mut latencies = Vec::with_capacity(changes);
    for i in 0..changes {
        let node = format!("{name}-{}", i % NODES_PER_WRITER);
        let weight = i / NODES_PER_WRITER + 1;
        let sent = Instant::now();
        let r = api
            .put(
                &format!("/v1/rings/w/nodes/{node}"),
                json!({"address": "10.0.0.1:80", "weight": weight}),
            )
            .await;
        latencies.push(sent.elapsed());
        let status = r.status();
        let v: Value = r.json().await.unwrap();
        assert!(status.is_success(), "change {i} of {name}: {status}: {v}");
        assert_eq!(v["changed"], true, "{v}");
        let fingerprint = v["summary"]["fingerprint"].as_str().expect("fingerprint");
        acks.push((
            v["version"].as_u64().expect("version"),
            fingerprint.to_owned(),
        ));
    }
    (acks, latencies)
}

/// `(version, fingerprint)` of every history entry.
async fn history(api: &TestApi) -> Vec<(u64, String)> {
    let h = api.get_ok("/v1/rings/w/history").await;
    h["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| {
            let fingerprint = e["fingerprint"].as_str().unwrap().to_owned();
            (e["version"].as_u64().unwrap(), fingerprint)
        })
        .collect()
}

/// `writers` writers spread round-robin over `instances` instances, each
/// making `changes` changes; checks the outcome exactly.
async fn contend(instances: usize, writers: usize, changes: usize) {
    let etcd = Etcd::start().await;
    let store = etcd.store_url();
    let servers: Vec<Server> = (0..instances)
        .map(|_| {
            Ringd::on(&store)
                .prefix("/w")
                .args(&["--retention", "10000"])
                .start()
        })
        .collect();
    let created = servers[0]
        .put("/v1/rings/w", json!({"algorithm": "rendezvous"}))
        .await;
    assert!(created.status().is_success(), "{}", created.status());

    let tasks: Vec<_> = (0..writers)
        .map(|w| {
            let api = servers[w % instances].api().clone();
            tokio::spawn(writer(api, format!("w{w}"), changes))
        })
        .collect();
    let mut acks = Vec::new();
    let mut latencies = Vec::new();
    for t in tasks {
        let (a, l) = t.await.unwrap();
        acks.extend(a);
        latencies.extend(l);
    }
    assert_eq!(acks.len(), writers * changes);

    // Every instance serves the last version once its watch caught up.
    let last = acks.iter().map(|(v, _)| *v).max().expect("acks");
    assert_eq!(
        last,
        1 + (writers * changes) as u64,
        "versions beyond the acknowledged changes"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    for s in &servers {
        while s.api().state_of("w").await.0 < last {
            assert!(
                Instant::now() < deadline,
                "{} never reached {last}",
                s.api().base
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    let on_first = history(servers[0].api()).await;
    for s in &servers[1..] {
        assert_eq!(
            history(s.api()).await,
            on_first,
            "instances disagree on the history"
        );
    }
    let versions: Vec<u64> = on_first.iter().map(|(v, _)| *v).collect();
    assert_eq!(
        versions,
        (1..=last).collect::<Vec<_>>(),
        "the history has gaps"
    );
    // Each acknowledged change has a version of its own, with its fingerprint.
    let by_version: BTreeMap<u64, &str> = on_first.iter().map(|(v, f)| (*v, f.as_str())).collect();
    let distinct: BTreeSet<u64> = acks.iter().map(|(v, _)| *v).collect();
    assert_eq!(
        distinct.len(),
        acks.len(),
        "two changes acknowledged with one version"
    );
    assert_eq!(distinct, (2..=last).collect(), "acknowledged versions");
    for (version, fingerprint) in &acks {
        assert_eq!(
            by_version[version],
            fingerprint.as_str(),
            "version {version}"
        );
    }

    latencies.sort();
    let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q) as usize];
    eprintln!(
        "{writers} writers through {instances} instances: {} changes, p50 {:?}, p99 {:?}, max {:?}",
        acks.len(),
        at(0.5),
        at(0.99),
        latencies.last().expect("latencies")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_writers_through_two_instances_all_succeed() {
    contend(2, 8, 70).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixteen_writers_through_three_instances_all_succeed() {
    contend(3, 16, 20).await;
}
