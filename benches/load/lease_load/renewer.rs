//! The simulated nodes: one task each that registers its lease, then
//! renews it on a fixed schedule, and records every renewal.

use std::collections::BTreeMap;
use std::hash::{BuildHasher, Hasher};
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use tokio::sync::{oneshot, Notify, Semaphore};
use tokio::task::JoinHandle;

use crate::setup::{address, node_id, Api};
use crate::Options;

/// Which instance a node's requests go to.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum Route {
    /// Node i always uses instance i mod N.
    Sticky,
    /// Every request goes to the next instance in turn.
    Rotate,
}

/// The simulated node that stops renewing to be drained.
pub(crate) const VICTIM: usize = 0;

/// The victim's last successful renewal, when it stops.
#[derive(Debug)]
pub(crate) struct LastRenewal {
    /// When its answer arrived.
    pub(crate) at: Instant,
    /// The lease deadline it answered (RFC 3339).
    pub(crate) deadline: String,
}

/// One renewal: when it was sent, how long the answer took, how late it
/// was sent against its schedule (time spent waiting for a connection
/// slot), and what came back.
struct Sample {
    sent: Instant,
    latency: Duration,
    lag: Duration,
    outcome: Result<(), String>,
}

/// What one node's task saw.
#[derive(Default)]
pub(crate) struct NodeReport {
    samples: Vec<Sample>,
    registration: Option<Duration>,
    reregistrations: usize,
}

/// What the tasks share.
pub(crate) struct Shared {
    /// Nodes whose first registration succeeded.
    registered: AtomicUsize,
    /// Registrations that answered `changed: true` (made a version).
    pub(crate) changed: AtomicUsize,
    /// Set to make the victim stop renewing.
    pub(crate) kill_victim: AtomicBool,
    stop: AtomicBool,
    stopped: Notify,
    rotation: AtomicUsize,
    /// Bounds the renewals in flight, hence their connections.
    permits: Semaphore,
    /// Bounds the registrations in flight, apart: a registration costs the
    /// server far more than a renewal, and renewals queued behind the
    /// first 10,000 registrations would let the early leases expire.
    register_permits: Semaphore,
}

/// Every node's task.
pub(crate) struct Fleet {
    pub(crate) shared: Arc<Shared>,
    tasks: Vec<JoinHandle<NodeReport>>,
    started: Instant,
    /// Fires when the victim has stopped renewing.
    pub(crate) victim: Mutex<Option<oneshot::Receiver<LastRenewal>>>,
}

/// A uniform draw from [0, 1): the standard library's randomly keyed
/// hasher, enough to spread schedules.
fn unit() -> f64 {
    let h = std::collections::hash_map::RandomState::new().build_hasher();
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// What went wrong, as a key of the error table: `404 lease-not-found`,
/// `timeout`, ...
async fn failure(r: reqwest::Result<reqwest::Response>) -> Result<Value, String> {
    match r {
        Ok(r) if r.status().is_success() => r.json().await.map_err(|e| format!("bad body: {e}")),
        Ok(r) => {
            let status = r.status().as_u16();
            let body: Value = r.json().await.unwrap_or_default();
            let kind = body["type"].as_str().unwrap_or("");
            Err(format!(
                "{status} {}",
                kind.trim_start_matches("urn:ringd:problem:")
            ))
        }
        Err(e) if e.is_timeout() => Err("timeout".into()),
        Err(e) if e.is_connect() => Err("connect".into()),
        Err(_) => Err("transport".into()),
    }
}

impl Fleet {
    /// Starts every node's task: each registers, then renews.
    pub(crate) fn start(o: &Options, api: Api) -> Self {
        let shared = Arc::new(Shared {
            registered: AtomicUsize::new(0),
            changed: AtomicUsize::new(0),
            kill_victim: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            stopped: Notify::new(),
            rotation: AtomicUsize::new(0),
            permits: Semaphore::new(o.connections.max(1)),
            register_permits: Semaphore::new(o.register_connections.max(1)),
        });
        let (tx, rx) = oneshot::channel();
        let mut victim_tx = Some(tx);
        let ttl = ringd::ring::durations::format_duration(o.ttl);
        let tasks = (0..o.nodes)
            .map(|i| {
                let node = Node {
                    i,
                    api: api.clone(),
                    shared: shared.clone(),
                    route: o.route,
                    interval: o.interval,
                    body: json!({"address": address(i), "ttl": ttl}),
                    victim: if i == VICTIM { victim_tx.take() } else { None },
                };
                tokio::spawn(node.run())
            })
            .collect();
        Self {
            shared,
            tasks,
            started: Instant::now(),
            victim: Mutex::new(Some(rx)),
        }
    }

    /// Waits until `n` nodes have registered; returns how long it took.
    pub(crate) async fn wait_registered(&self, n: usize) -> Duration {
        while self.shared.registered.load(Ordering::Acquire) < n {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.started.elapsed()
    }

    /// Stops every task and gathers what they saw.
    pub(crate) async fn stop(self) -> Vec<NodeReport> {
        self.shared.stop.store(true, Ordering::Release);
        self.shared.stopped.notify_waiters();
        let mut reports = Vec::with_capacity(self.tasks.len());
        for t in self.tasks {
            reports.push(t.await.expect("a node task"));
        }
        reports
    }
}

/// One simulated node.
struct Node {
    i: usize,
    api: Api,
    shared: Arc<Shared>,
    route: Route,
    interval: Duration,
    body: Value,
    victim: Option<oneshot::Sender<LastRenewal>>,
}

impl Node {
    fn instance(&self) -> usize {
        match self.route {
            Route::Sticky => self.i,
            Route::Rotate => self.shared.rotation.fetch_add(1, Ordering::Relaxed),
        }
    }

    fn lease_path(&self) -> String {
        format!("{}/nodes/{}/lease", self.api.ring_path, node_id(self.i))
    }

    /// Registers through `instance`; returns the lease id and the
    /// request's latency (not counting the wait for a permit).
    async fn register(&self, instance: usize) -> Result<(String, Duration), String> {
        let _permit = self
            .shared
            .register_permits
            .acquire()
            .await
            .expect("permits");
        let sent = Instant::now();
        let r = self
            .api
            .request(Method::PUT, instance, &self.lease_path())
            .json(&self.body)
            .send()
            .await;
        let view = failure(r).await?;
        let latency = sent.elapsed();
        if view["changed"] == json!(true) {
            self.shared.changed.fetch_add(1, Ordering::Relaxed);
        }
        view["lease_id"]
            .as_str()
            .map(|id| (id.to_string(), latency))
            .ok_or_else(|| "no lease_id".to_string())
    }

    /// Sleeps until `at`; false if the benchmark stopped meanwhile.
    async fn sleep_until(&self, at: Instant) -> bool {
        let mut stopped = pin!(self.shared.stopped.notified());
        stopped.as_mut().enable();
        if self.shared.stop.load(Ordering::Acquire) {
            return false;
        }
        tokio::select! {
            _ = tokio::time::sleep_until(at.into()) => true,
            _ = stopped => false,
        }
    }

    async fn run(mut self) -> NodeReport {
        let mut report = NodeReport::default();
        let mut lease = loop {
            match self.register(self.instance()).await {
                Ok((id, latency)) => {
                    report.registration = Some(latency);
                    break id;
                }
                Err(e) => {
                    eprintln!("lease_load: registering {}: {e}; retrying", node_id(self.i));
                    if !self
                        .sleep_until(Instant::now() + Duration::from_secs(1))
                        .await
                    {
                        return report;
                    }
                }
            }
        };
        self.shared.registered.fetch_add(1, Ordering::Release);

        let mut last = None;
        // The first renewal anywhere in the first interval, so nodes that
        // registered together do not renew together.
        let mut next = Instant::now() + self.interval.mul_f64(unit());
        while self.sleep_until(next).await {
            if self.victim.is_some() && self.shared.kill_victim.load(Ordering::Acquire) {
                if let (Some(tx), Some(last)) = (self.victim.take(), last.take()) {
                    let _ = tx.send(last);
                }
                break;
            }
            let permit = self.shared.permits.acquire().await.expect("permits");
            let sent = Instant::now();
            let instance = self.instance();
            let path = format!("{}/{lease}/renew", self.lease_path());
            let r = self.api.request(Method::POST, instance, &path).send().await;
            let result = failure(r).await;
            let latency = sent.elapsed();
            drop(permit);
            let outcome = match result {
                Ok(view) => {
                    last = Some(LastRenewal {
                        at: Instant::now(),
                        deadline: view["deadline"].as_str().unwrap_or("").to_string(),
                    });
                    Ok(())
                }
                Err(e) => {
                    // A lost lease is what a real member re-registers
                    // after (and so would this one): counted apart.
                    if e.starts_with(&StatusCode::NOT_FOUND.as_u16().to_string()) {
                        if let Ok((id, _)) = self.register(instance).await {
                            lease = id;
                            report.reregistrations += 1;
                        }
                    }
                    Err(e)
                }
            };
            report.samples.push(Sample {
                sent,
                latency,
                lag: sent.saturating_duration_since(next),
                outcome,
            });
            next += self.interval.mul_f64(0.9 + 0.2 * unit());
            // Far behind (a stall): start afresh instead of a burst.
            if next + self.interval < Instant::now() {
                next = Instant::now();
            }
        }
        report
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() as f64 * p) as usize).min(sorted.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// Prints the renewals sent in `[t0, t1)` and the registrations.
pub(crate) fn report(nodes: &[NodeReport], t0: Instant, t1: Instant) {
    let mut ok = Vec::new();
    let mut lag = Vec::new();
    let mut errors: BTreeMap<&str, usize> = BTreeMap::new();
    let mut total = 0usize;
    for s in nodes.iter().flat_map(|n| &n.samples) {
        if s.sent < t0 || s.sent >= t1 {
            continue;
        }
        total += 1;
        lag.push(s.lag);
        match &s.outcome {
            Ok(()) => ok.push(s.latency),
            Err(e) => *errors.entry(e.as_str()).or_default() += 1,
        }
    }
    ok.sort();
    lag.sort();
    let secs = t1.duration_since(t0).as_secs_f64();
    let mut reg: Vec<Duration> = nodes.iter().filter_map(|n| n.registration).collect();
    reg.sort();
    let rereg: usize = nodes.iter().map(|n| n.reregistrations).sum();
    println!("steady phase: {secs:.1} s");
    println!(
        "| renewals sent | renewals/s | succeeded/s | p50 | p99 | max | send lag p50 / p99 / max | errors |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---|");
    let errors = if errors.is_empty() {
        "none".to_string()
    } else {
        errors
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!(
        "| {total} | {:.0} | {:.0} | {} | {} | {} | {} / {} / {} | {errors} |",
        total as f64 / secs,
        ok.len() as f64 / secs,
        ms(percentile(&ok, 0.50)),
        ms(percentile(&ok, 0.99)),
        ms(ok.last().copied().unwrap_or_default()),
        ms(percentile(&lag, 0.50)),
        ms(percentile(&lag, 0.99)),
        ms(lag.last().copied().unwrap_or_default()),
    );
    println!(
        "registrations: {} (latency p50 {}, p99 {}); \
         re-registrations after a lost lease, whole run: {rereg}",
        reg.len(),
        ms(percentile(&reg, 0.50)),
        ms(percentile(&reg, 0.99)),
    );
}
