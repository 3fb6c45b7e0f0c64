//! HTTP load benchmark: throughput and latency of `GET /lookup`,
//! `POST /lookup` with 1,000 keys, and `GET /healthz` (the HTTP floor),
//! against a 100-node ring, all on loopback.
//!
//! It starts `target/release/ringd` itself on a free port with a temporary
//! SQLite store, so build the binary first:
//!
//! ```sh
//! cargo build --release && cargo run --release --example http_load [seconds] [connections]
//! ```

// The launcher the tests use; the tools use none of the assertions.
#[allow(dead_code, reason = "a load tool uses only the launcher")]
#[path = "../../tests/support"]
mod support {
    pub(crate) mod api;
    pub(crate) mod client;
    pub(crate) mod ringd;
}

use std::sync::Arc;
use std::time::{Duration, Instant};
use support::ringd::Ringd;

/// Requests per second and latency percentiles of one scenario.
struct Report {
    requests: usize,
    rps: f64,
    p50: Duration,
    p99: Duration,
}

async fn run<F, Fut>(seconds: u64, connections: usize, request: F) -> Report
where
    F: Fn(usize) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let request = Arc::new(request);
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let started = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..connections {
        let request = request.clone();
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut i = c;
            while Instant::now() < deadline {
                let t = Instant::now();
                request(i).await;
                latencies.push(t.elapsed());
                i += connections;
            }
            latencies
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.expect("load task"));
    }
    let elapsed = started.elapsed().as_secs_f64();
    all.sort();
    let pct = |p: f64| all[((all.len() as f64 * p) as usize).min(all.len() - 1)];
    Report {
        requests: all.len(),
        rps: all.len() as f64 / elapsed,
        p50: pct(0.50),
        p99: pct(0.99),
    }
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let seconds: u64 = args.next().map_or(10, |s| s.parse().expect("seconds"));
    let connections: usize = args.next().map_or(32, |s| s.parse().expect("connections"));
    let server = Ringd::sqlite().start();
    let base = server.url.clone();
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(connections)
        .build()
        .expect("client");

    // A 100-node ring, built with one change.
    let ok = |r: reqwest::Response| {
        assert!(r.status().is_success(), "setup failed: {}", r.status());
    };
    ok(client
        .put(format!("{base}/v1/rings/bench"))
        .json(&serde_json::json!({}))
        .send()
        .await
        .expect("create ring"));
    let ops: Vec<_> = (0..100)
        .map(|i| serde_json::json!({"op": "upsert", "node": {"id": format!("node-{i:03}"), "address": format!("10.0.{}.{}:11211", i / 250, i % 250)}}))
        .collect();
    ok(client
        .post(format!("{base}/v1/rings/bench/changes"))
        .json(&serde_json::json!({ "ops": ops, "reason": "benchmark" }))
        .send()
        .await
        .expect("add nodes"));
    // Encoded once: the generator shares the server's two cores, and
    // encoding 1,000 keys per request would be load-generator work counted
    // against the server.
    let batch = bytes::Bytes::from(
        serde_json::to_vec(&serde_json::json!({
            "keys": (0..1000).map(|i| format!("user:{i:08}")).collect::<Vec<_>>(),
            "replicas": 3,
        }))
        .expect("batch body"),
    );

    println!("{seconds} s per scenario, {connections} connections, 100-node ring, loopback");
    println!("| scenario | requests | req/s | p50 | p99 |");
    println!("|---|---:|---:|---:|---:|");
    let print = |name: &str, r: &Report| {
        println!(
            "| {name} | {} | {:.0} | {:.2} ms | {:.2} ms |",
            r.requests,
            r.rps,
            r.p50.as_secs_f64() * 1e3,
            r.p99.as_secs_f64() * 1e3
        );
    };
    let (c, b) = (client.clone(), base.clone());
    let health = run(seconds, connections, move |_| {
        let (c, b) = (c.clone(), b.clone());
        async move {
            let r = c.get(format!("{b}/healthz")).send().await.expect("healthz");
            assert!(r.status().is_success());
        }
    })
    .await;
    print("GET /healthz", &health);
    let (c, b) = (client.clone(), base.clone());
    let lookup = run(seconds, connections, move |i| {
        let (c, b) = (c.clone(), b.clone());
        async move {
            let r = c
                .get(format!(
                    "{b}/v1/rings/bench/lookup?key=user:{i:08}&replicas=3"
                ))
                .send()
                .await
                .expect("lookup");
            assert!(r.status().is_success());
            r.bytes().await.expect("body");
        }
    })
    .await;
    print("GET /lookup", &lookup);
    let (c, b) = (client.clone(), base.clone());
    let post = run(seconds, connections, move |_| {
        let (c, b, batch) = (c.clone(), b.clone(), batch.clone());
        async move {
            let r = c
                .post(format!("{b}/v1/rings/bench/lookup"))
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(batch)
                .send()
                .await
                .expect("batch lookup");
            assert!(r.status().is_success());
            r.bytes().await.expect("body");
        }
    })
    .await;
    print("POST /lookup (1,000 keys)", &post);
    println!(
        "GET /lookup throughput is {:.0}% of GET /healthz",
        100.0 * lookup.rps / health.rps
    );
}
