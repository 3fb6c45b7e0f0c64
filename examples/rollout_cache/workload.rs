//! The read-through cache workload: application threads that route every
//! read with a ringd client, read the owner's memcached, and on a miss
//! read the (simulated) backing store and fill the cache.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use rand_distr::Zipf;
use ringd::client::RingClient;

use crate::memcached::Memcached;

/// The width of one bucket of the backing store's read counter.
pub(crate) const BUCKET: Duration = Duration::from_millis(100);
/// How often a worker issues its next batch of reads: its rate is paced
/// in batches so that every run offers the same load, whatever the
/// machine does meanwhile.
const TICK: Duration = Duration::from_millis(10);

/// The cache servers by node id.
pub(crate) type Servers = BTreeMap<String, Memcached>;

/// The key of Zipf rank `rank`.
pub(crate) fn key(rank: u64) -> String {
    format!("item:{rank:06}")
}

/// What the backing store returns for a key: 64 bytes derived from it.
fn backing_value(key: &str) -> Vec<u8> {
    let mut v = key.as_bytes().to_vec();
    v.resize(64, b'.');
    v
}

/// The shape of the offered load.
#[derive(Clone, Copy)]
pub(crate) struct Load {
    /// Keys `item:000001` … `item:{keys}`.
    pub(crate) keys: u64,
    /// The Zipf exponent (YCSB's default is 0.99).
    pub(crate) exponent: f64,
    /// Reads per second of each worker.
    pub(crate) rate: u64,
}

/// Counts shared by the workers of one run.
pub(crate) struct Counters {
    started: Instant,
    /// Backing-store reads per [`BUCKET`] since `started`.
    backing: Vec<AtomicU64>,
    /// Reads made.
    pub(crate) reads: AtomicU64,
    /// Reads served by the owner's cache.
    pub(crate) hits: AtomicU64,
    /// Misses served by the previous owner's cache (handoff).
    pub(crate) handoff_hits: AtomicU64,
    /// Cache requests that failed (the run is void if any did).
    pub(crate) errors: AtomicU64,
}

impl Counters {
    /// Counters of a run that starts now and lasts at most `span`.
    pub(crate) fn new(span: Duration) -> Counters {
        let buckets = (span.as_millis() / BUCKET.as_millis()) as usize + 1;
        Counters {
            started: Instant::now(),
            backing: (0..buckets).map(|_| AtomicU64::new(0)).collect(),
            reads: AtomicU64::new(0),
            hits: AtomicU64::new(0),
            handoff_hits: AtomicU64::new(0),
            errors: AtomicU64::new(0),
        }
    }

    /// When the run started: bucket 0 begins here.
    pub(crate) fn started(&self) -> Instant {
        self.started
    }

    fn backing_read(&self) {
        let i = (self.started.elapsed().as_millis() / BUCKET.as_millis()) as usize;
        if let Some(b) = self.backing.get(i) {
            b.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Backing-store reads per bucket.
    pub(crate) fn series(&self) -> Vec<u64> {
        self.backing
            .iter()
            .map(|b| b.load(Ordering::Relaxed))
            .collect()
    }
}

/// Fills every key into its owner under `client`'s current placement,
/// as a cache that has run for a long time holds it: the runs then start
/// with no miss at all, so every backing read is one that a change made.
pub(crate) fn warm(client: &RingClient, servers: &Arc<Servers>, load: Load) {
    let workers = 4;
    let threads: Vec<JoinHandle<()>> = (0..workers)
        .map(|w| {
            let (client, servers) = (client.clone(), servers.clone());
            std::thread::spawn(move || {
                for rank in (1..=load.keys).filter(|r| r % workers == w) {
                    let key = key(rank);
                    let owner = client.owner(key.as_bytes()).expect("the ring has nodes");
                    servers[owner.as_str()]
                        .client
                        .set(&key, &backing_value(&key)[..], 0)
                        .expect("warm the cache");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("warming thread");
    }
}

/// Starts one application thread that reads through `client`'s routing
/// until `stop`, at `load.rate` reads per second. With `handoff`, a miss
/// on a key that changed owner in the last applied version is first read
/// from the previous owner (docs/client-library.md's read-fallback).
pub(crate) fn start_worker(
    client: RingClient,
    servers: Arc<Servers>,
    counters: Arc<Counters>,
    load: Load,
    handoff: bool,
    seed: u64,
    stop: Arc<AtomicBool>,
) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let zipf = Zipf::new(load.keys as f64, load.exponent).expect("Zipf parameters");
        let mut rng = SmallRng::seed_from_u64(seed);
        let per_tick = (load.rate * TICK.as_millis() as u64 / 1000).max(1);
        let mut next = Instant::now();
        while !stop.load(Ordering::Acquire) {
            for _ in 0..per_tick {
                let rank = rng.sample(zipf) as u64;
                read(&client, &servers, &counters, &key(rank), handoff);
            }
            next += TICK;
            if let Some(wait) = next.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
        }
    })
}

/// One read-through read.
fn read(client: &RingClient, servers: &Servers, counters: &Counters, key: &str, handoff: bool) {
    counters.reads.fetch_add(1, Ordering::Relaxed);
    let routed = client.handoff(key.as_bytes());
    let owner = routed.owner_now.as_ref().expect("the ring has nodes");
    let cache = &servers[owner.as_str()].client;
    match cache.get::<Vec<u8>>(key) {
        Ok(Some(_)) => {
            counters.hits.fetch_add(1, Ordering::Relaxed);
            return;
        }
        Ok(None) => {}
        Err(_) => {
            counters.errors.fetch_add(1, Ordering::Relaxed);
            return;
        }
    }
    if handoff && routed.moved() {
        let before = routed
            .owner_before
            .as_ref()
            .expect("moved() implies a previous owner");
        if let Ok(Some(value)) = servers[before.as_str()].client.get::<Vec<u8>>(key) {
            counters.handoff_hits.fetch_add(1, Ordering::Relaxed);
            if cache.set(key, &value[..], 0).is_err() {
                counters.errors.fetch_add(1, Ordering::Relaxed);
            }
            return;
        }
    }
    counters.backing_read();
    if cache.set(key, &backing_value(key)[..], 0).is_err() {
        counters.errors.fetch_add(1, Ordering::Relaxed);
    }
}
