//! Why rollouts: a read-through cache on real memcached grows from 4
//! nodes to 5, three ways, and the backing store's reads are counted.
//!
//! Five `memcached` processes run on loopback ports and a `ringd serve`
//! on a SQLite store. Four application threads, each with its own ringd
//! client (acking as `app-1` … `app-4`), read Zipf-distributed keys
//! (20,000 keys, exponent 0.99, 4 × 2,500 reads/s) through the cache:
//! a read goes to the owner's memcached and, on a miss, to a simulated
//! backing store that counts its reads per 100 ms, then fills the cache.
//! The cache starts warm: every key is on its owner. Two seconds in,
//! `cache-5` joins the ring of four:
//!
//! 1. **direct**: one change; a fifth of the keys move at once.
//! 2. **rollout**: a 10-step rollout, each step gated on all four
//!    clients having applied the last, and at least `--dwell-ms` apart.
//! 3. **rollout + handoff**: the same rollout, and a miss on a key whose
//!    owner changed in the last applied version is read from the previous
//!    owner (`RingClient::handoff`) before the backing store.
//!
//! It prints, for each, the peak backing-store reads per 100 ms, the
//! reads beyond the warm cache's (which are none), and the time until the
//! ring reached its final placement (the same in all three: checked by
//! fingerprint), and draws the reads over time as an SVG chart.
//!
//! ```sh
//! apt-get install memcached   # .ci/setup --test installs it
//! cargo build --release && cargo run --release --example rollout_cache -- \
//!     [--steps 10] [--dwell-ms 2000] [--keys 20000] [--chart docs/img/rollout-cache.svg]
//! ```
//!
//! It exits with status 1 if the final placements differ, if any cache
//! request failed, or if the handoff run's peak is not below a fifth of
//! the direct change's.

#[allow(dead_code, reason = "a load tool uses only the launcher")]
#[path = "../../tests/support"]
mod support {
    pub(crate) mod api;
    pub(crate) mod client;
    pub(crate) mod ringd;
}

mod chart;
mod memcached;
mod run;
mod workload;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use memcached::Memcached;
use run::{Outcome, Settings, Way};
use support::ringd::Ringd;
use workload::{Load, Servers, BUCKET};

/// The nodes: the first four start in the ring, the fifth joins it.
const NODES: [&str; 5] = ["cache-1", "cache-2", "cache-3", "cache-4", "cache-5"];

fn fail(msg: impl std::fmt::Display) -> ! {
    eprintln!("rollout_cache: FAIL: {msg}");
    std::process::exit(1);
}

fn settings() -> (Settings, PathBuf) {
    let mut settings = Settings {
        steps: 10,
        dwell: Duration::from_secs(2),
        before: Duration::from_secs(2),
        window: Duration::from_secs(26),
        clients: 4,
        load: Load {
            keys: 20_000,
            exponent: 0.99,
            rate: 2_500,
        },
    };
    let mut chart = PathBuf::from("docs/img/rollout-cache.svg");
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args
            .next()
            .unwrap_or_else(|| fail(format!("{flag} needs a value")));
        let number = || -> u64 {
            value
                .parse()
                .unwrap_or_else(|_| fail(format!("{flag} {value}")))
        };
        match flag.as_str() {
            "--steps" => settings.steps = number(),
            "--dwell-ms" => settings.dwell = Duration::from_millis(number()),
            "--keys" => settings.load.keys = number(),
            "--chart" => chart = PathBuf::from(&value),
            _ => fail(format!("unknown flag {flag}")),
        }
    }
    (settings, chart)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let (settings, chart_path) = settings();
    let server = Ringd::sqlite().start();
    let servers: Arc<Servers> = Arc::new(
        NODES
            .iter()
            .map(|id| {
                (
                    id.to_string(),
                    Memcached::start(settings.clients as u32 + 1),
                )
            })
            .collect(),
    );
    let api = server.api();
    let mut outcomes: Vec<Outcome> = Vec::new();
    for way in [Way::Direct, Way::Rollout, Way::Handoff] {
        let outcome = run::run(way, api, &server.url, &servers, &settings, &NODES).await;
        eprintln!(
            "{}: peak {}, extra {}, {} reads, finished in {:.1} s",
            way.label(settings.steps),
            outcome.peak,
            outcome.extra,
            outcome.reads,
            outcome.finish.as_secs_f64()
        );
        outcomes.push(outcome);
    }
    // The memcached processes and the server stop when dropped, which
    // exiting on a failure would skip.
    drop(servers);
    drop(server);

    println!(
        "4 → 5 memcached nodes (ring, 160 points), {} keys Zipf {}, {} clients × {} reads/s; \
         {}-step rollouts gated on all clients, min_dwell {} ms",
        settings.load.keys,
        settings.load.exponent,
        settings.clients,
        settings.load.rate,
        settings.steps,
        settings.dwell.as_millis()
    );
    println!("| way | peak backing reads / 100 ms | extra backing reads | reads served by the previous owner | time to final placement |");
    println!("|---|---:|---:|---:|---:|");
    for o in &outcomes {
        println!(
            "| {} | {} | {} | {} | {:.1} s |",
            o.way.label(settings.steps),
            o.peak,
            o.extra,
            o.handoff_hits,
            o.finish.as_secs_f64()
        );
    }
    let direct = &outcomes[0];
    let handoff = &outcomes[2];
    println!(
        "handoff peak / direct peak = {:.3} (target < 0.2)",
        handoff.peak as f64 / direct.peak.max(1) as f64
    );

    let lines: Vec<chart::Line> = outcomes
        .iter()
        .zip(chart::COLORS)
        .map(|(o, color)| chart::Line {
            label: o.way.label(settings.steps),
            color,
            points: o
                .series
                .iter()
                .enumerate()
                .map(|(i, &n)| {
                    let at = (i as f64 - o.change_bucket as f64) * BUCKET.as_secs_f64();
                    (at, n)
                })
                .collect(),
        })
        .collect();
    if let Some(dir) = chart_path.parent() {
        std::fs::create_dir_all(dir).expect("chart directory");
    }
    chart::draw(
        &chart_path,
        "Backing-store reads while a 5th memcached node joins 4",
        &lines,
    )
    .unwrap_or_else(|e| fail(format!("chart: {e}")));
    println!("chart: {}", chart_path.display());

    let failure = if let Some(o) = outcomes.iter().find(|o| o.errors > 0) {
        Some(format!(
            "{} cache requests failed in the {} run",
            o.errors,
            o.way.name()
        ))
    } else if outcomes.iter().any(|o| o.fingerprint != direct.fingerprint) {
        Some("the three ways ended with different placements".to_owned())
    } else if handoff.peak * 5 >= direct.peak {
        Some("the handoff run's peak is not below a fifth of the direct change's".to_owned())
    } else {
        None
    };
    if let Some(failure) = failure {
        fail(failure);
    }
}
