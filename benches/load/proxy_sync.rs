//! Sync latency: how long from a change's commit until a real proxy kept
//! by `ringd sync` sends a moved key to its new owner.
//!
//! For each proxy (nginx, HAProxy, nutcracker) it sets up what
//! `tests/proxies` sets up (a ringd on SQLite, the proxy on loopback in
//! front of real backends, an agent with the proxy's own check and reload
//! commands, the reload waiting until nothing older answers), grows the
//! ring to 11 servers, then makes `changes` re-weights one after another.
//! For each, the clock starts when the `POST …/changes` is sent; the tool
//! picks a key that the new version moves (from both verified snapshots)
//! and sends it through the proxy on a new connection, over and over,
//! until the new owner answers. It waits for the agent's ack before the
//! next change. It prints p50, p99 and the maximum; for nutcracker, which
//! restarts for each version, also how long each restart refused
//! requests.
//!
//! ```sh
//! ./.ci/setup --test   # nginx, haproxy, nutcracker, memcached
//! cargo build --release && cargo run --release --example proxy_sync [changes] [nginx|haproxy|twemproxy]...
//! ```
//!
//! Defaults: 60 changes, every proxy. Only loopback addresses are used.

// The launchers and proxies the tests use; the tool uses none of the tests.
#[allow(dead_code, reason = "a load tool uses only the launcher and the agent")]
#[path = "../../tests/support"]
mod support {
    pub(crate) mod api;
    pub(crate) mod cli;
    pub(crate) mod client;
    pub(crate) mod ringd;
    pub(crate) mod sync_agent;
}

// The proxies' harness from tests/proxies, whole (its tests are compiled
// only into the test binary).
#[allow(
    dead_code,
    unused_imports,
    reason = "a load tool uses part of the harness"
)]
#[path = "../../tests/proxies"]
mod harness {
    pub(crate) mod backends;
    pub(crate) mod haproxy;
    pub(crate) mod haproxy_sync;
    pub(crate) mod loopback;
    pub(crate) mod nginx;
    pub(crate) mod nginx_sync;
    pub(crate) mod sync_cases;
    pub(crate) mod sync_driver;
    pub(crate) mod twemproxy;
    pub(crate) mod twemproxy_sync;
}

use std::time::{Duration, Instant};

use harness::sync_driver::{node, Proxy, Synced};

/// The longest a switch may take before the tool gives up.
const GIVE_UP: Duration = Duration::from_secs(60);

/// What one proxy measured.
struct Figures {
    /// Commit to the new owner answering, per change.
    switch: Vec<Duration>,
    /// Per change, from the first refused probe to the last (zero when
    /// none was refused).
    refused: Vec<Duration>,
}

/// The `q` quantile (nearest rank) of `d`, in milliseconds.
fn quantile_ms(d: &[Duration], q: f64) -> f64 {
    let mut sorted = d.to_vec();
    sorted.sort_unstable();
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1].as_secs_f64() * 1e3
}

fn measure<P: Proxy>(s: &mut Synced<P>, addresses: &[String], changes: usize) -> Figures {
    s.step(
        (1..=10)
            .map(|i| node(&format!("n{i:02}"), &addresses[i], 1))
            .collect(),
    );
    let mut before = s.view(s.version());
    let mut figures = Figures {
        switch: Vec::new(),
        refused: Vec::new(),
    };
    for i in 0..changes {
        let j = 1 + i % 10;
        let weight = if (i / 10) % 2 == 0 { 4 } else { 2 };
        let sent = Instant::now();
        let version = s.change(vec![node(&format!("n{j:02}"), &addresses[j], weight)]);
        let after = s.view(version);
        let (key, owner) = (0u64..)
            .map(|n| format!("moved-{version}-{n}").into_bytes())
            .find_map(|k| {
                let new = after.owner(&k).expect("an owner");
                let old = before.owner(&k).expect("an owner");
                (new.id != old.id).then(|| {
                    let address = new.address.as_ref().expect("an address");
                    (k.clone(), address.as_str().to_owned())
                })
            })
            .expect("a moved key");
        let mut refused: Option<(Instant, Instant)> = None;
        loop {
            match s.proxy.reaches(&key, &owner) {
                Some(true) => break,
                Some(false) => {}
                None => {
                    let now = Instant::now();
                    refused = Some(refused.map_or((now, now), |(first, _)| (first, now)));
                }
            }
            assert!(
                sent.elapsed() < GIVE_UP,
                "version {version} never reached the proxy"
            );
        }
        figures.switch.push(sent.elapsed());
        figures
            .refused
            .push(refused.map_or(Duration::ZERO, |(first, last)| last - first));
        s.acked(version);
        before = after;
    }
    figures
}

fn report(name: &str, f: &Figures) {
    let refusing = f.refused.iter().filter(|d| !d.is_zero()).count();
    println!(
        "{name}: {} changes; commit to new owner p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms; \
         {refusing} switches refused requests, for p50 {:.1} ms, p99 {:.1} ms",
        f.switch.len(),
        quantile_ms(&f.switch, 0.5),
        quantile_ms(&f.switch, 0.99),
        quantile_ms(&f.switch, 1.0),
        quantile_ms(&f.refused, 0.5),
        quantile_ms(&f.refused, 0.99),
    );
}

fn main() {
    let mut args = std::env::args().skip(1).peekable();
    let changes: usize = args
        .next_if(|a| a.parse::<usize>().is_ok())
        .map_or(60, |a| a.parse().expect("a number"));
    let mut proxies: Vec<String> = args.collect();
    if proxies.is_empty() {
        proxies = ["nginx", "haproxy", "twemproxy"].map(String::from).to_vec();
    }
    for name in &proxies {
        match name.as_str() {
            "nginx" => {
                let (mut s, _backends, addresses) = harness::nginx_sync::synced("");
                report(name, &measure(&mut s, &addresses, changes));
            }
            "haproxy" => {
                let (mut s, _backends, addresses) = harness::haproxy_sync::synced("");
                report(name, &measure(&mut s, &addresses, changes));
            }
            "twemproxy" => {
                let (mut s, _backends, addresses) = harness::twemproxy_sync::synced("");
                report(name, &measure(&mut s, &addresses, changes));
            }
            other => panic!("unknown proxy {other}: nginx, haproxy or twemproxy"),
        }
    }
}
