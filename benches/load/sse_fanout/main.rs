//! Change-notification fan-out benchmark: N concurrent watchers of
//! `GET /v1/rings/{ring}/watch`, then a series of single-node changes, all
//! on loopback. For each change it measures the time from the write's HTTP
//! response until the last watcher has the event, and it measures the
//! server's resident memory per idle watcher.
//!
//! It starts `target/release/ringd` itself (a fresh server with a
//! temporary SQLite store per scenario), so build the binary first, and
//! raise the open-file limit: each watcher is one descriptor here and one
//! in the server. `benches/load/sse_fanout.sh` does both.
//!
//! ```sh
//! cargo run --release --example sse_fanout [--changes 30] [N[:light|:full] ...]
//! ```
//!
//! Default scenarios: `1000 10000 1000:full`. The mode defaults to `light`
//! (version, fingerprint and change summary), which is what a client that
//! only needs to know "something changed" asks for; `full` sends the whole
//! snapshot of the 20-node ring in every event.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

// The launcher the tests use; the tools use none of the assertions.
#[allow(dead_code, reason = "a load tool uses only the launcher")]
#[path = "../../../tests/support"]
mod support {
    pub(crate) mod api;
    pub(crate) mod client;
    pub(crate) mod ringd;
}
mod watchers;

use support::ringd::Ringd;

use watchers::{watcher, Arrivals};

const RING: &str = "bench";
/// Nodes in the ring before the changes start.
const NODES: usize = 20;
/// Watchers connected at once; the listener's accept queue holds 1,024.
const BATCH: usize = 500;
/// How long a change may take to reach every watcher before it counts as
/// missed by the rest.
const DEADLINE: Duration = Duration::from_secs(10);

/// The server's resident set size in bytes.
fn rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .expect("VmRSS")
        * 1024
}

/// One scenario's figures.
struct Report {
    watchers: usize,
    mode: &'static str,
    connect: Duration,
    rss_before: u64,
    rss_after: u64,
    latencies: Vec<Duration>,
    /// Changes whose every watcher had the event before the response.
    clamped: usize,
    /// Watcher deliveries still missing at the deadline, over all changes.
    missed: usize,
}

async fn wait_for(count: &AtomicUsize, target: usize, deadline: Duration) -> bool {
    let until = Instant::now() + deadline;
    while count.load(Ordering::Acquire) < target {
        if Instant::now() > until {
            return false;
        }
        // Polling costs the driver nothing it measures: arrival times are
        // stamped by the watchers themselves.
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    true
}

async fn put(client: &reqwest::Client, url: String, body: serde_json::Value) -> u64 {
    let r = client.put(url).json(&body).send().await.expect("PUT");
    assert!(r.status().is_success(), "PUT failed: {}", r.status());
    let v: serde_json::Value = r.json().await.expect("PUT body");
    v["version"].as_u64().expect("version")
}

/// Opens `n` watchers in batches; returns their tasks once every one has
/// the first snapshot.
async fn connect(
    rt: &tokio::runtime::Handle,
    addr: &str,
    mode: &'static str,
    n: usize,
    arrivals: &Arc<Arrivals>,
) -> Vec<tokio::task::JoinHandle<()>> {
    let mut tasks = Vec::with_capacity(n);
    while tasks.len() < n {
        for _ in 0..BATCH.min(n - tasks.len()) {
            tasks.push(rt.spawn(watcher(addr.to_string(), mode, arrivals.clone())));
        }
        if !wait_for(&arrivals.count[0], tasks.len(), Duration::from_secs(30)).await {
            panic!(
                "only {} of {} watchers got the first snapshot ({} failed)",
                arrivals.count[0].load(Ordering::Relaxed),
                tasks.len(),
                arrivals.errors.load(Ordering::Relaxed)
            );
        }
    }
    tasks
}

async fn scenario(
    rt: &tokio::runtime::Handle,
    n: usize,
    mode: &'static str,
    changes: usize,
) -> Report {
    // The keep-alive stays at its 15 s default so idle streams are idle.
    let server = Ringd::sqlite().start();
    let addr = server.url.trim_start_matches("http://").to_string();
    let base = server.url.clone();
    let client = reqwest::Client::new();
    put(
        &client,
        format!("{base}/v1/rings/{RING}"),
        serde_json::json!({}),
    )
    .await;
    let mut v0 = 0;
    for i in 0..NODES {
        let url = format!("{base}/v1/rings/{RING}/nodes/node-{i:02}");
        v0 = put(&client, url, serde_json::json!({})).await;
    }

    // Warm-up, so the baseline includes the runtime's and the allocator's
    // start-up costs rather than charging them to the first watchers.
    let warm = Arc::new(Arrivals::new(v0, 1));
    for t in connect(rt, &addr, mode, 50, &warm).await {
        t.abort();
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_before = rss(server.pid());

    let arrivals = Arc::new(Arrivals::new(v0, changes + 1));
    let t = Instant::now();
    let tasks = connect(rt, &addr, mode, n, &arrivals).await;
    let connect_time = t.elapsed();
    // Idle: no change and no keep-alive (15 s) is due yet.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let rss_after = rss(server.pid());

    let (mut latencies, mut clamped, mut missed) = (Vec::new(), 0, 0);
    for j in 1..=changes {
        let url = format!("{base}/v1/rings/{RING}/nodes/extra-{j:02}");
        let version = put(&client, url, serde_json::json!({})).await;
        // The response body has been read in full by now.
        let t_response = arrivals.nanos(Instant::now());
        assert_eq!(version, v0 + j as u64, "one version per change");
        if !wait_for(&arrivals.count[j], n, DEADLINE).await {
            let had = arrivals.count[j].load(Ordering::Relaxed);
            eprintln!("version {version}: {} of {n} watchers missed it", n - had);
            missed += n - had;
        }
        let last = arrivals.last[j].load(Ordering::Relaxed);
        if last < t_response {
            clamped += 1;
        }
        latencies.push(Duration::from_nanos(last.saturating_sub(t_response)));
        // Lets the watchers' tasks settle before the next write.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for t in tasks {
        t.abort();
    }
    let (resets, gaps, errors) = (
        arrivals.resets.load(Ordering::Relaxed),
        arrivals.gaps.load(Ordering::Relaxed),
        arrivals.errors.load(Ordering::Relaxed),
    );
    if resets + gaps + errors > 0 {
        eprintln!("{n} {mode}: {resets} resets, {gaps} gaps, {errors} failed watchers");
    }
    latencies.sort();
    Report {
        watchers: n,
        mode,
        connect: connect_time,
        rss_before,
        rss_after,
        latencies,
        clamped,
        missed,
    }
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    let mut changes = 30;
    let mut specs = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--changes" {
            changes = args
                .next()
                .and_then(|c| c.parse().ok())
                .expect("--changes N");
            continue;
        }
        let (n, mode) = a.split_once(':').unwrap_or((&a, "light"));
        let mode = match mode {
            "light" => "light",
            "full" => "full",
            _ => panic!("mode `{mode}`: use light or full"),
        };
        specs.push((n.parse::<usize>().expect("watcher count"), mode));
    }
    if specs.is_empty() {
        specs = vec![(1000, "light"), (10000, "light"), (1000, "full")];
    }
    // Watchers run on every core; the driver on a thread of its own, so a
    // busy watcher runtime does not delay stamping the write's response.
    let watchers = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("watcher runtime");
    let driver = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("driver runtime");

    let mut reports = Vec::new();
    for (n, mode) in specs {
        eprintln!("{n} watchers, mode={mode}, {changes} changes ...");
        reports.push(driver.block_on(scenario(watchers.handle(), n, mode, changes)));
    }

    println!("{changes} single-node changes per scenario, {NODES}-node ring, loopback");
    println!("| watchers | mode | connect all | p50 | p99 | max | missed | server RSS idle before → after | per idle watcher |");
    println!("|---:|---|---:|---:|---:|---:|---:|---:|---:|");
    for r in &reports {
        let l = &r.latencies;
        // Nearest rank: with 30 changes the p99 is the slowest one.
        let pct = |p: f64| l[((p * l.len() as f64).ceil() as usize).clamp(1, l.len()) - 1];
        let per = r.rss_after.saturating_sub(r.rss_before) as f64 / r.watchers as f64;
        println!(
            "| {} | {} | {:.2} s | {} | {} | {} | {} | {:.1} → {:.1} MiB | {:.1} KiB |",
            r.watchers,
            r.mode,
            r.connect.as_secs_f64(),
            ms(pct(0.50)),
            ms(pct(0.99)),
            ms(l[l.len() - 1]),
            r.missed,
            r.rss_before as f64 / 1048576.0,
            r.rss_after as f64 / 1048576.0,
            per / 1024.0
        );
        if r.clamped > 0 {
            println!(
                "  ({} watchers, {}: {} changes reached every watcher before the response; counted as 0 ms)",
                r.watchers, r.mode, r.clamped
            );
        }
    }
}
