//! Traffic for the leader-kill test: sequential writers that each upsert
//! a new node per request and record every attempt, and a reader that looks
//! a key up every few milliseconds.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::{Client, StatusCode};
use serde_json::{json, Value};

pub(crate) const RING: &str = "c";
/// Pause between one writer's writes; keeps the ring (one new node per write) small
/// enough that placement work never dominates the timings.
pub(crate) const WRITE_PAUSE: Duration = Duration::from_millis(10);
/// Pause between reads: far more often than any election lasts.
pub(crate) const READ_PAUSE: Duration = Duration::from_millis(5);
/// A read slower than this counts as a failed read: reads are served from
/// memory and must not wait on the election.
pub(crate) const READ_TIMEOUT: Duration = Duration::from_secs(2);

/// One write a writer sent: an upsert of a new node `w{writer}-n{i}`.
pub(crate) struct Attempt {
    pub writer: usize,
    pub node: String,
    pub address: String,
    pub sent: Instant,
    pub done: Instant,
    /// The version the change made, or why it failed.
    pub outcome: Result<u64, String>,
}

/// The address of writer `w`'s node `i`: unique per attempt, so the
/// history entry of every acknowledged version matches exactly one request.
pub(crate) fn address(w: usize, i: usize) -> String {
    format!("10.{w}.{}.{}:7000", i / 250, i % 250 + 1)
}

/// Upserts a new node per request until `stop`, recording every attempt
/// and counting acknowledged ones in `acks`.
/// A failure is not retried with the same node: the next attempt uses the
/// next id, so an unacknowledged change that etcd applied anyway still
/// names a node of its own.
pub(crate) async fn writer(
    w: usize,
    http: Client,
    base: String,
    stop: Arc<AtomicBool>,
    acks: Arc<AtomicUsize>,
) -> Vec<Attempt> {
    let mut attempts = Vec::new();
    let mut i = 0;
    while !stop.load(Ordering::Relaxed) {
        let node = format!("w{w}-n{i}");
        let address = address(w, i);
        let sent = Instant::now();
        let response = http
            .put(format!("{base}/v1/rings/{RING}/nodes/{node}"))
            .json(&json!({"address": address}))
            .send()
            .await;
        let outcome = match response {
            Err(e) => Err(format!("request error: {e}")),
            Ok(r) => {
                let status = r.status();
                let body: Value = r.json().await.unwrap_or(Value::Null);
                if status.is_success() {
                    // Every attempt names a new node.
                    assert_eq!(status, StatusCode::CREATED, "{body}");
                    assert_eq!(body["changed"], true, "{body}");
                    acks.fetch_add(1, Ordering::Relaxed);
                    Ok(body["version"].as_u64().expect("version"))
                } else {
                    Err(format!("{status}: {body}"))
                }
            }
        };
        attempts.push(Attempt {
            writer: w,
            node,
            address,
            sent,
            done: Instant::now(),
            outcome,
        });
        i += 1;
        tokio::time::sleep(WRITE_PAUSE).await;
    }
    attempts
}

/// What the reader saw.
#[derive(Default)]
pub(crate) struct Reads {
    pub total: usize,
    /// `(when, what)` of every read that did not answer 200.
    pub failures: Vec<(Instant, String)>,
    pub stale: usize,
    pub slowest: Duration,
    /// Versions served, in order; never decreasing.
    pub versions: Vec<u64>,
}

/// Looks a key up every few milliseconds until `stop`.
pub(crate) async fn reader(http: Client, base: String, stop: Arc<AtomicBool>) -> Reads {
    let mut reads = Reads::default();
    let url = format!("{base}/v1/rings/{RING}/lookup?key=k");
    while !stop.load(Ordering::Relaxed) {
        let started = Instant::now();
        let response = http.get(&url).send().await;
        reads.total += 1;
        match response {
            Err(e) => reads
                .failures
                .push((started, format!("request error: {e}"))),
            Ok(r) if r.status() != StatusCode::OK => {
                let status = r.status();
                let body = r.text().await.unwrap_or_default();
                reads.failures.push((started, format!("{status}: {body}")));
            }
            Ok(r) => {
                if r.headers().get("ringd-stale").is_some_and(|v| v == "true") {
                    reads.stale += 1;
                }
                match r.json::<Value>().await {
                    Ok(v) => reads.versions.push(v["version"].as_u64().expect("version")),
                    Err(e) => reads.failures.push((started, format!("body: {e}"))),
                }
            }
        }
        reads.slowest = reads.slowest.max(started.elapsed());
        tokio::time::sleep(READ_PAUSE).await;
    }
    reads
}

/// Failures grouped by message, each with its count and the first and last
/// time it happened, in seconds relative to `kill` (negative: before it).
pub(crate) fn summarize<'a>(
    failures: impl Iterator<Item = (Instant, &'a str)>,
    kill: Instant,
) -> String {
    let at = |t: Instant| {
        if t >= kill {
            (t - kill).as_secs_f64()
        } else {
            -(kill - t).as_secs_f64()
        }
    };
    let mut groups: BTreeMap<&str, (usize, f64, f64)> = BTreeMap::new();
    for (t, message) in failures {
        let g = groups.entry(message).or_insert((0, at(t), at(t)));
        g.0 += 1;
        g.2 = at(t);
    }
    groups
        .into_iter()
        .map(|(m, (n, first, last))| format!("  {n}x from {first:+.2} s to {last:+.2} s: {m}\n"))
        .collect()
}
