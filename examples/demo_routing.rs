//! The client library end to end, as `examples/demo.sh` runs it: route
//! 100,000 keys and record each key's owner, wait (on the client's event
//! stream, without polling and without restarting) for the client to apply
//! the next version, route the same keys again and show what moved.
//!
//! ```sh
//! cargo run --release --no-default-features --features client --example demo_routing -- \
//!     <server URL> <ring> [keys]
//! ```
//!
//! After it prints `ready at version N` it waits up to 60 s for a newer
//! version. It exits with status 1 if the share of keys that moved is not
//! within 0.15–0.25 (one node added to four moves about 1/5), if any key
//! moved to a node that is not new in that version, or if the client did
//! not switch to it.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::time::{Duration, Instant};

use ringd::client::{RingClient, RingEvent, VersionChange};
use ringd::placement::NodeId;
use tokio::sync::broadcast::error::RecvError;

/// Accepted range of the measured moved share.
const MOVED_RANGE: (f64, f64) = (0.15, 0.25);

fn key(i: usize) -> String {
    format!("user:{i:08}")
}

fn fail(msg: impl std::fmt::Display) -> ! {
    eprintln!("demo_routing: FAIL: {msg}");
    std::process::exit(1);
}

fn print_counts(owners: &[NodeId]) {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for o in owners {
        *counts.entry(o.as_str()).or_default() += 1;
    }
    for (node, n) in counts {
        println!(
            "    {node:<10} {n:>7} keys  {:>5.1}%",
            100.0 * n as f64 / owners.len() as f64
        );
    }
}

/// Waits on the event stream for the first version after `after`.
async fn next_version(
    events: &mut tokio::sync::broadcast::Receiver<RingEvent>,
    after: u64,
) -> VersionChange {
    loop {
        match events.recv().await {
            Ok(RingEvent::Applied(change)) if change.to > after => return change,
            Ok(RingEvent::Applied(_)) => {} // the version already held
            Ok(RingEvent::Rejected { version, error }) => {
                println!("  (version {version} refused by the client: {error})")
            }
            Ok(RingEvent::Deleted) => fail("the ring was deleted"),
            Err(RecvError::Lagged(n)) => fail(format!("missed {n} events")),
            Err(RecvError::Closed) => fail("the client stopped"),
        }
    }
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(url), Some(ring)) = (args.next(), args.next()) else {
        eprintln!("usage: demo_routing <server URL> <ring> [keys]");
        std::process::exit(2);
    };
    let keys: usize = args
        .next()
        .map_or(100_000, |k| k.parse().expect("keys: a number"));

    let client = RingClient::builder(&[url.as_str()], &ring)
        .client_id("demo-routing")
        .start()
        .unwrap_or_else(|e| fail(e));
    // Subscribed before the first version arrives: no version is missed.
    let mut events = client.subscribe();
    let view = client
        .ready(Duration::from_secs(10))
        .await
        .unwrap_or_else(|e| fail(format!("no version of `{ring}`: {e}")));
    let mut router = client.router();

    let started = Instant::now();
    let before: Vec<NodeId> = (0..keys)
        .map(|i| match router.owner(key(i).as_bytes()) {
            Some(node) => node.id.clone(),
            None => fail("the ring has no active node"),
        })
        .collect();
    let v0 = router.version().expect("a version");
    println!(
        "client: routed {keys} keys on version {v0} ({} nodes) in {:.1} ms",
        view.placement().nodes().len(),
        started.elapsed().as_secs_f64() * 1e3
    );
    print_counts(&before);
    println!("ready at version {v0}");
    let _ = std::io::stdout().flush();

    // No polling and no restart: the client's watch applies the version
    // and the event stream says so.
    let change =
        match tokio::time::timeout(Duration::from_secs(60), next_version(&mut events, v0)).await {
            Ok(c) => c,
            Err(_) => fail("no new version within 60 s"),
        };
    let waited = Instant::now();
    let routed_on = router.version();
    println!(
        "client: event Applied {} -> {} received; the Router now routes on version {}",
        change.from.map_or("none".into(), |v| v.to_string()),
        change.to,
        routed_on.map_or("none".into(), |v| v.to_string())
    );
    if routed_on.is_none_or(|v| v < change.to) {
        fail("the router did not switch to the applied version");
    }
    let Some(diff) = &change.diff else {
        fail("the event carries no diff summary")
    };

    // Nodes that own keys now and did not before.
    let old_nodes: BTreeSet<&NodeId> = view.placement().nodes().iter().map(|n| &n.id).collect();
    let new_nodes: BTreeSet<NodeId> = change
        .view
        .placement()
        .nodes()
        .iter()
        .filter(|n| !old_nodes.contains(&n.id))
        .map(|n| n.id.clone())
        .collect();

    let after: Vec<NodeId> = (0..keys)
        .map(|i| match router.owner(key(i).as_bytes()) {
            Some(node) => node.id.clone(),
            None => fail("the ring has no active node"),
        })
        .collect();
    let mut moved = 0usize;
    let mut moved_elsewhere = 0usize;
    for (b, a) in before.iter().zip(&after) {
        if a != b {
            moved += 1;
            if !new_nodes.contains(a) {
                moved_elsewhere += 1;
            }
        }
    }
    let share = moved as f64 / keys as f64;
    let ideal = 1.0 / change.view.placement().nodes().len() as f64;
    println!(
        "client: re-routed {keys} keys on version {} in {:.1} ms",
        change.to,
        waited.elapsed().as_secs_f64() * 1e3
    );
    print_counts(&after);
    println!(
        "  new node(s):                 {:?} (diff summary: added {:?})",
        new_nodes.iter().map(|n| n.as_str()).collect::<Vec<_>>(),
        diff.added.iter().map(|n| n.as_str()).collect::<Vec<_>>()
    );
    println!("  keys moved:                  {moved} of {keys}");
    println!("  measured moved share:        {share:.4}");
    println!(
        "  ideal (1/{} nodes):           {ideal:.4}",
        change.view.placement().nodes().len()
    );
    println!(
        "  diff summary moved_fraction: {:.4} (exact, over the whole keyspace)",
        diff.moved_fraction
    );
    println!("  keys moved to an old node:   {moved_elsewhere}");

    let mut ok = true;
    if !(MOVED_RANGE.0..=MOVED_RANGE.1).contains(&share) {
        eprintln!(
            "demo_routing: FAIL: moved share {share:.4} is outside {}–{}",
            MOVED_RANGE.0, MOVED_RANGE.1
        );
        ok = false;
    }
    if moved_elsewhere > 0 {
        eprintln!("demo_routing: FAIL: {moved_elsewhere} keys moved to a node that is not new");
        ok = false;
    }
    if new_nodes.is_empty() {
        eprintln!("demo_routing: FAIL: the new version adds no node");
        ok = false;
    }
    if !ok {
        std::process::exit(1);
    }
    println!(
        "OK: the client followed version {v0} -> {} by itself; only keys for the new node moved",
        change.to
    );
}
