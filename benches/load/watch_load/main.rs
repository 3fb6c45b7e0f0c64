//! Watcher load: N watchers of one ringd instance, spread over R rings,
//! all connecting at once (a connect storm), then a series of single-node
//! changes, all on loopback. It measures how long the storm takes until
//! every watcher is streaming (SSE) or parked (long-poll), the server's
//! resident memory per idle watcher, and for each change the time from the
//! write's HTTP response until the last watcher of that ring has it.
//!
//! It starts `target/release/ringd` itself (and, with `--store etcd`, a
//! one-member etcd), so build the binary first, and run it through
//! `benches/load/watch_load.sh`, which raises the open-file limits:
//!
//! ```sh
//! benches/load/watch_load.sh --watchers 100000 --rings 100 --store etcd
//! benches/load/watch_load.sh --watchers 10000 --protocol long-poll
//! ```
//!
//! The mode defaults to `light` (version, fingerprint and change summary);
//! `--mode full` sends the whole snapshot of the 20-node ring in every
//! event. `--batch 500` connects 500 at a time instead of all at once.

use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};

// The launchers the tests use; the tools use none of the assertions.
#[allow(dead_code, reason = "a load tool uses only the launchers")]
#[path = "../../../tests/support"]
mod support {
    pub(crate) mod api;
    pub(crate) mod client;
    pub(crate) mod etcd;
    pub(crate) mod ringd;
}
mod arrivals;
mod connect;
mod long_poll;
mod server;
mod sse;

use arrivals::Arrivals;
use connect::Target;
use server::Bench;
use sse::Who;

/// Nodes in each ring before the changes start.
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

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Mode {
    Light,
    Full,
}

/// Watcher load on one ringd instance.
#[derive(Parser, Debug)]
struct Args {
    /// Watchers in all.
    #[arg(long, default_value_t = 1000)]
    watchers: usize,
    /// Rings they are spread over (watcher i watches ring i mod R).
    #[arg(long, default_value_t = 1)]
    rings: usize,
    /// The store ringd runs on.
    #[arg(long, value_enum, default_value_t = Store::Sqlite)]
    store: Store,
    /// SSE watch streams or long-polls.
    #[arg(long, value_enum, default_value_t = Protocol::Sse)]
    protocol: Protocol,
    /// The SSE event detail.
    #[arg(long, value_enum, default_value_t = Mode::Light)]
    mode: Mode,
    /// Single-node changes made after the storm, over the rings in turn.
    #[arg(long, default_value_t = 30)]
    changes: usize,
    /// Watchers connecting at a time; 0 connects all at once.
    #[arg(long, default_value_t = 0)]
    batch: usize,
    /// How long the storm, and each change, may take before the run
    /// counts the rest as failed or missed (seconds).
    #[arg(long, default_value_t = 120)]
    deadline: u64,
}

/// One run's figures.
struct Report {
    connect: Option<Duration>,
    first_p50: Duration,
    first_p99: Duration,
    rss_before: u64,
    rss_after: u64,
    latencies: Vec<Duration>,
    clamped: usize,
    missed: usize,
}

/// Waits until `done()` or the deadline; whether it was done.
async fn wait_until(deadline: Duration, mut done: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + deadline;
    while !done() {
        if Instant::now() > until {
            return false;
        }
        // Polling costs the driver nothing it measures: arrival times are
        // stamped by the watchers themselves.
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    true
}

/// Starts watcher `who` of the run.
fn spawn(
    rt: &tokio::runtime::Handle,
    args: &Args,
    target: &Arc<Target>,
    who: usize,
    after: u64,
    arrivals: &Arc<Arrivals>,
) -> tokio::task::JoinHandle<()> {
    let who = Who(who, who % args.rings);
    let (target, arrivals) = (target.clone(), arrivals.clone());
    match args.protocol {
        Protocol::Sse => {
            let mode = match args.mode {
                Mode::Light => "light",
                Mode::Full => "full",
            };
            rt.spawn(sse::watcher(target, who, mode, arrivals))
        }
        Protocol::LongPoll => rt.spawn(long_poll::watcher(target, who, after, arrivals)),
    }
}

/// Opens `n` watchers (all at once, or `batch` at a time) and returns
/// their tasks and how long until every one was streaming or parked.
async fn storm(
    rt: &tokio::runtime::Handle,
    args: &Args,
    bench: &Bench,
    target: &Arc<Target>,
    n: usize,
    v0: u64,
    arrivals: &Arc<Arrivals>,
) -> (Vec<tokio::task::JoinHandle<()>>, Option<Duration>) {
    let t = Instant::now();
    let deadline = Duration::from_secs(args.deadline);
    let batch = if args.batch == 0 { n } else { args.batch };
    let mut tasks = Vec::with_capacity(n);
    let mut all = true;
    while tasks.len() < n && all {
        for _ in 0..batch.min(n - tasks.len()) {
            tasks.push(spawn(rt, args, target, tasks.len(), v0, arrivals));
        }
        let want = tasks.len();
        all = match args.protocol {
            Protocol::Sse => {
                wait_until(deadline, || Arrivals::count(&arrivals.answering) >= want).await
            }
            Protocol::LongPoll => bench.wait_parked(want as u64, deadline).await,
        };
    }
    (tasks, all.then(|| t.elapsed()))
}

async fn run(rt: &tokio::runtime::Handle, args: &Args) -> Report {
    let bench = Bench::start(args.store, args.watchers).await;
    let rings: Vec<String> = (0..args.rings).map(|i| format!("bench-{i:03}")).collect();
    let v0 = bench.create_rings(&rings, NODES).await;
    let target = Arc::new(Target::new(&bench.addr(), args.watchers, rings.clone()));

    // Warm-up, so the baseline includes the runtime's and the allocator's
    // start-up costs rather than charging them to the first watchers.
    let warm = Arc::new(Arrivals::new(args.rings, v0, 1, 50));
    for t in storm(rt, args, &bench, &target, 50.min(args.watchers), v0, &warm)
        .await
        .0
    {
        t.abort();
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_before = bench.rss();

    let per_ring = args.changes.div_ceil(args.rings);
    let arrivals = Arc::new(Arrivals::new(args.rings, v0, per_ring + 1, args.watchers));
    let (tasks, connect) = storm(rt, args, &bench, &target, args.watchers, v0, &arrivals).await;
    if connect.is_none() {
        eprintln!(
            "the storm did not settle within {} s: {} of {} watchers answering, {} connection errors, {} refusals",
            args.deadline,
            Arrivals::count(&arrivals.answering),
            args.watchers,
            Arrivals::count(&arrivals.errors),
            Arrivals::count(&arrivals.refusals),
        );
    }
    let firsts = arrivals.first_answers();
    let pct = |p: f64| {
        firsts
            .get(((p * firsts.len() as f64).ceil() as usize).clamp(1, firsts.len().max(1)) - 1)
            .map_or(Duration::ZERO, |&n| Duration::from_nanos(n))
    };
    let (first_p50, first_p99) = (pct(0.50), pct(0.99));
    // Idle: no change and no keep-alive (15 s) is due yet.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let rss_after = bench.rss();

    let (mut latencies, mut clamped, mut missed) = (Vec::new(), 0, 0);
    for j in 0..args.changes {
        let ring = j % args.rings;
        let watching = (args.watchers + args.rings - 1 - ring) / args.rings;
        let version = bench.change(&rings[ring], j).await;
        // The response body has been read in full by now.
        let t_response = arrivals.now();
        assert_eq!(
            version,
            v0 + 1 + (j / args.rings) as u64,
            "one version per change"
        );
        let deadline = Duration::from_secs(args.deadline.min(10));
        if !wait_until(deadline, || arrivals.had(ring, version) >= watching).await {
            let had = arrivals.had(ring, version);
            eprintln!(
                "{} version {version}: {} of {watching} watchers missed it",
                rings[ring],
                watching - had
            );
            missed += watching - had;
        }
        let last = arrivals.last(ring, version);
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
    let (resets, gaps, errors, refusals) = (
        Arrivals::count(&arrivals.resets),
        Arrivals::count(&arrivals.gaps),
        Arrivals::count(&arrivals.errors),
        Arrivals::count(&arrivals.refusals),
    );
    if resets + gaps + errors + refusals > 0 {
        eprintln!("{resets} resets, {gaps} gaps, {errors} failed connections, {refusals} refusals");
    }
    latencies.sort();
    Report {
        connect,
        first_p50,
        first_p99,
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
    let args = Args::parse();
    assert!(
        args.watchers >= 1 && args.rings >= 1,
        "at least one watcher and one ring"
    );
    assert!(args.rings <= args.watchers, "every ring needs a watcher");
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
    eprintln!("{args:?}");
    let r = driver.block_on(run(watchers.handle(), &args));

    let l = &r.latencies;
    // Nearest rank: with 30 changes the p99 is the slowest one.
    let pct = |p: f64| {
        l.get(((p * l.len() as f64).ceil() as usize).clamp(1, l.len().max(1)) - 1)
            .copied()
            .unwrap_or_default()
    };
    let per = r.rss_after.saturating_sub(r.rss_before) as f64 / args.watchers as f64;
    let protocol = match (args.protocol, args.mode) {
        (Protocol::LongPoll, _) => "long-poll",
        (Protocol::Sse, Mode::Light) => "sse light",
        (Protocol::Sse, Mode::Full) => "sse full",
    };
    println!(
        "| store | watch | rings × watchers | all {} | first answer p50 / p99 | changes | fan-out p50 | p99 | max | missed | server RSS idle before → after | per idle watcher |",
        if args.protocol == Protocol::Sse { "streaming" } else { "parked" }
    );
    println!("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    println!(
        "| {:?} | {protocol} | {} × {} | {} | {} | {} | {} | {} | {} | {} | {:.1} → {:.1} MiB | {:.2} KiB |",
        args.store,
        args.rings,
        args.watchers / args.rings,
        r.connect.map_or("not all".to_owned(), |d| format!("{:.2} s", d.as_secs_f64())),
        if args.protocol == Protocol::Sse {
            format!("{} / {}", ms(r.first_p50), ms(r.first_p99))
        } else {
            "–".to_owned()
        },
        l.len(),
        ms(pct(0.50)),
        ms(pct(0.99)),
        ms(l.last().copied().unwrap_or_default()),
        r.missed,
        r.rss_before as f64 / 1048576.0,
        r.rss_after as f64 / 1048576.0,
        per / 1024.0
    );
    if r.clamped > 0 {
        println!(
            "  ({} changes reached every watcher before the response; counted as 0 ms)",
            r.clamped
        );
    }
    if r.connect.is_none() || r.missed > 0 {
        std::process::exit(1);
    }
}
