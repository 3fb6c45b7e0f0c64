//! Conformance: the decision-maker's election as each store provides it.
//! The first candidate takes office in a term, its fence proves that term
//! and lets its writes land, `cluster()` names it, and resigning ends its
//! office.
//!
//! What a later term does is etcd's alone (SQLite has one instance, whose
//! term is always 1): a hand-over to a larger term, and the store refusing
//! the old term's fenced write, are in `tests/etcd/leader.rs`.

use std::time::Duration;

use ringd::ring::Clock;
use ringd::store::leadership::{Instance, InstanceId, Leader, Leadership, Term};

use super::{add_node, clock_at, first, name, Backend};

/// The election's session TTL where the backend has sessions.
const TTL: Duration = Duration::from_secs(5);

/// How long a lone candidate may take to win.
const ELECTED_WITHIN: Duration = Duration::from_secs(20);

/// Waits until `leadership` holds office; returns its term and since when.
async fn in_office(leadership: &dyn Leadership) -> (Term, time::OffsetDateTime) {
    let mut office = leadership.office();
    let held = tokio::time::timeout(ELECTED_WITHIN, office.wait_for(Option::is_some))
        .await
        .expect("office within the limit")
        .expect("the election runs");
    held.expect("in office")
}

pub(crate) async fn the_first_candidate_leads_in_a_term_until_it_resigns<B: Backend>(backend: B) {
    let clock = clock_at(0);
    let store = backend.open(clock.clone()).await;
    let me = Instance {
        id: InstanceId::new("first").unwrap(),
        url: "http://first.test:7420".into(),
        version: "1.0.0".into(),
        started_at: clock.now(),
    };
    let leadership = store.elect(me.clone(), TTL);
    let (term, since) = in_office(leadership.as_ref()).await;
    assert!(term > Term(0), "{term:?}");
    assert_eq!(since, clock.now(), "in office from the clock's now");
    let fence = leadership.fence().expect("a fence while in office");
    assert_eq!(fence.term(), term);
    let cluster = leadership.cluster().await.unwrap();
    assert_eq!(cluster.store, B::NAME);
    assert_eq!(
        cluster.leader,
        Some(Leader {
            instance: me.id.clone(),
            url: me.url.clone(),
            term,
            since: Some(since),
        })
    );
    assert_eq!(cluster.instances, vec![me]);

    // A write in the term lands.
    let (v1, placement) = first("cache");
    store.create_ring(&v1).await.unwrap();
    let (v2, _) = add_node(&v1, &placement, "decided");
    store.commit_fenced(&v2, &fence).await.unwrap();
    assert_eq!(store.latest(&name("cache")).await.unwrap(), v2);

    // Resigning ends office at once, and nobody leads.
    leadership.resign().await;
    assert_eq!(*leadership.office().borrow(), None);
    assert_eq!(leadership.fence(), None);
    assert_eq!(leadership.cluster().await.unwrap().leader, None);
}
