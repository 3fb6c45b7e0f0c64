//! Writers to one ring through several ringd instances on one etcd, with
//! no preconditions: how many changes fail, and the change latency (p50,
//! p99, max), for 8 writers through 2 instances and 16 writers through 3.
//!
//! It starts its own single-member `etcd` (from `PATH`) and the
//! `target/release/ringd` instances (or `RINGD_BIN`, to measure another
//! build), so build the binary first:
//!
//! ```sh
//! cargo build --release && cargo run --release --example etcd_contention [changes]
//! ```
//!
//! Each scenario makes `changes` changes in all (default 560), each writer
//! sending its next change when the previous one was answered; a refused
//! change counts as a failure and is not retried. At the end it checks
//! that the history is gapless and holds exactly the acknowledged changes.

// The launchers the tests use; the tool uses none of the assertions.
#[allow(dead_code, reason = "a load tool uses only the launchers")]
#[path = "../../tests/support"]
mod support {
    pub(crate) mod api;
    pub(crate) mod client;
    pub(crate) mod etcd;
    pub(crate) mod ringd;
}

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::etcd::Etcd;
use support::ringd::Ringd;

/// Node ids each writer cycles through; re-weighting them on every pass
/// makes every upsert a change.
const NODES_PER_WRITER: usize = 7;

/// What one writer saw: latencies of acknowledged changes, their versions,
/// and the answers of refused ones.
#[derive(Default)]
struct Seen {
    latencies: Vec<Duration>,
    versions: Vec<u64>,
    failures: Vec<String>,
}

async fn writer(http: reqwest::Client, base: String, w: usize, changes: usize) -> Seen {
    let mut seen = Seen::default();
    for i in 0..changes {
        let node = format!("w{w}-{}", i % NODES_PER_WRITER);
        let body = json!({"address": "10.0.0.1:80", "weight": i / NODES_PER_WRITER + 1});
        let sent = Instant::now();
        let r = http
            .put(format!("{base}/v1/rings/bench/nodes/{node}"))
            .json(&body)
            .send()
            .await
            .expect("send");
        let elapsed = sent.elapsed();
        let status = r.status();
        let v: Value = r.json().await.unwrap_or(Value::Null);
        if status.is_success() {
            seen.latencies.push(elapsed);
            seen.versions.push(v["version"].as_u64().expect("version"));
        } else {
            seen.failures.push(format!("{status}: {}", v["detail"]));
        }
    }
    seen
}

async fn scenario(http: &reqwest::Client, instances: usize, writers: usize, total: usize) {
    let etcd = Etcd::start().await;
    let store = format!("etcd://{}", etcd.host_port);
    let servers: Vec<_> = (0..instances)
        .map(|_| Ringd::on(&store).args(&["--retention", "100000"]).start())
        .collect();
    let r = http
        .put(format!("{}/v1/rings/bench", servers[0].api().base))
        .json(&json!({"algorithm": "rendezvous"}))
        .send()
        .await
        .expect("create");
    assert!(r.status().is_success(), "create: {}", r.status());
    let started = Instant::now();
    let tasks: Vec<_> = (0..writers)
        .map(|w| {
            let base = servers[w % instances].api().base.clone();
            // Writers share out `total`; the first ones take the remainder.
            let changes = total / writers + usize::from(w < total % writers);
            tokio::spawn(writer(http.clone(), base, w, changes))
        })
        .collect();
    let mut all = Seen::default();
    for t in tasks {
        let s = t.await.expect("writer");
        all.latencies.extend(s.latencies);
        all.versions.extend(s.versions);
        all.failures.extend(s.failures);
    }
    let elapsed = started.elapsed();
    // The history must be 1..=N with every acknowledged version in it once.
    let h: Value = http
        .get(format!("{}/v1/rings/bench/history", servers[0].api().base))
        .send()
        .await
        .expect("history")
        .json()
        .await
        .expect("history body");
    let history: Vec<u64> = h["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| e["version"].as_u64().expect("version"))
        .collect();
    let n = history.len() as u64;
    let gapless = history == (1..=n).collect::<Vec<_>>();
    all.versions.sort_unstable();
    let exact = all.versions == (2..=n).collect::<Vec<_>>();
    all.latencies.sort_unstable();
    let at = |q: f64| {
        all.latencies
            .get(((all.latencies.len().max(1) - 1) as f64 * q) as usize)
            .map_or(0.0, |d| d.as_secs_f64() * 1e3)
    };
    println!(
        "{writers} writers / {instances} instances: {} changes in {:.1} s ({:.0}/s), \
         {} failed, p50 {:.0} ms, p99 {:.0} ms, max {:.0} ms; history gapless: {gapless}, \
         exactly the acknowledged changes: {exact}",
        all.latencies.len() + all.failures.len(),
        elapsed.as_secs_f64(),
        all.latencies.len() as f64 / elapsed.as_secs_f64(),
        all.failures.len(),
        at(0.5),
        at(0.99),
        at(1.0),
    );
    for f in all.failures.iter().take(3) {
        println!("  refused: {f}");
    }
}

#[tokio::main]
async fn main() {
    let total: usize = std::env::args()
        .nth(1)
        .map_or(560, |a| a.parse().expect("changes: a number"));
    let http = reqwest::Client::new();
    scenario(&http, 2, 8, total).await;
    scenario(&http, 3, 16, total).await;
}
