//! Client library propagation: the time from a write's response until a
//! `RingClient` routes on the version that write made, over Server-Sent
//! Events and over long-polls, on loopback.
//!
//! It creates a 100-node `ring`, then, for each watch mode and each way of
//! observing the client, makes sequential single-node changes
//! (`PUT /v1/rings/{ring}/nodes/{node}`, flipping one node's weight between
//! 1 and 2, so every change moves keys) and measures, for each, from the
//! moment the PUT's response has been read until:
//!
//! - `router`: a `Router` on another thread, polling `version()` in a tight
//!   loop (one atomic load per turn), routes on that version; or
//! - `subscriber`: a task waiting on `RingClient::subscribe()` receives the
//!   `Applied` event for it (sent after the swap and the diff summary).
//!
//! The server sends a new version to watchers before it answers the write,
//! so a client can have it before the writer has read its response; such a
//! change counts as 0 ms.
//!
//! By default it starts `target/release/ringd` on a free loopback port with
//! a temporary SQLite store, so build the binary first:
//!
//! ```sh
//! cargo build --release && cargo run --release --example client_latency [changes] [server URL]
//! ```
//!
//! Defaults: 300 changes per scenario. With a URL it uses that server
//! (token from `RINGD_TOKEN`, which must allow writes) and a ring named
//! `client-latency-<pid>`, deleted at the end.

// The launcher the tests use; the tools use none of the assertions.
#[allow(dead_code, reason = "a load tool uses only the launcher")]
#[path = "../../tests/support"]
mod support {
    pub(crate) mod api;
    pub(crate) mod client;
    pub(crate) mod ringd;
}

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::ringd::Ringd;

use ringd::client::{RingClient, RingEvent, WatchMode};
use serde_json::{json, Value};

const NODES: usize = 100;

#[derive(Clone, Copy, PartialEq)]
enum Observer {
    Router,
    Subscriber,
}

/// When each version was first observed: nanoseconds since `origin`, plus
/// one (0 = not yet), indexed by version.
struct Seen {
    origin: Instant,
    at: Vec<AtomicU64>,
}

impl Seen {
    fn new(origin: Instant, versions: u64) -> Self {
        Self {
            origin,
            at: (0..=versions).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    fn mark(&self, version: u64, now: Instant) {
        if let Some(slot) = self.at.get(version as usize) {
            let nanos = (now - self.origin).as_nanos() as u64 + 1;
            let _ = slot.compare_exchange(0, nanos, Ordering::Release, Ordering::Relaxed);
        }
    }

    fn get(&self, version: u64) -> Option<Instant> {
        match self.at.get(version as usize)?.load(Ordering::Acquire) {
            0 => None,
            n => Some(self.origin + Duration::from_nanos(n - 1)),
        }
    }
}

struct Ctx {
    http: reqwest::Client,
    base: String,
    ring: String,
    token: Option<String>,
    /// Current weight of each node (1 or 2).
    weights: Vec<u32>,
    next_node: usize,
}

impl Ctx {
    fn req(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let r = self.http.request(method, format!("{}{path}", self.base));
        match &self.token {
            Some(t) => r.bearer_auth(t),
            None => r,
        }
    }

    async fn send(&self, method: reqwest::Method, path: &str, body: &Value) -> Value {
        let resp = self
            .req(method, path)
            .json(body)
            .send()
            .await
            .expect("request");
        let status = resp.status();
        let body: Value = resp.json().await.expect("JSON body");
        assert!(status.is_success(), "{path}: {status} {body}");
        body
    }

    /// One single-node change; returns the version it made and when its
    /// response had been read.
    async fn change(&mut self) -> (u64, Instant) {
        let i = self.next_node;
        self.next_node = (i + 1) % NODES;
        self.weights[i] = 3 - self.weights[i];
        let resp = self
            .req(
                reqwest::Method::PUT,
                &format!("/v1/rings/{}/nodes/node-{i:03}", self.ring),
            )
            .json(&json!({"address": address(i), "weight": self.weights[i]}))
            .send()
            .await
            .expect("PUT node");
        let status = resp.status();
        let bytes = resp.bytes().await.expect("PUT body");
        let read = Instant::now();
        assert!(status.is_success(), "PUT node: {status}");
        let body: Value = serde_json::from_slice(&bytes).expect("PUT JSON");
        (body["version"].as_u64().expect("version"), read)
    }
}

fn address(i: usize) -> String {
    format!("10.0.{}.{}:11211", i / 250, i % 250)
}

struct Report {
    latencies: Vec<Duration>,
    /// The version the last change made.
    last_version: u64,
    before_response: usize,
    missed: usize,
}

async fn scenario(
    ctx: &mut Ctx,
    mode: WatchMode,
    observer: Observer,
    changes: usize,
    from_version: u64,
) -> Report {
    let mut builder = RingClient::builder(&[ctx.base.as_str()], &ctx.ring)
        .watch_mode(mode)
        .client_id(format!("latency-{}", std::process::id()));
    if let Some(t) = &ctx.token {
        builder = builder.token(t);
    }
    let client = builder.start().expect("client");
    let mut events = client.subscribe();
    client
        .wait_for_version(from_version, Duration::from_secs(30))
        .await
        .expect("client ready");

    let origin = Instant::now();
    // Room for a few more versions than expected (another writer).
    let seen = Arc::new(Seen::new(origin, from_version + 2 * changes as u64 + 16));
    let stop = Arc::new(AtomicBool::new(false));
    let mut spinner = None;
    let mut listener = None;
    match observer {
        Observer::Router => {
            let (mut router, seen, stop) = (client.router(), seen.clone(), stop.clone());
            spinner = Some(std::thread::spawn(move || {
                let mut last = router.version().unwrap_or(0);
                while !stop.load(Ordering::Relaxed) {
                    if let Some(v) = router.version() {
                        if v != last {
                            let now = Instant::now();
                            for version in last + 1..=v {
                                seen.mark(version, now);
                            }
                            last = v;
                        }
                    }
                    std::hint::spin_loop();
                }
            }));
        }
        Observer::Subscriber => {
            let seen = seen.clone();
            listener = Some(tokio::spawn(async move {
                while let Ok(event) = events.recv().await {
                    if let RingEvent::Applied(change) = event {
                        seen.mark(change.to, Instant::now());
                    }
                }
            }));
        }
    }

    let mut report = Report {
        latencies: Vec::with_capacity(changes),
        last_version: from_version,
        before_response: 0,
        missed: 0,
    };
    for _ in 0..changes {
        let (version, read) = ctx.change().await;
        report.last_version = version;
        let deadline = read + Duration::from_secs(10);
        let at = loop {
            if let Some(at) = seen.get(version) {
                break Some(at);
            }
            if Instant::now() > deadline {
                break None;
            }
            tokio::time::sleep(Duration::from_micros(200)).await;
        };
        match at {
            Some(at) if at <= read => {
                report.before_response += 1;
                report.latencies.push(Duration::ZERO);
            }
            Some(at) => report.latencies.push(at - read),
            None => report.missed += 1,
        }
    }
    stop.store(true, Ordering::Relaxed);
    if let Some(s) = spinner {
        s.join().expect("router thread");
    }
    if let Some(l) = listener {
        l.abort();
    }
    report
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let changes: usize = args.next().map_or(300, |s| s.parse().expect("changes"));
    let url = args.next();
    let (server, base, ring) = match url {
        Some(u) => (
            None,
            u.trim_end_matches('/').to_string(),
            format!("client-latency-{}", std::process::id()),
        ),
        None => {
            let s = Ringd::sqlite().start();
            let base = s.url.clone();
            (Some(s), base, "latency".to_string())
        }
    };
    let mut ctx = Ctx {
        http: reqwest::Client::builder()
            .tcp_nodelay(true)
            .build()
            .expect("HTTP client"),
        base,
        ring: ring.clone(),
        token: std::env::var("RINGD_TOKEN").ok().filter(|t| !t.is_empty()),
        weights: vec![1; NODES],
        next_node: 0,
    };
    ctx.send(
        reqwest::Method::PUT,
        &format!("/v1/rings/{ring}"),
        &json!({"algorithm": "ring"}),
    )
    .await;
    let ops: Vec<_> = (0..NODES)
        .map(|i| json!({"op": "upsert", "node": {"id": format!("node-{i:03}"), "address": address(i)}}))
        .collect();
    let mut version = ctx
        .send(
            reqwest::Method::POST,
            &format!("/v1/rings/{ring}/changes"),
            &json!({"ops": ops, "reason": "benchmark"}),
        )
        .await["version"]
        .as_u64()
        .expect("version");

    println!(
        "{changes} single-node changes per scenario, {NODES}-node ring, loopback; \
         from the PUT response until the client routes on the version"
    );
    println!("| mode | observer | changes | p50 | p99 | max | before the response | missed |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    for (mode_name, mode) in [("SSE", WatchMode::Sse), ("long-poll", WatchMode::LongPoll)] {
        for (obs_name, observer) in [
            ("router", Observer::Router),
            ("subscriber", Observer::Subscriber),
        ] {
            let mut r = scenario(&mut ctx, mode, observer, changes, version).await;
            version = r.last_version;
            r.latencies.sort();
            let n = r.latencies.len();
            let pct = |p: f64| r.latencies[((n as f64 * p) as usize).min(n.saturating_sub(1))];
            if n == 0 {
                println!(
                    "| {mode_name} | {obs_name} | 0 | — | — | — | — | {} |",
                    r.missed
                );
                continue;
            }
            println!(
                "| {mode_name} | {obs_name} | {n} | {} | {} | {} | {} | {} |",
                ms(pct(0.50)),
                ms(pct(0.99)),
                ms(r.latencies[n - 1]),
                r.before_response,
                r.missed
            );
        }
    }
    if server.is_none() {
        let _ = ctx
            .req(reqwest::Method::DELETE, &format!("/v1/rings/{ring}"))
            .send()
            .await;
    }
}
