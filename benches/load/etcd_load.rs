//! etcd store benchmark: changes per second through one and through two
//! ringd instances on one etcd, for single-op changes and 100-op batches,
//! and the time from a change's response on instance A until instance B
//! serves that version.
//!
//! It starts its own single-member `etcd` (from `PATH`, on free loopback
//! ports with a temporary data directory) and two `target/release/ringd`
//! instances on it, so build the binary first:
//!
//! ```sh
//! cargo build --release && cargo run --release --example etcd_load [seconds] [writers] [changes]
//! ```
//!
//! Defaults: 10 s per throughput scenario, 8 concurrent writers, 300
//! propagation samples.

// The launcher the tests use; the tools use none of the assertions.
#[allow(dead_code, reason = "a load tool uses only the launcher")]
#[path = "../../tests/support"]
mod support {
    pub(crate) mod api;
    pub(crate) mod client;
    pub(crate) mod ringd;
}

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::ringd::Ringd;

use serde_json::{json, Value};

const RING: &str = "bench";
/// Nodes in the ring; a batch re-addresses every one of them. etcd's
/// default `--max-txn-ops` is 128 and a commit adds up to three operations
/// to its changed nodes, so 100 fits.
const NODES: usize = 100;
/// Concurrent pollers of instance B during the propagation test: while one
/// request is in flight another is usually about to land, which halves
/// the gap between observations compared with one poller.
const POLLERS: usize = 2;

/// A child process killed when dropped, with the directory it uses.
struct Proc {
    child: Child,
    _dir: Option<tempfile::TempDir>,
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

/// Starts a single-member etcd with default settings; returns it and its
/// client URL once it reports healthy.
async fn start_etcd(http: &reqwest::Client) -> (Proc, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let client = format!("http://127.0.0.1:{}", free_port());
    let peer = format!("http://127.0.0.1:{}", free_port());
    let child = Command::new("etcd")
        .arg("--name=bench")
        .arg(format!("--data-dir={}", dir.path().join("data").display()))
        .arg(format!("--listen-client-urls={client}"))
        .arg(format!("--advertise-client-urls={client}"))
        .arg(format!("--listen-peer-urls={peer}"))
        .arg(format!("--initial-advertise-peer-urls={peer}"))
        .arg(format!("--initial-cluster=bench={peer}"))
        .args(["--logger=zap", "--log-level=warn"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start etcd (is it on PATH?)");
    let etcd = Proc {
        child,
        _dir: Some(dir),
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(r) = http.get(format!("{client}/health")).send().await {
            if r.status().is_success() {
                return (etcd, client);
            }
        }
        assert!(Instant::now() < deadline, "etcd did not become healthy");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The ops of change `seq` by writer `w`. Every address is unique to
/// (writer, change), so every change alters the ring even when the server
/// re-applies it on top of another writer's change; a change that altered
/// nothing would create no version and inflate the rate.
fn ops(batch: bool, w: usize, seq: u64) -> Value {
    if batch {
        // A re-addressing of every node: 100 node keys written per commit,
        // placement unchanged.
        (0..NODES)
            .map(|i| json!({"op": "upsert", "node": {"id": format!("node-{i:03}"), "address": format!("w{w}-{seq}-{i}:11211")}}))
            .collect()
    } else {
        // A re-weighting of the writer's own node: the placement is rebuilt
        // and the response carries a real movement diff.
        json!([{"op": "upsert", "node": {"id": format!("node-{:03}", w % NODES), "address": format!("w{w}-{seq}:11211"), "weight": 1 + seq % 2}}])
    }
}

/// The version named by a response's `ETag: "<version>"`.
fn etag_version(r: &reqwest::Response) -> u64 {
    r.headers()
        .get("etag")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim_matches('"').parse().ok())
        .expect("an ETag with the version")
}

async fn version(http: &reqwest::Client, base: &str) -> u64 {
    let r = http
        .get(format!("{base}/v1/rings/{RING}"))
        .send()
        .await
        .expect("read ring");
    assert!(r.status().is_success(), "read ring: {}", r.status());
    etag_version(&r)
}

/// Posts a change; returns the response status and the version it names.
async fn change(http: &reqwest::Client, base: &str, ops: Value) -> (u16, Option<u64>) {
    let r = http
        .post(format!("{base}/v1/rings/{RING}/changes"))
        .json(&json!({ "ops": ops, "reason": "benchmark" }))
        .send()
        .await
        .expect("post change");
    let status = r.status().as_u16();
    let v = (status == 200).then(|| etag_version(&r));
    let body = r.bytes().await.expect("change body");
    assert!(
        status == 200 || status == 503,
        "change failed with {status}: {}",
        String::from_utf8_lossy(&body)
    );
    (status, v)
}

/// One throughput scenario's results.
struct Throughput {
    changes: usize,
    unavailable: usize,
    per_second: f64,
    p50: Duration,
    p99: Duration,
}

/// Runs `writers` writers for `seconds`, writer `w` on `bases[w % len]`.
async fn throughput(
    http: &reqwest::Client,
    bases: &[String],
    writers: usize,
    seconds: u64,
    batch: bool,
) -> Throughput {
    let before = settle(http, bases).await;
    let started = Instant::now();
    let deadline = started + Duration::from_secs(seconds);
    let mut tasks = Vec::new();
    for w in 0..writers {
        let (http, base) = (http.clone(), bases[w % bases.len()].clone());
        tasks.push(tokio::spawn(async move {
            let (mut latencies, mut versions, mut unavailable) = (Vec::new(), Vec::new(), 0);
            let mut seq = 0u64;
            while Instant::now() < deadline {
                seq += 1;
                let t = Instant::now();
                match change(&http, &base, ops(batch, w, seq)).await {
                    (200, Some(v)) => {
                        latencies.push(t.elapsed());
                        versions.push(v);
                    }
                    _ => unavailable += 1,
                }
            }
            (latencies, versions, unavailable)
        }));
    }
    let (mut all, mut versions, mut unavailable) = (Vec::new(), Vec::new(), 0);
    for t in tasks {
        let (l, v, u) = t.await.expect("writer task");
        all.extend(l);
        versions.extend(v);
        unavailable += u;
    }
    let elapsed = started.elapsed().as_secs_f64();
    // Every accepted change must have made its own version, and together
    // exactly the versions the ring gained.
    versions.sort();
    versions.dedup();
    assert_eq!(
        versions.len(),
        all.len(),
        "two changes reported one version"
    );
    let after = settle(http, bases).await;
    assert_eq!(
        after - before,
        all.len() as u64,
        "versions != accepted changes"
    );
    all.sort();
    Throughput {
        changes: all.len(),
        unavailable,
        per_second: all.len() as f64 / elapsed,
        p50: percentile(&all, 0.50),
        p99: percentile(&all, 0.99),
    }
}

/// Waits until every instance serves the same version; returns it. An
/// instance learns of changes made through the other one from its watch,
/// a moment after they were acknowledged.
async fn settle(http: &reqwest::Client, bases: &[String]) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let mut seen = Vec::new();
        for base in bases {
            seen.push(version(http, base).await);
        }
        if seen.iter().all(|v| *v == seen[0]) {
            return seen[0];
        }
        assert!(Instant::now() < deadline, "instances disagree: {seen:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 * p) as usize).min(sorted.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Propagation A→B: one change at a time through A; the delay from A's
/// response until a poll of B answers with that version (or a later one).
/// Returns the delays and the mean round trip of one poll.
async fn propagation(
    http: &reqwest::Client,
    a: &str,
    b: &str,
    changes: usize,
) -> (Vec<Duration>, Duration) {
    let mut delays = Vec::with_capacity(changes);
    let (mut polls, mut polling) = (0u64, Duration::ZERO);
    for seq in 0..changes as u64 {
        let (status, v) = change(http, a, ops(false, 0, 1_000_000 + seq)).await;
        let acked = Instant::now();
        assert_eq!(status, 200, "propagation change refused");
        let target = v.expect("version");
        let done = Arc::new(AtomicBool::new(false));
        let pollers: Vec<_> = (0..POLLERS)
            .map(|_| {
                let (http, b, done) = (http.clone(), b.to_string(), done.clone());
                tokio::spawn(async move {
                    let (mut n, mut seen) = (0u64, None);
                    while !done.load(Ordering::Relaxed) {
                        n += 1;
                        if version(&http, &b).await >= target {
                            seen = Some(Instant::now());
                            done.store(true, Ordering::Relaxed);
                        } else if acked.elapsed() > Duration::from_secs(10) {
                            panic!("B did not serve version {target} within 10 s");
                        }
                    }
                    (n, seen)
                })
            })
            .collect();
        let mut first = None;
        for p in pollers {
            let (n, seen) = p.await.expect("poller");
            polls += n;
            first = first.into_iter().chain(seen).min();
        }
        let delay = first.expect("a poller saw the version") - acked;
        polling += delay;
        delays.push(delay);
    }
    // Each poller kept one request in flight for the whole wait.
    let round_trip = polling.mul_f64(POLLERS as f64 / polls.max(1) as f64);
    delays.sort();
    (delays, round_trip)
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let seconds: u64 = args.next().map_or(10, |s| s.parse().expect("seconds"));
    let writers: usize = args.next().map_or(8, |s| s.parse().expect("writers"));
    let samples: usize = args.next().map_or(300, |s| s.parse().expect("changes"));
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(writers + POLLERS)
        .build()
        .expect("client");
    let (_etcd, endpoint) = start_etcd(&http).await;
    let store = format!("etcd://{}", endpoint.trim_start_matches("http://"));
    let ringd_a = Ringd::on(&store).prefix("/bench").start();
    let ringd_b = Ringd::on(&store).prefix("/bench").start();
    let (a, b) = (ringd_a.url.clone(), ringd_b.url.clone());

    let created = http
        .put(format!("{a}/v1/rings/{RING}"))
        .json(&json!({"algorithm": "ring"}))
        .send()
        .await
        .expect("create ring");
    assert!(
        created.status().is_success(),
        "create: {}",
        created.status()
    );
    let nodes: Vec<Value> = (0..NODES)
        .map(|i| json!({"op": "upsert", "node": {"id": format!("node-{i:03}"), "address": format!("10.0.0.{i}:11211")}}))
        .collect();
    assert_eq!(change(&http, &a, Value::Array(nodes)).await.0, 200);
    // B holds the ring in memory from here on, so what it serves later
    // comes from its etcd watch, not from a read on demand.
    version(&http, &b).await;

    println!(
        "etcd store: {seconds} s per scenario, {writers} writers, {NODES}-node ring, loopback"
    );
    println!("| scenario | instances | changes | changes/s | ops/s | p50 | p99 | 503s |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    let both = [a.clone(), b.clone()];
    for (name, batch, size) in [("single op", false, 1), ("100-op batch", true, NODES)] {
        for bases in [&both[..1], &both[..]] {
            let r = throughput(&http, bases, writers, seconds, batch).await;
            println!(
                "| {name} | {} | {} | {:.0} | {:.0} | {:.1} ms | {:.1} ms | {} |",
                bases.len(),
                r.changes,
                r.per_second,
                r.per_second * size as f64,
                ms(r.p50),
                ms(r.p99),
                r.unavailable
            );
        }
    }

    let (delays, round_trip) = propagation(&http, &a, &b, samples).await;
    println!();
    println!(
        "propagation A→B over {samples} sequential single-op changes ({POLLERS} pollers on B, \
         {:.2} ms mean poll round trip)",
        ms(round_trip)
    );
    println!("| p50 | p99 | max |");
    println!("|---:|---:|---:|");
    println!(
        "| {:.2} ms | {:.2} ms | {:.2} ms |",
        ms(percentile(&delays, 0.50)),
        ms(percentile(&delays, 0.99)),
        ms(delays[delays.len() - 1])
    );
    let p99 = percentile(&delays, 0.99);
    println!(
        "target p99 < 100 ms: {}",
        if p99 < Duration::from_millis(100) {
            "met"
        } else {
            "not met"
        }
    );
}
