//! A three-member etcd cluster under a running ringd that knows all three
//! endpoints: SIGKILL the leader while one task writes and another reads.
//! Writes resume within 10 s of the kill, every acknowledged change is in
//! the history and the snapshot afterwards, and every read answers 200
//! throughout.
#![cfg(feature = "server")]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::etcd_cluster::traffic::{
    reader, summarize, writer, Attempt, READ_TIMEOUT, RING,
};
use crate::support::etcd_cluster::EtcdCluster;
use crate::support::ringd::Ringd;
use reqwest::{Client, StatusCode};
use serde_json::{json, Value};

/// Nodes registered before the writers start.
const SEEDS: [&str; 3] = ["seed-1", "seed-2", "seed-3"];
/// Acknowledged writes to see before the kill, so the kill lands on a
/// cluster that is demonstrably serving writes.
const ACKS_BEFORE_KILL: usize = 20;
/// How long the loops keep running after the kill.
const AFTER_KILL: Duration = Duration::from_secs(15);
/// The promise under test: writes resume within this long after the kill.
const RECOVERY_LIMIT: Duration = Duration::from_secs(10);
/// Writer tasks, each sequential. A request caught by the kill on its way
/// to the dead leader holds its writer (and, through the instance's
/// per-ring turn, the other one) back until ringd gives up on it, as it
/// would for a real client, and that counts against the 10 s.
const WRITERS: usize = 2;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_the_etcd_leader_loses_no_change_and_no_read() {
    let mut cluster = EtcdCluster::start().await;
    // Retention above the number of versions, so the whole history is kept
    // and every acknowledged version can be checked.
    let mut ringd = Ringd::on(&cluster.store_url())
        .prefix("/cluster")
        .args(&["--retention", "100000"])
        .start();
    let base = ringd.url.clone();
    let api = ringd.api().clone();
    api.wait_ready(Duration::from_secs(10)).await;

    let created = api
        .put(&format!("/v1/rings/{RING}"), json!({"algorithm": "ring"}))
        .await;
    assert!(created.status().is_success(), "{}", created.status());
    for (i, id) in SEEDS.iter().enumerate() {
        let r = api
            .put(
                &format!("/v1/rings/{RING}/nodes/{id}"),
                json!({"address": format!("10.9.9.{}:7000", i + 1)}),
            )
            .await;
        // A node that did not exist before: 201.
        assert_eq!(r.status(), StatusCode::CREATED);
        let v: Value = r.json().await.unwrap();
        assert_eq!(v["version"], i as u64 + 2, "{v}");
    }

    let stop = Arc::new(AtomicBool::new(false));
    // Separate clients, so neither loop waits on the other's connections.
    let reads = tokio::spawn(reader(
        Client::builder().timeout(READ_TIMEOUT).build().unwrap(),
        base.clone(),
        stop.clone(),
    ));
    // The writers count their acknowledgements, so the kill can wait for
    // some without stopping them.
    let acks = Arc::new(AtomicUsize::new(0));
    let writes: Vec<_> = (0..WRITERS)
        .map(|w| {
            tokio::spawn(writer(
                w,
                Client::builder()
                    .timeout(Duration::from_secs(30))
                    .build()
                    .unwrap(),
                base.clone(),
                stop.clone(),
                acks.clone(),
            ))
        })
        .collect();

    let waiting = Instant::now();
    while acks.load(Ordering::Relaxed) < ACKS_BEFORE_KILL {
        assert!(
            waiting.elapsed() < Duration::from_secs(20),
            "fewer than {ACKS_BEFORE_KILL} writes acknowledged before the kill"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let leader = cluster.leader().await;
    let killed_at = Instant::now();
    cluster.kill(leader);
    tokio::time::sleep(AFTER_KILL).await;
    stop.store(true, Ordering::Relaxed);
    let mut attempts = Vec::new();
    for w in writes {
        attempts.extend(w.await.unwrap());
    }
    let reads = reads.await.unwrap();
    assert!(ringd.is_running(), "ringd exited");

    // Writes resumed within the limit: the earliest acknowledgement of a
    // request sent after the kill, measured from the kill.
    let resumed = attempts
        .iter()
        .filter(|a| a.sent >= killed_at && a.outcome.is_ok())
        .min_by_key(|a| a.done)
        .unwrap_or_else(|| panic!("no write succeeded after the kill:\n{}", cluster.logs()));
    let gap = resumed.done - killed_at;
    let failed: Vec<&Attempt> = attempts.iter().filter(|a| a.outcome.is_err()).collect();
    let failed_after_resume: Vec<&Attempt> = failed
        .iter()
        .copied()
        .filter(|a| a.sent > resumed.done)
        .collect();
    let acked_after_resume = attempts
        .iter()
        .filter(|a| a.sent > resumed.done && a.outcome.is_ok())
        .count();
    eprintln!(
        "killed member {leader}; writes resumed {:.2} s after the kill; {} writes acknowledged, {} failed ({} after resuming), slowest {:?}; {} reads, {} marked stale, slowest {:?}",
        gap.as_secs_f64(),
        attempts.len() - failed.len(),
        failed.len(),
        failed_after_resume.len(),
        attempts.iter().map(|a| a.done - a.sent).max().unwrap_or_default(),
        reads.total,
        reads.stale,
        reads.slowest,
    );
    eprintln!(
        "failed writes:\n{}",
        summarize(
            failed
                .iter()
                .map(|a| (a.sent, a.outcome.as_ref().unwrap_err().as_str())),
            killed_at
        )
    );
    assert!(
        gap <= RECOVERY_LIMIT,
        "writes resumed only {gap:?} after the kill"
    );
    // Once the new leader serves, writes keep succeeding: ringd no longer
    // sends anything to the dead member.
    assert!(
        failed_after_resume.is_empty(),
        "{} writes failed after writes had resumed:\n{}",
        failed_after_resume.len(),
        summarize(
            failed_after_resume
                .iter()
                .map(|a| (a.sent, a.outcome.as_ref().unwrap_err().as_str())),
            killed_at
        )
    );
    assert!(
        acked_after_resume >= 20,
        "only {acked_after_resume} writes acknowledged after resuming"
    );

    // Reads never stopped.
    assert!(
        reads.failures.is_empty(),
        "{} of {} reads failed:\n{}",
        reads.failures.len(),
        reads.total,
        summarize(
            reads.failures.iter().map(|(t, e)| (*t, e.as_str())),
            killed_at
        )
    );
    assert!(reads.total >= 500, "only {} reads", reads.total);
    assert!(
        reads.versions.windows(2).all(|w| w[0] <= w[1]),
        "a read went back to an older version"
    );

    // Every acknowledged change is in etcd, with its exact contents.
    api.wait_ready(Duration::from_secs(10)).await;
    let acked: Vec<(u64, &Attempt)> = attempts
        .iter()
        .filter_map(|a| a.outcome.as_ref().ok().map(|v| (*v, a)))
        .collect();
    for w in 0..WRITERS {
        // Each writer waits for one answer before sending the next request.
        let versions: Vec<u64> = acked
            .iter()
            .filter(|(_, a)| a.writer == w)
            .map(|(v, _)| *v)
            .collect();
        assert!(
            versions.windows(2).all(|p| p[0] < p[1]),
            "writer {w}'s acknowledged versions are not increasing: {versions:?}"
        );
    }
    let distinct: BTreeSet<u64> = acked.iter().map(|(v, _)| *v).collect();
    assert_eq!(
        distinct.len(),
        acked.len(),
        "two writes acknowledged one version"
    );
    let history = api.get_ok(&format!("/v1/rings/{RING}/history")).await;
    let entries = history["entries"].as_array().expect("entries");
    let numbers: Vec<u64> = entries
        .iter()
        .map(|e| e["version"].as_u64().unwrap())
        .collect();
    let latest = numbers.len() as u64;
    assert_eq!(
        numbers,
        (1..=latest).collect::<Vec<_>>(),
        "history has gaps"
    );
    let by_version: BTreeMap<u64, &Value> = entries
        .iter()
        .map(|e| (e["version"].as_u64().unwrap(), e))
        .collect();
    for (v, a) in &acked {
        let ops = by_version
            .get(v)
            .unwrap_or_else(|| panic!("acknowledged version {v} missing"))["ops"]
            .as_array()
            .expect("ops");
        assert_eq!(ops.len(), 1, "version {v}: {ops:?}");
        assert_eq!(ops[0]["op"], "upsert", "version {v}");
        assert_eq!(ops[0]["node"]["id"], a.node.as_str(), "version {v}");
        assert_eq!(ops[0]["node"]["address"], a.address.as_str(), "version {v}");
        assert_eq!(ops[0]["node"]["weight"], 1, "version {v}");
    }
    // Every version after the seeds is one of the writers' attempts, each
    // at most once: acknowledged, or failed to the client after etcd had
    // applied it.
    let attempted: BTreeMap<&str, &Attempt> =
        attempts.iter().map(|a| (a.node.as_str(), a)).collect();
    let mut committed = BTreeSet::new();
    for e in &entries[1 + SEEDS.len()..] {
        let node = &e["ops"][0]["node"];
        let id = node["id"].as_str().expect("node id");
        let a = attempted
            .get(id)
            .unwrap_or_else(|| panic!("version {} changed unknown node {id}", e["version"]));
        assert_eq!(node["address"], a.address.as_str());
        assert!(committed.insert(id), "node {id} added twice");
    }

    let snapshot = api.get_ok(&format!("/v1/rings/{RING}/snapshot")).await;
    assert_eq!(
        snapshot["version"], latest,
        "snapshot is not the latest version"
    );
    let nodes: BTreeMap<&str, &str> = snapshot["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .map(|n| (n["id"].as_str().unwrap(), n["address"].as_str().unwrap()))
        .collect();
    for (_, a) in &acked {
        assert_eq!(
            nodes.get(a.node.as_str()).copied(),
            Some(a.address.as_str()),
            "acknowledged node {} missing from the snapshot",
            a.node
        );
    }
    let expected: BTreeSet<&str> = SEEDS.iter().copied().chain(committed).collect();
    assert_eq!(
        nodes.keys().copied().collect::<BTreeSet<_>>(),
        expected,
        "the snapshot's nodes are not the seeds plus the committed writes"
    );
    // The instance serves the latest version from memory too.
    let lookup = api.get_ok(&format!("/v1/rings/{RING}/lookup?key=k")).await;
    assert_eq!(lookup["version"], latest);
    eprintln!(
        "history: {latest} versions, {} acknowledged writes, {} unacknowledged that etcd applied anyway",
        acked.len(),
        latest as usize - 1 - SEEDS.len() - acked.len()
    );
}
