//! A snapshot whose nodes do not hash to its stated fingerprint is never
//! routed on: the client reports it (event and status) and keeps its
//! version until an honest one arrives, over SSE and long-poll alike.
//!
//! The server here is a test double serving the watch and long-poll routes
//! from a list of snapshots the test publishes; the snapshots themselves
//! are built with the placement core (`Snapshot::first` + `propose`).
#![cfg(feature = "server")]

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::support::client::{Events, GUARD};
use crate::support::double::{start_double, Double};
use ringd::client::{RingClient, RingEvent, WatchMode};
use ringd::placement::{NodeId, RingConfig, Weight};
use ringd::ring::{ChangeOp, NodeRecord, RingName, Role, Snapshot};
use time::OffsetDateTime;

/// Honest versions 1–4 of ring `t` (1: empty, 2: a b c, 3: + d, 4: b
/// weighs 3) and version 3 tampered: node `a` weighs 5 but the
/// fingerprint is still the honest one.
fn chain() -> (Vec<Snapshot>, Snapshot) {
    let now = OffsetDateTime::now_utc();
    let (first, mut placement) = Snapshot::first(
        RingName::new("t").unwrap(),
        RingConfig::default(),
        Role::Anonymous,
        now,
    )
    .unwrap();
    let node = |id: &str, w: u64| {
        let mut r = NodeRecord::new(NodeId::new(id).unwrap());
        r.weight = Weight::new(w).unwrap();
        ChangeOp::Upsert { node: r }
    };
    let steps = [
        vec![node("a", 1), node("b", 1), node("c", 1)],
        vec![node("d", 1)],
        vec![node("b", 3)],
    ];
    let mut chain = vec![first];
    for ops in steps {
        let last = chain.last().unwrap();
        let p = last
            .propose(&placement, ops, None, Role::Anonymous, now)
            .unwrap()
            .expect("a change");
        placement = p.placement;
        chain.push(p.snapshot);
    }
    let mut tampered = chain[2].clone();
    assert_eq!(tampered.nodes[0].id.to_string(), "a");
    tampered.nodes[0].weight = Weight::new(5).unwrap();
    (chain, tampered)
}

fn owners(c: &RingClient) -> Vec<Option<String>> {
    (0..64)
        .map(|i| c.owner(format!("k{i}").as_bytes()).map(|n| n.to_string()))
        .collect()
}

/// A client of a double that serves honest versions 1 and 2, routing on 2.
struct Setup {
    chain: Vec<Snapshot>,
    tampered: Snapshot,
    /// The error text the refusal of the tampered version must carry.
    error: String,
    d: Double,
    c: RingClient,
    ev: Events,
    honest_owners: Vec<Option<String>>,
}

async fn setup(mode: WatchMode) -> Setup {
    let (chain, tampered) = chain();
    let stated = chain[2].fingerprint.to_string();
    let computed = tampered.placement().unwrap().fingerprint().to_string();
    assert_ne!(stated, computed, "the tampering must change the placement");
    let (url, d) = start_double(3).await;
    d.publish(&chain[0]);
    d.publish(&chain[1]);
    let c = RingClient::builder(&[&url], "t")
        .watch_mode(mode)
        .ack(false)
        .backoff(Duration::from_millis(20), Duration::from_millis(300))
        .long_poll_wait(Duration::from_secs(5))
        .start()
        .unwrap();
    c.wait_for_version(2, GUARD).await.unwrap();
    let ev = Events::after_ready(&c, 2);
    let honest_owners = owners(&c);
    assert!(honest_owners.iter().all(Option::is_some));
    assert_eq!(c.status().last_error, None);
    let error = format!(
        "snapshot t v3 failed verification: it states fingerprint {stated} but its placement hashes to {computed}"
    );
    Setup {
        chain,
        tampered,
        error,
        d,
        c,
        ev,
        honest_owners,
    }
}

impl Setup {
    /// Publishes the tampered version 3 and asserts its refusal: the
    /// event, the status, and routing unchanged on version 2.
    async fn refuse(&mut self) {
        self.d.publish(&self.tampered);
        match self.ev.next().await {
            RingEvent::Rejected { version, error } => {
                assert_eq!((version, error.as_str()), (3, self.error.as_str()));
            }
            other => panic!("expected Rejected, got {other:?}"),
        }
        let st = self.c.status();
        assert_eq!(st.last_error.as_deref(), Some(self.error.as_str()));
        assert_eq!(st.version, Some(2));
        assert_eq!(self.c.version(), Some(2));
        let held = self.c.current().unwrap();
        assert_eq!(held.fingerprint(), self.chain[1].fingerprint);
        assert_eq!(owners(&self.c), self.honest_owners);
    }
}

async fn refuses_a_tampered_snapshot(mode: WatchMode) {
    let mut s = setup(mode).await;
    // A watcher of the client's answers the whole time: it must never
    // route on version 3, and on version 2 only as version 2 routes.
    let stop = Arc::new(AtomicBool::new(false));
    let taken = Arc::new(AtomicU64::new(0));
    let sampler = {
        let (c, stop, expected) = (s.c.clone(), stop.clone(), s.honest_owners.clone());
        let taken = taken.clone();
        tokio::spawn(async move {
            let mut samples = 0u64;
            while !stop.load(Ordering::SeqCst) {
                match c.version() {
                    Some(2) => {
                        let now = owners(&c);
                        // The swap to v4 may land between the two reads.
                        if c.version() == Some(2) {
                            assert_eq!(now, expected, "v2 routes differently");
                        }
                    }
                    Some(4) => {}
                    other => panic!("the client routed on {other:?}"),
                }
                samples += 1;
                taken.store(samples, Ordering::SeqCst);
                tokio::task::yield_now().await;
            }
            samples
        })
    };
    // On a loaded machine the sampler may start late: let it watch the
    // refusal from the beginning.
    while taken.load(Ordering::SeqCst) == 0 {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    s.refuse().await;

    s.d.publish(&s.chain[3]);
    // v3 is refused once and never fetched again; v4 applies on top of v2.
    let change = match s.ev.next_event().await {
        RingEvent::Applied(change) => change,
        other => panic!("expected Applied, got {other:?}"),
    };
    assert_eq!((change.from, change.to, change.reset), (Some(2), 4, false));
    assert_eq!(change.view.fingerprint(), s.chain[3].fingerprint);
    assert_eq!(s.c.version(), Some(4));
    stop.store(true, Ordering::SeqCst);
    assert!(sampler.await.unwrap() > 0);
    let want: Vec<Option<String>> = {
        let p = s.chain[3].placement().unwrap();
        (0..64)
            .map(|i| p.owner(format!("k{i}").as_bytes()).map(|n| n.to_string()))
            .collect()
    };
    assert_eq!(owners(&s.c), want);
    s.ev.none_within(Duration::from_millis(300)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tampered_snapshot_on_the_stream_is_refused() {
    refuses_a_tampered_snapshot(WatchMode::Sse).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tampered_snapshot_from_a_long_poll_is_refused() {
    refuses_a_tampered_snapshot(WatchMode::LongPoll).await;
}

/// Once refused, a version is neither fetched nor reported again while
/// the ring stays at it: the client waits for the next version.
async fn refused_version_is_not_fetched_again(mode: WatchMode) {
    let mut s = setup(mode).await;
    s.refuse().await;
    s.ev.none_within(Duration::from_millis(500)).await;
    assert_eq!(s.d.tampered_served.load(Ordering::SeqCst), 1);
    assert_eq!(s.c.version(), Some(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_version_is_not_fetched_again_on_the_stream() {
    refused_version_is_not_fetched_again(WatchMode::Sse).await;
}

/// A long-poll resumes after the refused version, so it waits for the
/// next one instead of fetching and refusing the same snapshot in a loop.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_version_is_not_fetched_again_by_long_polling() {
    refused_version_is_not_fetched_again(WatchMode::LongPoll).await;
}

/// A tampered first version: the client has nothing to fall back on, so
/// it routes on nothing (and is not ready) until an honest version comes.
async fn a_tampered_first_version_is_never_routed_on(mode: WatchMode) {
    let (chain, _) = chain();
    let mut first = chain[0].clone();
    first.nodes = chain[1].nodes.clone();
    let computed = first.placement().unwrap().fingerprint();
    assert_ne!(computed, first.fingerprint);
    let error = format!(
        "snapshot t v1 failed verification: it states fingerprint {} but its placement hashes to {computed}",
        first.fingerprint
    );
    let (url, d) = start_double(1).await;
    d.publish(&first);
    let c = RingClient::builder(&[&url], "t")
        .watch_mode(mode)
        .ack(false)
        .backoff(Duration::from_millis(20), Duration::from_millis(300))
        .long_poll_wait(Duration::from_secs(5))
        .start()
        .unwrap();
    let mut ev = Events::of(&c);
    let st = crate::support::client::wait_status(&c, "a refusal", |s| s.last_error.is_some()).await;
    assert_eq!(st.last_error.as_deref(), Some(error.as_str()));
    assert_eq!(st.version, None);
    assert!(c.current().is_none());
    assert_eq!(c.owner(b"k1"), None);
    assert!(c.preference_list(b"k1", 2).is_empty());
    assert_eq!(c.router().owner(b"k1"), None);
    assert!(c.ready(Duration::from_millis(200)).await.is_err());

    d.publish(&chain[1]);
    // The refusal of v1 may have come before `Events::of` subscribed; it
    // comes at most once either way.
    let change = match ev.next_event().await {
        RingEvent::Rejected {
            version: 1,
            error: e,
        } if e == error => match ev.next_event().await {
            RingEvent::Applied(change) => change,
            other => panic!("expected Applied, got {other:?}"),
        },
        RingEvent::Applied(change) => change,
        other => panic!("expected Applied, got {other:?}"),
    };
    assert_eq!((change.from, change.to, change.reset), (None, 2, false));
    assert_eq!(change.diff, None);
    assert_eq!(c.current().unwrap().fingerprint(), chain[1].fingerprint);
    let p = chain[1].placement().unwrap();
    for i in 0..64 {
        let k = format!("k{i}");
        let want = p.owner(k.as_bytes()).map(ToString::to_string);
        assert_eq!(c.owner(k.as_bytes()).map(|n| n.to_string()), want);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tampered_first_version_on_the_stream_is_never_routed_on() {
    a_tampered_first_version_is_never_routed_on(WatchMode::Sse).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tampered_first_version_from_a_long_poll_is_never_routed_on() {
    a_tampered_first_version_is_never_routed_on(WatchMode::LongPoll).await;
}
