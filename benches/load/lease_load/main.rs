//! Lease benchmark: many self-registered nodes renewing their leases
//! against running ringd instances, the cost of that on the servers, and
//! the time from a node's death until the version that drains it.
//!
//! Unlike the other load tools it starts no server: it is pointed at
//! running instances (`benches/load/lease_load.sh` starts one ringd on
//! SQLite, or an etcd and two ringd on it, and runs this). It
//!
//! 1. creates the ring (asking for the `drain_after` policy when
//!    `--drain-after` is given) and adds every node in a few batched
//!    changes of `--batch` upserts each;
//! 2. registers every node's lease with the record it already has, which
//!    must make no version;
//! 3. renews every lease every `--interval` (±10 % jitter, the first
//!    renewal at a random point of the first interval) over at most
//!    `--connections` renewals in flight (registrations have their own
//!    `--register-connections`), and after one interval of
//!    warm-up measures a steady phase of `--duration`: renewals/s, renew
//!    latency, errors by status, each `--pid`'s CPU and storage writes,
//!    and etcd's write counters (`--etcd-metrics`);
//! 4. stops renewing one node and times the version that drains it, when
//!    the ring has `drain_after`.
//!
//! ```sh
//! cargo build --release --example lease_load
//! target/release/examples/lease_load --url http://127.0.0.1:7070 --pid ringd=PID
//! ```

mod drain;
mod renewer;
mod setup;

#[path = "../../support/proc_stats.rs"]
mod proc_stats;
#[path = "../../support/prom_text.rs"]
mod prom_text;

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use clap::Parser;
use ringd::ring::durations::parse_duration;

use proc_stats::ProcSample;
use renewer::{Fleet, Route};
use setup::Api;

/// What the benchmark runs against, and how hard.
#[derive(Debug, Parser)]
#[command(about = "Lease renewal load against running ringd instances")]
pub(crate) struct Options {
    /// A ringd base URL; repeat for several instances.
    #[arg(long = "url", required = true)]
    urls: Vec<String>,
    /// `sticky`: node i always talks to URL i mod N; `rotate`: each request
    /// goes to the next URL, so a lease made through one instance is
    /// renewed through the others.
    #[arg(long, value_enum, default_value = "sticky")]
    route: Route,
    /// The ring; created if missing.
    #[arg(long, default_value = "leasebench")]
    ring: String,
    /// The placement algorithm of a ring this creates (the server's
    /// default when omitted).
    #[arg(long)]
    algorithm: Option<String>,
    /// Simulated nodes.
    #[arg(long, default_value_t = 10_000)]
    nodes: usize,
    /// How often each node renews.
    #[arg(long, default_value = "3s", value_parser = parse_duration)]
    interval: Duration,
    /// Each lease's TTL.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    ttl: Duration,
    /// The measured steady phase.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    duration: Duration,
    /// Upserts per set-up change (the etcd store refuses a change over
    /// etcd's `--max-txn-ops`, 128 by default: use 125 there).
    #[arg(long, default_value_t = 1_000)]
    batch: usize,
    /// Most renewals in flight, hence most of their HTTP connections.
    #[arg(long, default_value_t = 32)]
    connections: usize,
    /// Most registrations in flight (their own connections).
    #[arg(long, default_value_t = 4)]
    register_connections: usize,
    /// Bearer token for every request (the admin token).
    #[arg(long)]
    token: Option<String>,
    /// Ask for this `drain_after` in the ring's membership policy and time
    /// the drain of a node that stops renewing.
    #[arg(long)]
    drain_after: Option<String>,
    /// How long to wait for the drain after the victim's lease deadline
    /// and `drain_after` have passed.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    drain_timeout: Duration,
    /// A process to measure, `NAME=PID` or `PID`; repeatable.
    #[arg(long = "pid")]
    pids: Vec<String>,
    /// A file of the store (the SQLite database and its `-wal`) whose size
    /// and modification time are compared across the steady phase;
    /// repeatable.
    #[arg(long = "store-file")]
    store_files: Vec<std::path::PathBuf>,
    /// etcd's metrics URL (`http://127.0.0.1:2379/metrics`).
    #[arg(long)]
    etcd_metrics: Option<String>,
}

/// etcd's counters of writes and lease traffic: (label, metric, series).
const ETCD_COUNTERS: &[(&str, &str, Option<&str>)] = &[
    ("puts", "etcd_mvcc_put_total", None),
    ("txns", "etcd_mvcc_txn_total", None),
    (
        "raft proposals committed",
        "etcd_server_proposals_committed_total",
        None,
    ),
    (
        "WAL fsyncs",
        "etcd_disk_wal_fsync_duration_seconds_count",
        None,
    ),
    (
        "lease keep-alive messages",
        "grpc_server_msg_received_total",
        Some("grpc_method=\"LeaseKeepAlive\""),
    ),
    (
        "lease grants",
        "grpc_server_handled_total",
        Some("grpc_method=\"LeaseGrant\""),
    ),
];

/// `NAME=PID` or `PID`, as (name, pid).
fn named_pids(specs: &[String]) -> Vec<(String, String)> {
    specs
        .iter()
        .map(|s| match s.split_once('=') {
            Some((name, pid)) => (name.to_string(), pid.to_string()),
            None => (format!("pid {s}"), s.clone()),
        })
        .chain([("lease_load (this process)".to_string(), "self".to_string())])
        .collect()
}

fn proc_samples(pids: &[(String, String)]) -> Vec<Option<ProcSample>> {
    pids.iter()
        .map(|(name, pid)| {
            proc_stats::sample(pid)
                .map_err(|e| eprintln!("lease_load: {name}: {e}"))
                .ok()
        })
        .collect()
}

/// Each file's size and modification time, `None` for one that is missing.
fn file_states(paths: &[std::path::PathBuf]) -> Vec<Option<(u64, std::time::SystemTime)>> {
    paths
        .iter()
        .map(|p| {
            let m = std::fs::metadata(p).ok()?;
            Some((m.len(), m.modified().ok()?))
        })
        .collect()
}

async fn etcd_counters(api: &Api, url: &Option<String>) -> Option<BTreeMap<&'static str, f64>> {
    let text = api.text(url.as_deref()?).await?;
    Some(
        ETCD_COUNTERS
            .iter()
            .filter_map(|(label, name, series)| {
                Some((*label, prom_text::sum(&text, name, *series)?))
            })
            .collect(),
    )
}

#[tokio::main]
async fn main() {
    let o = Options::parse();
    let api = Api::new(&o);
    let pids = named_pids(&o.pids);
    let ticks = proc_stats::clock_ticks();
    println!(
        "lease benchmark: {} nodes, renew every {:?}, ttl {:?}, {} instance(s) ({:?}), \
         {} + {} connections, steady phase {:?}",
        o.nodes,
        o.interval,
        o.ttl,
        o.urls.len(),
        o.route,
        o.connections,
        o.register_connections,
        o.duration
    );

    let before_setup = proc_samples(&pids);
    let policy = api.create_ring(&o).await;
    let started = Instant::now();
    let versions = api.add_nodes(&o).await;
    println!(
        "set-up: ring at version {} after {} batched change(s) of up to {} nodes, {:.1} s",
        versions.1,
        versions.1 - versions.0,
        o.batch,
        started.elapsed().as_secs_f64()
    );

    let fleet = Fleet::start(&o, api.clone());
    let registered = fleet.wait_registered(o.nodes).await;
    let after_registration = api.version(0).await;
    println!(
        "registration: {} leases in {:.1} s, {} registration(s) answered `changed: true`, \
         ring version {} -> {}",
        o.nodes,
        registered.as_secs_f64(),
        fleet.shared.changed.load(Ordering::Relaxed),
        versions.1,
        after_registration
    );

    // One interval of renewals before measuring: every node has renewed
    // at least once, so the rate is the steady one.
    tokio::time::sleep(o.interval).await;
    let (f0, p0, e0, t0) = (
        file_states(&o.store_files),
        proc_samples(&pids),
        etcd_counters(&api, &o.etcd_metrics).await,
        Instant::now(),
    );
    tokio::time::sleep(o.duration).await;
    let (f1, p1, e1, t1) = (
        file_states(&o.store_files),
        proc_samples(&pids),
        etcd_counters(&api, &o.etcd_metrics).await,
        Instant::now(),
    );
    let after_steady = api.version(0).await;

    let drained = match (&policy, &o.drain_after) {
        (Ok(Some(drain_after)), _) => Some(drain::measure(&o, &api, &fleet, drain_after).await),
        _ => None,
    };
    let samples = fleet.stop().await;

    println!();
    renewer::report(&samples, t0, t1);
    println!(
        "ring version during the steady phase: {after_registration} -> {after_steady} \
         (heartbeats must make none)"
    );
    println!();
    println!("| process | CPU during steady phase (% of one core) | storage writes during set-up and registration | storage writes during steady phase |");
    println!("|---|---:|---:|---:|");
    for (i, (name, _)) in pids.iter().enumerate() {
        let (Some(s0), Some(a), Some(b)) = (&before_setup[i], &p0[i], &p1[i]) else {
            println!("| {name} | unreadable | | |");
            continue;
        };
        let setup = s0.until(a, ticks);
        let steady = a.until(b, ticks);
        println!(
            "| {name} | {:.1} % | {} bytes | {} bytes |",
            steady.cpu_percent, setup.write_bytes, steady.write_bytes
        );
    }
    if !o.store_files.is_empty() {
        println!();
        println!(
            "| store file | size at start of steady phase | at its end | modified during it |"
        );
        println!("|---|---:|---:|---|");
        for ((path, a), b) in o.store_files.iter().zip(&f0).zip(&f1) {
            let name = path
                .file_name()
                .map_or(path.display().to_string(), |n| n.to_string_lossy().into());
            match (a, b) {
                (Some((sa, ma)), Some((sb, mb))) => println!(
                    "| {name} | {sa} bytes | {sb} bytes | {} |",
                    if ma == mb { "no" } else { "yes" }
                ),
                _ => println!("| {name} | missing | | |"),
            }
        }
    }
    if let (Some(a), Some(b)) = (e0, e1) {
        let secs = t1.duration_since(t0).as_secs_f64();
        println!();
        println!("| etcd counter | during steady phase | per second |");
        println!("|---|---:|---:|");
        for (label, start) in &a {
            if let Some(end) = b.get(label) {
                println!(
                    "| {label} | {:.0} | {:.1} |",
                    end - start,
                    (end - start) / secs
                );
            }
        }
    } else if o.etcd_metrics.is_some() {
        println!("etcd metrics: could not be read");
    }
    println!();
    match (&policy, drained) {
        (Ok(Some(_)), Some(report)) => println!("{report}"),
        (Ok(None), _) => println!("death-to-drain: skipped (no --drain-after given)"),
        (Err(refusal), _) => println!(
            "death-to-drain: skipped: the server refused the drain_after policy: {refusal}"
        ),
        (Ok(Some(_)), None) => unreachable!("a policy always gets a drain measurement"),
    }
}
