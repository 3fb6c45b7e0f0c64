//! One run of the benchmark: a fresh ring of four, a warm cache, the
//! workload, and the fifth node joining one of three ways.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use ringd::client::RingClient;
use serde_json::{json, Value};

use crate::support::api::{expect_json, TestApi};
use crate::workload::{self, Counters, Load, Servers, BUCKET};

/// Failure guard for anything awaited: never a measurement.
const GUARD: Duration = Duration::from_secs(60);

/// How the fifth node joins.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Way {
    /// One change.
    Direct,
    /// A gated rollout.
    Rollout,
    /// A gated rollout, with reads falling back to the previous owner.
    Handoff,
}

impl Way {
    /// Its short name, used in the ring's name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Way::Direct => "direct",
            Way::Rollout => "rollout",
            Way::Handoff => "handoff",
        }
    }

    /// Its name in the table and the chart.
    pub(crate) fn label(self, steps: u64) -> String {
        match self {
            Way::Direct => "one direct change".to_owned(),
            Way::Rollout => format!("{steps}-step gated rollout"),
            Way::Handoff => format!("{steps}-step rollout + handoff reads"),
        }
    }
}

/// What every run shares.
pub(crate) struct Settings {
    /// The rollouts' steps.
    pub(crate) steps: u64,
    /// The rollouts' `min_dwell`.
    pub(crate) dwell: Duration,
    /// How long the workload runs before the change.
    pub(crate) before: Duration,
    /// How long it runs from the start of the change.
    pub(crate) window: Duration,
    /// Application threads, each with its own ringd client.
    pub(crate) clients: u64,
    /// Each thread's load.
    pub(crate) load: Load,
}

/// What one run measured.
pub(crate) struct Outcome {
    /// How the node joined.
    pub(crate) way: Way,
    /// Backing-store reads per 100 ms from the start of the workload.
    pub(crate) series: Vec<u64>,
    /// The bucket in which the change started.
    pub(crate) change_bucket: usize,
    /// The most reads in one 100 ms from the change on.
    pub(crate) peak: u64,
    /// Reads from the change on, beyond the rate before it.
    pub(crate) extra: u64,
    /// Misses served by the previous owner.
    pub(crate) handoff_hits: u64,
    /// Reads the workload made, all told.
    pub(crate) reads: u64,
    /// Failed cache requests.
    pub(crate) errors: u64,
    /// From the start of the change until the ring's final version (for
    /// a direct change: until every client routes on it).
    pub(crate) finish: Duration,
    /// The final placement's fingerprint.
    pub(crate) fingerprint: String,
}

/// Runs the workload on a fresh ring and makes the fifth node join `way`.
pub(crate) async fn run(
    way: Way,
    server: &TestApi,
    url: &str,
    servers: &Arc<Servers>,
    settings: &Settings,
    nodes: &[&str; 5],
) -> Outcome {
    for s in servers.values() {
        s.client.flush().expect("flush memcached");
    }
    let ring = format!("cache-{}", way.name());
    let api = server.for_ring(&ring);
    api.create_with(json!({"algorithm": "ring"})).await;
    let upsert =
        |id: &str| json!({"op": "upsert", "node": {"id": id, "address": servers[id].address}});
    let base = api
        .change(json!(nodes[..4]
            .iter()
            .map(|id| upsert(id))
            .collect::<Vec<_>>()))
        .await;
    let clients: Vec<RingClient> = (1..=settings.clients)
        .map(|i| {
            RingClient::builder(&[url], &ring)
                .client_id(format!("app-{i}"))
                .start()
                .expect("client starts")
        })
        .collect();
    for c in &clients {
        c.wait_for_ack(base, GUARD)
            .await
            .expect("client acks the ring of four");
    }
    let (warm_client, warm_servers, load) = (clients[0].clone(), servers.clone(), settings.load);
    tokio::task::spawn_blocking(move || workload::warm(&warm_client, &warm_servers, load))
        .await
        .expect("warm the cache");

    let counters = Arc::new(Counters::new(settings.before + settings.window + BUCKET));
    let stop = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = clients
        .iter()
        .enumerate()
        .map(|(i, c)| {
            workload::start_worker(
                c.clone(),
                servers.clone(),
                counters.clone(),
                settings.load,
                way == Way::Handoff,
                i as u64 + 1,
                stop.clone(),
            )
        })
        .collect();
    tokio::time::sleep(settings.before).await;

    let change_at = Instant::now();
    let join = vec![upsert(nodes[4])];
    match way {
        Way::Direct => {
            let v = api.change(json!(join)).await;
            for c in &clients {
                c.wait_for_version(v, GUARD)
                    .await
                    .expect("clients apply the change");
            }
        }
        Way::Rollout | Way::Handoff => {
            let body = json!({
                "ops": join,
                "reason": format!("{} joins", nodes[4]),
                "policy": {
                    "steps": settings.steps,
                    "gate": 1.0,
                    "min_dwell": format!("{}ms", settings.dwell.as_millis()),
                    "gate_timeout": "60s",
                },
            });
            let started = expect_json(
                api.post(&format!("/v1/rings/{ring}/rollouts"), body).await,
                StatusCode::CREATED,
            )
            .await;
            let id = started["id"].as_u64().expect("rollout id");
            finish_rollout(&api, &ring, id).await;
        }
    }
    let finish = change_at.elapsed();
    if let Some(rest) = settings.window.checked_sub(finish) {
        tokio::time::sleep(rest).await;
    }
    stop.store(true, Ordering::Release);
    for w in workers {
        tokio::task::spawn_blocking(move || w.join().expect("worker"))
            .await
            .expect("join worker");
    }

    let snapshot = api.get_ok(&format!("/v1/rings/{ring}/snapshot")).await;
    let mut series = counters.series();
    // The buckets after the window (the last one partly) saw no load.
    let end = change_at + settings.window;
    let buckets = end.duration_since(counters.started()).as_millis() / BUCKET.as_millis();
    series.truncate(buckets as usize);
    let change_bucket =
        (change_at.duration_since(counters.started()).as_millis() / BUCKET.as_millis()) as usize;
    // The first bucket is left out of the rate before: it holds the
    // threads' start.
    let before = &series[1..change_bucket];
    let after = &series[change_bucket..];
    let rate_before = before.iter().sum::<u64>() as f64 / before.len().max(1) as f64;
    let extra = (after.iter().sum::<u64>() as f64 - rate_before * after.len() as f64).max(0.0);
    Outcome {
        way,
        peak: after.iter().copied().max().unwrap_or(0),
        extra: extra.round() as u64,
        handoff_hits: counters.handoff_hits.load(Ordering::Relaxed),
        reads: counters.reads.load(Ordering::Relaxed),
        errors: counters.errors.load(Ordering::Relaxed),
        change_bucket,
        series,
        finish,
        fingerprint: snapshot["fingerprint"]
            .as_str()
            .expect("fingerprint")
            .to_owned(),
    }
}

/// Waits until rollout `id` is done; any other end fails the benchmark.
async fn finish_rollout(api: &TestApi, ring: &str, id: u64) {
    let deadline = Instant::now() + GUARD;
    loop {
        let r: Value = api.get_ok(&format!("/v1/rings/{ring}/rollouts/{id}")).await;
        match r["state"].as_str() {
            Some("done") => return,
            Some("paused" | "aborted") => panic!("the rollout stopped: {r}"),
            _ => {}
        }
        assert!(Instant::now() < deadline, "the rollout never finished: {r}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
