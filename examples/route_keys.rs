//! Keeps a ring's placement in sync with the client library and routes
//! keys with it: waits for the ring, routes a sample of keys and prints how
//! many each node owns, then, on every version the client applies, prints
//! the version, the moved fraction and the new counts.
//!
//! ```sh
//! cargo run --release --no-default-features --features client --example route_keys -- \
//!     [--keys N] [--mode auto|sse|long-poll] <ring> [server URL ...]
//! ```
//!
//! The servers default to `RINGD_ADDR` (a comma-separated list), else
//! `http://127.0.0.1:7420`; the token comes from `RINGD_TOKEN` (the read
//! token is enough) or `--token`. Stop it with Ctrl-C.

use std::collections::BTreeMap;
use std::time::Duration;

use ringd::client::{RingClient, RingEvent, RingView, WatchMode};
use tokio::sync::broadcast::error::RecvError;

const USAGE: &str =
    "usage: route_keys [--keys N] [--mode auto|sse|long-poll] [--token T] <ring> [server URL ...]";

struct Args {
    ring: String,
    urls: Vec<String>,
    token: Option<String>,
    keys: usize,
    mode: WatchMode,
}

fn parse_args() -> Result<Args, String> {
    let mut ring = None;
    let mut urls = Vec::new();
    let mut token = std::env::var("RINGD_TOKEN").ok().filter(|t| !t.is_empty());
    let mut keys = 10_000;
    let mut mode = WatchMode::Auto;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "-h" | "--help" => return Err(USAGE.into()),
            "--keys" => {
                keys = value("--keys")?
                    .parse()
                    .map_err(|e| format!("--keys: {e}"))?
            }
            "--token" => token = Some(value("--token")?),
            "--mode" => {
                mode = match value("--mode")?.as_str() {
                    "auto" => WatchMode::Auto,
                    "sse" => WatchMode::Sse,
                    "long-poll" => WatchMode::LongPoll,
                    other => return Err(format!("unknown mode `{other}`\n{USAGE}")),
                }
            }
            flag if flag.starts_with("--") => {
                return Err(format!("unknown option {flag}\n{USAGE}"))
            }
            _ if ring.is_none() => ring = Some(arg),
            _ => urls.push(arg),
        }
    }
    let ring = ring.ok_or_else(|| USAGE.to_string())?;
    if urls.is_empty() {
        urls.push(
            std::env::var("RINGD_ADDR")
                .ok()
                .filter(|a| !a.is_empty())
                .unwrap_or_else(|| "http://127.0.0.1:7420".into()),
        );
    }
    Ok(Args {
        ring,
        urls,
        token,
        keys,
        mode,
    })
}

/// The sample of keys routed at every version.
fn key(i: usize) -> String {
    format!("user:{i:08}")
}

/// Keys per node of `view`, every active node included (with 0 if it got
/// none of the sample).
fn counts(view: &RingView, keys: usize) -> BTreeMap<String, usize> {
    let mut counts: BTreeMap<String, usize> = view
        .placement()
        .nodes()
        .iter()
        .map(|n| (n.id.to_string(), 0))
        .collect();
    for i in 0..keys {
        if let Some(node) = view.owner(key(i).as_bytes()) {
            *counts.entry(node.id.to_string()).or_default() += 1;
        }
    }
    counts
}

fn print_counts(counts: &BTreeMap<String, usize>, keys: usize) {
    if counts.is_empty() {
        println!("  (no active node: no key has an owner)");
    }
    for (node, n) in counts {
        println!(
            "  {node:<24} {n:>8} keys  {:>5.1}%",
            100.0 * *n as f64 / keys.max(1) as f64
        );
    }
}

#[tokio::main]
async fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let mut builder = RingClient::builder(&args.urls, &args.ring).watch_mode(args.mode);
    if let Some(t) = &args.token {
        builder = builder.token(t);
    }
    let client = match builder.start() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("route_keys: {e}");
            std::process::exit(2);
        }
    };
    // Subscribe before the first version arrives, so no version is missed.
    let mut events = client.subscribe();

    println!(
        "waiting for ring `{}` on {}",
        args.ring,
        args.urls.join(",")
    );
    let view = loop {
        match client.ready(Duration::from_secs(10)).await {
            Ok(view) => break view,
            Err(e) => {
                let status = client.status();
                eprintln!(
                    "still waiting ({e}); last error: {}",
                    status.last_error.as_deref().unwrap_or("none")
                );
            }
        }
    };

    // A Router is what a request handler would keep: one atomic load per
    // lookup tells it whether the client swapped in a newer version.
    let mut router = client.router();
    let mut initial: BTreeMap<String, usize> = view
        .placement()
        .nodes()
        .iter()
        .map(|n| (n.id.to_string(), 0))
        .collect();
    for i in 0..args.keys {
        if let Some(node) = router.owner(key(i).as_bytes()) {
            *initial.entry(node.id.to_string()).or_default() += 1;
        }
    }
    let mut shown = router.version().unwrap_or(view.version());
    println!(
        "version {shown} ({} active nodes, fingerprint {}): {} keys",
        view.placement().nodes().len(),
        view.fingerprint(),
        args.keys
    );
    print_counts(&initial, args.keys);

    loop {
        match events.recv().await {
            Ok(RingEvent::Applied(change)) => {
                if change.to <= shown && !change.reset {
                    continue; // the version already shown above
                }
                shown = change.to;
                let moved = match &change.diff {
                    Some(d) => {
                        let mut s = format!("{:.2}% of keys moved", 100.0 * d.moved_fraction);
                        if !d.added.is_empty() {
                            s.push_str(&format!(", added {:?}", names(&d.added)));
                        }
                        if !d.removed.is_empty() {
                            s.push_str(&format!(", removed {:?}", names(&d.removed)));
                        }
                        s
                    }
                    None => "no previous version to compare".into(),
                };
                let from = change.from.map_or("none".into(), |v| v.to_string());
                let reset = if change.reset { " (reset)" } else { "" };
                println!("version {from} -> {}{reset}: {moved}", change.to);
                // Count on the view this event applied, so the figures
                // match the version printed even if a newer one is in.
                print_counts(&counts(&change.view, args.keys), args.keys);
            }
            Ok(RingEvent::Rejected { version, error }) => {
                println!("version {version} refused, still routing on {shown}: {error}");
            }
            Ok(RingEvent::Deleted) => {
                println!("ring deleted; still routing on version {shown} until it is recreated");
            }
            Err(RecvError::Lagged(n)) => {
                println!(
                    "missed {n} events; routing on version {:?}",
                    router.version()
                );
            }
            Err(RecvError::Closed) => {
                eprintln!("route_keys: the client stopped");
                std::process::exit(1);
            }
        }
    }
}

fn names(ids: &[ringd::placement::NodeId]) -> Vec<String> {
    ids.iter().map(|id| id.to_string()).collect()
}
