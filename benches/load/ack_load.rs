//! Client-ack load benchmark: many clients acking one ring at once,
//! against a live `ringd serve` on a SQLite store, all on loopback.
//!
//! Each acker is one task with its own client id that sends
//! `POST /v1/rings/bench/clients/{id}/ack` back to back (a closed loop, so
//! at most `ackers` requests are in flight), over a connection pool as
//! large as the number of ackers. It reports acks per second, latency
//! percentiles and the server's thread count (`Threads:` in
//! `/proc/PID/status`, sampled every 20 ms): before the load, the highest
//! seen during it, and at its end. Afterwards it checks that the server
//! lists every acker as a live client, and it fails if any ack was refused.
//!
//! It starts `target/release/ringd` itself (or the binary named by
//! `RINGD_BIN`) on a free port with a temporary SQLite store, so build the
//! binary first:
//!
//! ```sh
//! cargo build --release && cargo run --release --example ack_load [seconds] [ackers]
//! ```
//!
//! Defaults: 10 seconds, 200 ackers.

// The launcher the tests use; the tools use none of the assertions.
#[allow(dead_code, reason = "a load tool uses only the launcher")]
#[path = "../../tests/support"]
mod support {
    pub(crate) mod api;
    pub(crate) mod client;
    pub(crate) mod ringd;
}

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use support::ringd::Ringd;

const RING: &str = "bench";
/// How often the server's thread count is sampled during the load.
const SAMPLE_EVERY: Duration = Duration::from_millis(20);

/// The server's current number of threads.
fn threads(pid: u32) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("Threads: in /proc status")
}

/// Samples the thread count until `stop`, returning the highest seen.
fn sample_threads(pid: u32, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<usize> {
    std::thread::spawn(move || {
        let mut peak = 0;
        while !stop.load(Ordering::Acquire) {
            peak = peak.max(threads(pid));
            std::thread::sleep(SAMPLE_EVERY);
        }
        peak
    })
}

/// What one acker saw: the latency of every accepted ack, and how many
/// were refused (with the first refusal, to show).
#[derive(Default)]
struct AckerReport {
    latencies: Vec<Duration>,
    refused: usize,
    first_refusal: Option<String>,
}

async fn acker(
    client: reqwest::Client,
    url: String,
    body: Arc<serde_json::Value>,
    deadline: Instant,
) -> AckerReport {
    let mut report = AckerReport::default();
    while Instant::now() < deadline {
        let started = Instant::now();
        let response = client.post(&url).json(&*body).send().await;
        match response {
            Ok(r) if r.status() == reqwest::StatusCode::OK => {
                r.bytes().await.expect("ack body");
                report.latencies.push(started.elapsed());
            }
            Ok(r) => {
                report.refused += 1;
                let status = r.status();
                let text = r.text().await.unwrap_or_default();
                report
                    .first_refusal
                    .get_or_insert(format!("{status}: {text}"));
            }
            Err(e) => {
                report.refused += 1;
                report.first_refusal.get_or_insert(e.to_string());
            }
        }
    }
    report
}

/// Creates a 20-node ring and returns its version and fingerprint.
async fn setup(client: &reqwest::Client, base: &str) -> (u64, String) {
    let ok = |r: reqwest::Response| {
        assert!(r.status().is_success(), "setup failed: {}", r.status());
        r
    };
    ok(client
        .put(format!("{base}/v1/rings/{RING}"))
        .json(&serde_json::json!({}))
        .send()
        .await
        .expect("create ring"));
    let ops: Vec<_> = (0..20)
        .map(|i| serde_json::json!({"op": "upsert", "node": {"id": format!("node-{i:02}"), "address": format!("10.0.0.{i}:11211")}}))
        .collect();
    ok(client
        .post(format!("{base}/v1/rings/{RING}/changes"))
        .json(&serde_json::json!({ "ops": ops, "reason": "benchmark" }))
        .send()
        .await
        .expect("add nodes"));
    let snapshot: serde_json::Value = ok(client
        .get(format!("{base}/v1/rings/{RING}/snapshot"))
        .send()
        .await
        .expect("read snapshot"))
    .json()
    .await
    .expect("snapshot JSON");
    let version = snapshot["version"].as_u64().expect("snapshot version");
    let fingerprint = snapshot["fingerprint"]
        .as_str()
        .expect("snapshot fingerprint")
        .to_string();
    (version, fingerprint)
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let seconds: u64 = args.next().map_or(10, |s| s.parse().expect("seconds"));
    let ackers: usize = args.next().map_or(200, |s| s.parse().expect("ackers"));
    let server = Ringd::sqlite().start();
    let base = server.url.clone();
    let pid = server.pid();
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(ackers)
        .build()
        .expect("client");
    let (version, fingerprint) = setup(&client, &base).await;
    let body = Arc::new(serde_json::json!({ "version": version, "fingerprint": fingerprint }));

    // Let the threads of start-up and set-up requests settle first.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let threads_before = threads(pid);
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = sample_threads(pid, stop.clone());
    let started = Instant::now();
    let deadline = started + Duration::from_secs(seconds);
    let tasks: Vec<_> = (0..ackers)
        .map(|i| {
            let url = format!("{base}/v1/rings/{RING}/clients/client-{i:04}/ack");
            tokio::spawn(acker(client.clone(), url, body.clone(), deadline))
        })
        .collect();
    let mut latencies = Vec::new();
    let refused = AtomicUsize::new(0);
    let mut first_refusal = None;
    for task in tasks {
        let report = task.await.expect("acker task");
        latencies.extend(report.latencies);
        refused.fetch_add(report.refused, Ordering::Relaxed);
        first_refusal = first_refusal.or(report.first_refusal);
    }
    let elapsed = started.elapsed().as_secs_f64();
    let threads_end = threads(pid);
    stop.store(true, Ordering::Release);
    let threads_peak = sampler.join().expect("thread sampler").max(threads_end);

    let list: serde_json::Value = client
        .get(format!("{base}/v1/rings/{RING}/clients"))
        .send()
        .await
        .expect("list clients")
        .json()
        .await
        .expect("client list JSON");
    let live = list["summary"]["clients"].as_u64().expect("client count");

    latencies.sort();
    assert!(!latencies.is_empty(), "no ack was accepted");
    let pct = |p: f64| latencies[((latencies.len() as f64 * p) as usize).min(latencies.len() - 1)];
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!("{seconds} s, {ackers} concurrent ackers, one ring, SQLite store, loopback");
    println!("| acks | acks/s | p50 | p99 | threads before | threads peak | threads at end |");
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    println!(
        "| {} | {:.0} | {:.2} ms | {:.2} ms | {threads_before} | {threads_peak} | {threads_end} |",
        latencies.len(),
        latencies.len() as f64 / elapsed,
        ms(pct(0.50)),
        ms(pct(0.99)),
    );
    let refused = refused.into_inner();
    assert_eq!(
        refused, 0,
        "{refused} acks were refused; the first: {first_refusal:?}"
    );
    assert_eq!(live, ackers as u64, "live clients listed after the load");
}
