//! Two ringd instances on a three-member etcd, with four writers (two per
//! instance, each retrying a change with its `Idempotency-Key` until it is
//! acknowledged) and a reader per instance, through three faults in turn:
//! the etcd leader killed, the etcd leader frozen for 5 s (SIGSTOP), and a
//! ringd instance killed and started again. Afterwards: every change is in
//! the history exactly once, the history is gapless and the same on both
//! instances, every instance's reads never went back, no answer more than
//! 1 s behind an acknowledged change lacked `Ringd-Stale`, and writes
//! resumed on both instances (the time they took is printed).
#![cfg(feature = "server")]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::etcd_cluster::EtcdCluster;
use crate::support::ringd::{Ringd, Server};

const RING: &str = "f";
/// Writers per instance.
const WRITERS_PER_INSTANCE: usize = 2;
/// Pause between one writer's changes.
const WRITE_PAUSE: Duration = Duration::from_millis(20);
/// Pause between one reader's reads.
const READ_PAUSE: Duration = Duration::from_millis(20);
/// How long a frozen leader stays frozen.
const FREEZE: Duration = Duration::from_secs(5);
/// Writes must resume after a killed or frozen etcd leader: a liveness
/// bound, not the speed target. How soon they resume (the aim is 3 s from
/// the fault, or 2 s after etcd has a new leader) is measured and printed
/// by this test and recorded in docs/benchmarks.md; speed is measured, not
/// asserted in a timed test.
const ETCD_FAULT_GAP: Duration = Duration::from_secs(20);
/// The same for the surviving instance when the other is killed: a
/// writers' turn held by the dead instance is freed when its session lease
/// (2 s) expires; runs have seen 1.9 s.
const RINGD_KILL_GAP: Duration = Duration::from_secs(10);
/// An answer further behind an acknowledged change than this must be
/// marked stale.
const STALE_BOUND: Duration = Duration::from_secs(1);

/// One acknowledged change.
struct Ack {
    key: String,
    version: u64,
    instance: usize,
    done: Instant,
}

/// One answered read.
struct Read {
    sent: Instant,
    version: u64,
    stale: bool,
}

/// What the traffic recorded, shared by its tasks.
#[derive(Default)]
struct Record {
    acks: Mutex<Vec<Ack>>,
    /// Per instance.
    reads: [Mutex<Vec<Read>>; 2],
}

async fn writer(
    w: usize,
    instance: usize,
    base: String,
    http: reqwest::Client,
    stop: Arc<AtomicBool>,
    record: Arc<Record>,
) {
    let mut i = 0;
    while !stop.load(Ordering::Relaxed) {
        let key = format!("w{w}-{i}");
        let ops = json!({"ops": [{"op": "upsert", "node": {"id": key, "address": format!("10.0.{w}.{}:80", i % 250)}}]});
        let first = Instant::now();
        loop {
            let sent = http
                .post(format!("{base}/v1/rings/{RING}/changes"))
                .header("Idempotency-Key", &key)
                .json(&ops)
                .send()
                .await;
            if let Ok(r) = sent {
                let status = r.status();
                let v: Value = r.json().await.unwrap_or(Value::Null);
                if status.is_success() {
                    assert_eq!(v["changed"], true, "{key}: {v}");
                    let version = v["version"].as_u64().expect("version");
                    record.acks.lock().unwrap().push(Ack {
                        key,
                        version,
                        instance,
                        done: Instant::now(),
                    });
                    break;
                }
                // Only unavailability is worth retrying; anything else is a bug.
                assert_eq!(
                    status,
                    reqwest::StatusCode::SERVICE_UNAVAILABLE,
                    "{key}: {v}"
                );
            }
            assert!(
                first.elapsed() < Duration::from_secs(30),
                "{key} never acknowledged"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        i += 1;
        tokio::time::sleep(WRITE_PAUSE).await;
    }
}

async fn reader(
    instance: usize,
    base: String,
    http: reqwest::Client,
    stop: Arc<AtomicBool>,
    record: Arc<Record>,
) {
    while !stop.load(Ordering::Relaxed) {
        let sent = Instant::now();
        if let Ok(r) = http.get(format!("{base}/v1/rings/{RING}")).send().await {
            if r.status().is_success() {
                let stale = r.headers().get("ringd-stale").is_some_and(|v| v == "true");
                let v: Value = r.json().await.expect("ring body");
                let version = v["version"].as_u64().expect("version");
                record.reads[instance].lock().unwrap().push(Read {
                    sent,
                    version,
                    stale,
                });
            }
        }
        tokio::time::sleep(READ_PAUSE).await;
    }
}

/// The longest time between consecutive acknowledgements through
/// `instance` that spans `at` or starts within `window` after it, as the
/// acknowledgements before and after it; `None` if there is none.
fn longest_gap(
    acks: &[Ack],
    instance: usize,
    at: Instant,
    window: Duration,
) -> Option<(Instant, Instant)> {
    let mut done: Vec<Instant> = acks
        .iter()
        .filter(|a| a.instance == instance)
        .map(|a| a.done)
        .collect();
    done.sort();
    done.windows(2)
        .filter(|p| p[1] > at && p[0] < at + window)
        .max_by_key(|p| p[1] - p[0])
        .map(|p| (p[0], p[1]))
}

/// How long the longest gap around `at` lasted (the whole window if
/// writes never resumed in it).
fn gap(acks: &[Ack], instance: usize, at: Instant, window: Duration) -> Duration {
    longest_gap(acks, instance, at, window).map_or(window, |(from, to)| to - from)
}

/// When writes through `instance` resumed after `at`: the end of the
/// longest gap.
fn resumed(acks: &[Ack], instance: usize, at: Instant, window: Duration) -> Instant {
    longest_gap(acks, instance, at, window).map_or(at + window, |(_, to)| to)
}

/// `(version, fingerprint, idempotency key)` of every history entry.
async fn history(http: &reqwest::Client, base: &str) -> Vec<(u64, String, String)> {
    let h: Value = http
        .get(format!("{base}/v1/rings/{RING}/history"))
        .send()
        .await
        .expect("history")
        .json()
        .await
        .expect("history body");
    h["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| {
            (
                e["version"].as_u64().unwrap(),
                e["fingerprint"].as_str().unwrap().to_owned(),
                e["idempotency_key"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

fn start(store: &str, listen: Option<&str>) -> Server {
    let mut args = vec!["--retention", "100000"];
    if let Some(l) = listen {
        args.extend(["--listen", l]);
    }
    Ringd::on(store).prefix("/faults").args(&args).start()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_survive_etcd_and_ringd_faults() {
    let mut etcd = EtcdCluster::start().await;
    let store = etcd.store_url();
    let a = start(&store, None);
    let mut b = start(&store, None);
    let bases = [a.url.clone(), b.url.clone()];
    let created = a.put(&format!("/v1/rings/{RING}"), json!({})).await;
    assert!(created.status().is_success(), "{}", created.status());

    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let record = Arc::new(Record::default());
    let mut tasks = Vec::new();
    for (instance, base) in bases.iter().enumerate() {
        for k in 0..WRITERS_PER_INSTANCE {
            let w = instance * WRITERS_PER_INSTANCE + k;
            let (base, http, stop, record) =
                (base.clone(), http.clone(), stop.clone(), record.clone());
            tasks.push(tokio::spawn(writer(w, instance, base, http, stop, record)));
        }
        let (base, http, stop, record) = (base.clone(), http.clone(), stop.clone(), record.clone());
        tasks.push(tokio::spawn(reader(instance, base, http, stop, record)));
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;

    // The etcd leader killed, and back after 3 s.
    let leader = etcd.leader().await;
    let killed = Instant::now();
    etcd.kill(leader);
    let elected_after_kill = etcd.elected_without(leader).await;
    tokio::time::sleep(Duration::from_secs(3).saturating_sub(killed.elapsed())).await;
    etcd.restart(leader).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;

    // The etcd leader frozen for 5 s.
    let leader = etcd.leader().await;
    let frozen = Instant::now();
    etcd.freeze(leader);
    let elected_after_freeze = etcd.elected_without(leader).await;
    tokio::time::sleep(FREEZE.saturating_sub(frozen.elapsed())).await;
    etcd.thaw(leader);
    etcd.leader().await;
    tokio::time::sleep(Duration::from_millis(1500)).await;

    // ringd instance B killed and started again on the same address.
    let listen = b.url.trim_start_matches("http://").to_owned();
    let restarted = Instant::now();
    b.kill();
    // Starting waits for the process's URL: off the runtime's threads.
    let b = tokio::task::block_in_place(|| start(&store, Some(&listen)));
    tokio::time::sleep(Duration::from_millis(2000)).await;

    stop.store(true, Ordering::Relaxed);
    for t in tasks {
        t.await.unwrap();
    }
    let acks = std::mem::take(&mut *record.acks.lock().unwrap());

    // Every change acknowledged once, each with a version of its own, and
    // the history exactly those changes after the creation, on both.
    let last = acks.iter().map(|a| a.version).max().expect("acks");
    assert_eq!(
        last,
        acks.len() as u64 + 1,
        "versions vs acknowledged changes"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    for s in [&a, &b] {
        while s.api().state_of(RING).await.0 < last {
            assert!(Instant::now() < deadline, "{} never reached {last}", s.url);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    let on_a = history(&http, &a.url).await;
    assert_eq!(
        history(&http, &b.url).await,
        on_a,
        "the instances' histories differ"
    );
    let versions: Vec<u64> = on_a.iter().map(|e| e.0).collect();
    assert_eq!(
        versions,
        (1..=last).collect::<Vec<_>>(),
        "the history has gaps"
    );
    let by_key: BTreeMap<&str, u64> = on_a[1..].iter().map(|e| (e.2.as_str(), e.0)).collect();
    assert_eq!(
        by_key.len(),
        acks.len(),
        "a change is in the history twice, or without its key"
    );
    for ack in &acks {
        assert_eq!(
            by_key.get(ack.key.as_str()),
            Some(&ack.version),
            "{}",
            ack.key
        );
    }

    // Reads never went back, and any answer behind a change acknowledged
    // more than STALE_BOUND before it was asked for said so.
    let mut acked: Vec<(Instant, u64)> = acks.iter().map(|a| (a.done, a.version)).collect();
    acked.sort();
    for (instance, reads) in record.reads.iter().enumerate() {
        let reads = reads.lock().unwrap();
        assert!(
            reads.len() > 100,
            "instance {instance}: {} reads",
            reads.len()
        );
        for pair in reads.windows(2) {
            assert!(
                pair[1].version >= pair[0].version,
                "instance {instance} went back"
            );
        }
        let mut unmarked = Vec::new();
        for r in reads.iter() {
            let due = acked
                .iter()
                .take_while(|(done, _)| *done + STALE_BOUND <= r.sent)
                .map(|(_, v)| *v)
                .max()
                .unwrap_or(0);
            if r.version < due && !r.stale {
                unmarked.push((r.version, due, r.sent - killed));
            }
        }
        assert!(
            unmarked.is_empty(),
            "instance {instance}: answers behind unmarked (version, due, at): {unmarked:?}"
        );
    }

    let gaps = |at: Instant| [0, 1].map(|i| gap(&acks, i, at, Duration::from_secs(4)));
    let (kill_gaps, freeze_gaps, ringd_gaps) = (gaps(killed), gaps(frozen), gaps(restarted));
    let after = |at: Instant, elected: Instant| {
        [0, 1].map(|i| {
            let resumed = resumed(&acks, i, at, Duration::from_secs(4));
            (
                resumed.saturating_duration_since(at),
                resumed.saturating_duration_since(elected),
            )
        })
    };
    eprintln!(
        "{} changes; per instance (A, B): etcd leader killed: write gap {kill_gaps:?}, \
         resumed (after the fault, after etcd's new leader) {:?}, new leader after {:?}; \
         etcd leader frozen: write gap {freeze_gaps:?}, resumed {:?}, new leader after {:?}; \
         ringd B killed: write gap {ringd_gaps:?}",
        acks.len(),
        after(killed, elected_after_kill),
        elected_after_kill - killed,
        after(frozen, elected_after_freeze),
        elected_after_freeze - frozen,
    );
    for g in kill_gaps.iter().chain(&freeze_gaps) {
        assert!(
            *g <= ETCD_FAULT_GAP,
            "writes stalled {g:?}: {kill_gaps:?} {freeze_gaps:?}"
        );
    }
    assert!(
        ringd_gaps[0] <= RINGD_KILL_GAP,
        "A stalled {:?} when B died",
        ringd_gaps[0]
    );
}
