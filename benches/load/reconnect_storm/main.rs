//! Reconnect storm: N followers of one ringd instance, built with one of
//! ringd's clients (Rust, Go, JavaScript or Python) and its own backoff,
//! lose the instance to `kill -9`; it is started again at once on the same
//! port and data, and a change is made to every ring. The run measures,
//! for each of `--kills` rounds, how long from the kill until every
//! follower routes on the newest version, and what the restarted server
//! answered meanwhile (a 5xx other than a watch refused at capacity, or an
//! error in its log, fails the run).
//!
//! ```sh
//! benches/load/reconnect_storm.sh --followers 10000 --client go
//! benches/load/reconnect_storm.sh --followers 10000 --client rust --protocol long-poll
//! ```
//!
//! The followers run in a child process (fleet.rs); the server is the real
//! `target/release/ringd` on a SQLite file, or on a one-member etcd.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand, ValueEnum};
use tempfile::TempDir;

#[allow(dead_code, reason = "a load tool uses only the launchers")]
#[path = "../../../tests/support"]
mod support {
    pub(crate) mod api;
    pub(crate) mod client;
    pub(crate) mod etcd;
    pub(crate) mod ringd;
}
mod fleet;
mod rust_followers;

use fleet::{Fleet, Language};
use support::api::TestApi;
use support::etcd::Etcd;
use support::ringd::{Ringd, Server};

/// Nodes in each ring.
const NODES: usize = 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Store {
    Sqlite,
    Etcd,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Protocol {
    Sse,
    LongPoll,
}

#[derive(Parser, Debug)]
struct Cli {
    #[command(subcommand)]
    followers: Option<Sub>,
    #[command(flatten)]
    args: Args,
}

#[derive(Subcommand, Debug)]
enum Sub {
    /// Runs the Rust client's followers (spawned by the storm itself).
    #[command(hide = true)]
    Followers(rust_followers::Followers),
}

/// A reconnect storm against one ringd instance.
#[derive(clap::Args, Debug)]
struct Args {
    /// The client the followers are built with.
    #[arg(long, value_enum, default_value_t = Language::Rust)]
    client: Language,
    /// Followers in all.
    #[arg(long, default_value_t = 1000)]
    followers: usize,
    /// Rings they are spread over (follower i follows ring i mod R).
    #[arg(long, default_value_t = 1)]
    rings: usize,
    /// How the followers watch.
    #[arg(long, value_enum, default_value_t = Protocol::Sse)]
    protocol: Protocol,
    /// The store ringd runs on.
    #[arg(long, value_enum, default_value_t = Store::Sqlite)]
    store: Store,
    /// Kills (and restarts) of the instance.
    #[arg(long, default_value_t = 3)]
    kills: usize,
    /// How long the instance stays down after each kill (milliseconds).
    #[arg(long, default_value_t = 0)]
    downtime_ms: u64,
    /// `--max-watchers` for the server; its default when not given.
    #[arg(long)]
    max_watchers: Option<u64>,
    /// How long every follower may take to be back on the newest
    /// version before the run counts it as failed (seconds).
    #[arg(long, default_value_t = 60)]
    deadline: u64,
}

/// The server, restarted on the same port and data.
struct Instance {
    store: Store,
    data: TempDir,
    etcd: Option<Etcd>,
    extra: Vec<String>,
    server: Server,
}

impl Instance {
    fn launcher(store: Store, data: &TempDir, etcd: Option<&Etcd>, extra: &[String]) -> Ringd {
        let ringd = match (store, etcd) {
            (Store::Etcd, Some(etcd)) => Ringd::on(&etcd.store_url()),
            _ => Ringd::sqlite_in(data.path()),
        };
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        ringd.args(&extra)
    }

    fn start(store: Store, etcd: Option<Etcd>, extra: Vec<String>) -> Self {
        let data = TempDir::new().expect("data directory");
        let server = Self::launcher(store, &data, etcd.as_ref(), &extra).start();
        Self {
            store,
            data,
            etcd,
            extra,
            server,
        }
    }

    fn url(&self) -> String {
        self.server.url.clone()
    }

    /// `kill -9`, `downtime`, and a start on the same port: when the new
    /// process was listening.
    fn crash_and_restart(&mut self, downtime: Duration) -> Instant {
        self.server.kill();
        std::thread::sleep(downtime);
        let addr = self.server.url.trim_start_matches("http://").to_owned();
        let ringd = Self::launcher(self.store, &self.data, self.etcd.as_ref(), &self.extra);
        self.server = ringd.args(&["--listen", &addr]).start();
        Instant::now()
    }
}

/// What the restarted server answered, by status, from its `/metrics`.
fn answers(metrics: &str) -> BTreeMap<u16, u64> {
    let mut by_status = BTreeMap::new();
    for line in metrics.lines() {
        let Some(rest) = line.strip_prefix("ringd_http_requests_total{") else {
            continue;
        };
        let status = rest
            .split("status=\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .and_then(|s| s.parse::<u16>().ok());
        let count = rest.rsplit(' ').next().and_then(|c| c.parse::<u64>().ok());
        if let (Some(status), Some(count)) = (status, count) {
            *by_status.entry(status).or_default() += count;
        }
    }
    by_status
}

/// Nearest-rank percentile of sorted `d`.
fn pct(d: &[Duration], p: f64) -> Duration {
    let rank = ((p * d.len() as f64).ceil() as usize).clamp(1, d.len().max(1));
    d.get(rank - 1).copied().unwrap_or_default()
}

/// A value as its flag spells it (`long-poll`, `js`), for the table.
fn flag<T: ValueEnum>(v: T) -> String {
    v.to_possible_value()
        .map_or_else(String::new, |p| p.get_name().to_owned())
}

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

fn storm(args: &Args) -> bool {
    raise_open_files();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let etcd = (args.store == Store::Etcd).then(|| rt.block_on(Etcd::start()));
    let extra = args
        .max_watchers
        .map(|m| vec!["--max-watchers".to_owned(), m.to_string()])
        .unwrap_or_default();
    let mut instance = Instance::start(args.store, etcd, extra);
    let rings: Vec<String> = (0..args.rings).map(|i| format!("bench-{i:03}")).collect();
    let api = |url: &str| TestApi::new(url, "");
    let mut versions = Vec::new();
    for ring in &rings {
        let ids: Vec<String> = (0..NODES).map(|i| format!("node-{i:02}")).collect();
        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
        versions.push(rt.block_on(api(&instance.url()).ring_with(ring, &ids)));
    }

    let started = Instant::now();
    let mut fleet = Fleet::start(
        args.client,
        &instance.url(),
        &rings,
        args.followers,
        args.protocol == Protocol::LongPoll,
        instance.data.path(),
    );
    let deadline = Duration::from_secs(args.deadline);
    let Some(_) = fleet.wait_all(&versions, deadline) else {
        eprintln!(
            "only {} of {} followers came up within {} s; their log: {}",
            fleet.on(&versions),
            args.followers,
            args.deadline,
            fleet.log.display()
        );
        return false;
    };
    eprintln!(
        "{} {} followers on their rings' version in {}",
        args.followers,
        flag(args.client),
        secs(started.elapsed())
    );

    println!("| client | watch | store | rings × followers | kill | restarted after | all on the newest version after | followers back p50 / p99 | server answers (status: count) | log errors | CPU: server, followers |");
    println!("|---|---|---|---|---:|---:|---:|---:|---|---:|---:|");
    let mut ok = true;
    for kill in 1..=args.kills {
        // Settled: the acks and watchers of the round before are in.
        std::thread::sleep(Duration::from_secs(1));
        let killed = Instant::now();
        let log_before = instance.server.log().len();
        let fleet_cpu = fleet.cpu();
        let up = instance.crash_and_restart(Duration::from_millis(args.downtime_ms));
        let server = api(&instance.url());
        for (r, ring) in rings.iter().enumerate() {
            let change = server.for_ring(ring);
            versions[r] = rt.block_on(change.upsert(&format!("extra-{kill:03}"), 1));
        }
        let Some(arrivals) = fleet.wait_all(&versions, deadline) else {
            eprintln!(
                "kill {kill}: {} of {} followers on the newest version after {} s; their log: {}",
                fleet.on(&versions),
                args.followers,
                args.deadline,
                fleet.log.display()
            );
            return false;
        };
        let mut back: Vec<Duration> = arrivals.iter().map(|a| a.duration_since(killed)).collect();
        back.sort();
        let metrics = rt.block_on(async { server.get("/metrics").await.text().await });
        let by_status = answers(&metrics.expect("metrics"));
        let cpu = (
            fleet::cpu_of(instance.server.pid()),
            fleet.cpu().saturating_sub(fleet_cpu),
        );
        let log = instance.server.log();
        let errors: Vec<&str> = log
            .get(log_before.min(log.len())..)
            .unwrap_or("")
            .lines()
            .filter(|l| l.contains(" ERROR ") || l.contains(" WARN "))
            .collect();
        for line in errors.iter().take(3) {
            eprintln!("kill {kill}, the server logged: {line}");
        }
        let errors = errors.len();
        let failing = by_status
            .iter()
            .any(|(&status, _)| status >= 500 && status != 503);
        ok &= !failing && errors == 0;
        let summary: Vec<String> = by_status.iter().map(|(s, n)| format!("{s}: {n}")).collect();
        println!(
            "| {} | {} | {} | {} × {} | {kill} | {} | {} | {} / {} | {} | {errors} | {}, {} |",
            flag(args.client),
            flag(args.protocol),
            flag(args.store),
            args.rings,
            args.followers / args.rings,
            secs(up.duration_since(killed)),
            secs(pct(&back, 1.0)),
            secs(pct(&back, 0.5)),
            secs(pct(&back, 0.99)),
            summary.join(", "),
            secs(cpu.0),
            secs(cpu.1),
        );
    }
    // A 503 is a watch refused at the cap, which the clients are to
    // honour; any other 5xx, or an error logged, is the server overloaded.
    ok
}

/// Raises the soft open-file limit to the hard one, for the followers'
/// process (which inherits it) and the server.
fn raise_open_files() {
    let (_, hard) = rlimit::Resource::NOFILE.get().expect("RLIMIT_NOFILE");
    rlimit::Resource::NOFILE
        .set(hard, hard)
        .expect("raise the soft limit");
}

fn main() {
    let cli = Cli::parse();
    if let Some(Sub::Followers(f)) = cli.followers {
        return rust_followers::run(f);
    }
    let args = cli.args;
    assert!(
        args.followers >= args.rings && args.rings >= 1,
        "every ring needs a follower"
    );
    eprintln!("{args:?}");
    if !storm(&args) {
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_summed_by_status() {
        let text = "# HELP ringd_http_requests_total x\n\
            ringd_http_requests_total{route=\"/v1/rings/{ring}/watch\",method=\"GET\",status=\"200\"} 7\n\
            ringd_http_requests_total{route=\"/v1/rings/{ring}/acks\",method=\"POST\",status=\"200\"} 3\n\
            ringd_http_requests_total{route=\"/v1/rings/{ring}/watch\",method=\"GET\",status=\"503\"} 2\n\
            ringd_http_request_duration_seconds_count{route=\"/\",method=\"GET\",status=\"200\"} 9\n";
        assert_eq!(answers(text), BTreeMap::from([(200, 10), (503, 2)]));
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let d: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        assert_eq!(pct(&d, 0.5), Duration::from_millis(50));
        assert_eq!(pct(&d, 0.99), Duration::from_millis(99));
        assert_eq!(pct(&d, 1.0), Duration::from_millis(100));
        assert_eq!(pct(&[], 0.5), Duration::ZERO);
    }
}
