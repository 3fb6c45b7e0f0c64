//! One decision-maker among ringd instances on etcd: three instances on a
//! three-member etcd elect exactly one and agree on it in `GET
//! /v1/cluster`; a SIGKILLed leader is replaced within twice the election
//! TTL; a graceful stop hands over at once; and a deposed leader's write,
//! fenced by its term, is refused by etcd.
#![cfg(feature = "server")]

use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::Value;

use crate::support::api::expect_json;
use crate::support::etcd::Etcd;
use crate::support::etcd_cluster::EtcdCluster;
use crate::support::ringd::{Ringd, Server};
use ringd::placement::{Algorithm, NodeId, RingConfig};
use ringd::ring::{ChangeOp, NodeRecord, RequestedOp, RingName, Role, SystemClock};
use ringd::service::{ChangeOutcome, ChangeRequest, RingService, Term};
use ringd::store::etcd::{EtcdOptions, EtcdStore};
use ringd::store::leadership::{Instance, InstanceId, Leadership};
use ringd::store::{Store, StoreError};

/// The election TTL of these tests: short, and long enough that a
/// hand-over by resignation (well under a second) cannot be mistaken for
/// one by lease expiry (at least two thirds of the TTL after the last
/// renewal).
const TTL_SECS: u64 = 3;
const TTL: Duration = Duration::from_secs(TTL_SECS);

/// How long the first election and agreement may take.
const SETTLE: Duration = Duration::from_secs(20);

/// The cluster view `server` answers.
async fn cluster_of(server: &Server) -> Value {
    expect_json(server.get("/v1/cluster").await, StatusCode::OK).await
}

/// Polls until every one of `servers` answers the same cluster view, with
/// a leader in office (`since` set) among `ids` and exactly the instances
/// `ids`; returns it. Panics after `limit`.
pub(crate) async fn agreed(servers: &[&Server], ids: &[&str], limit: Duration) -> Value {
    let deadline = Instant::now() + limit;
    loop {
        let mut views = Vec::new();
        for s in servers {
            views.push(cluster_of(s).await);
        }
        let first = &views[0];
        let listed: Vec<&str> = first["instances"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["id"].as_str().unwrap())
            .collect();
        let settled = views.iter().all(|v| v == first)
            && listed == ids
            && first["leader"]["since"].is_string()
            && ids.contains(&first["leader"]["instance"].as_str().unwrap_or(""));
        if settled {
            return first.clone();
        }
        assert!(
            Instant::now() < deadline,
            "no agreement on a leader among {ids:?} within {limit:?}: {views:#?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Checks that `view`'s leader is the one instance (of `servers`, named
/// `ids`) whose gauges say so, in the view's term, and that the rows flag it.
async fn one_leader(view: &Value, servers: &[&Server], ids: &[&str]) -> (String, u64) {
    let leader = view["leader"]["instance"].as_str().unwrap().to_owned();
    let term = view["leader"]["term"].as_u64().unwrap();
    assert!(term > 0, "{view}");
    for (s, id) in servers.iter().zip(ids) {
        let leads = *id == leader;
        assert_eq!(s.metric("ringd_leader").await, u64::from(leads), "{id}");
        let expected_term = if leads { term } else { 0 };
        assert_eq!(s.metric("ringd_leader_term").await, expected_term, "{id}");
    }
    for row in view["instances"].as_array().unwrap() {
        assert_eq!(row["leader"], row["id"] == leader.as_str(), "{view}");
        assert_eq!(row["version"], env!("CARGO_PKG_VERSION"));
    }
    assert_eq!(
        view["leader"]["url"],
        view["instances"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["id"] == leader.as_str())
            .unwrap()["url"]
    );
    (leader, term)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_instances_elect_one_and_hand_over_on_kill_and_on_stop() {
    let cluster = EtcdCluster::start().await;
    let ttl = TTL_SECS.to_string() + "s";
    let start = |id: &str| {
        Ringd::on(&cluster.store_url())
            .prefix("/leader")
            .args(&["--election-ttl", &ttl, "--instance-id", id])
            .start()
    };
    let mut servers: Vec<Option<Server>> = ["r0", "r1", "r2"]
        .iter()
        .map(|id| Some(start(id)))
        .collect();
    let ids = ["r0", "r1", "r2"];
    let all: Vec<&Server> = servers.iter().map(|s| s.as_ref().unwrap()).collect();
    let view = agreed(&all, &ids, SETTLE).await;
    assert_eq!(view["store"], "etcd");
    for (row, s) in view["instances"].as_array().unwrap().iter().zip(&all) {
        assert_eq!(row["url"], s.url.as_str(), "each advertises its listen URL");
    }
    let (first, first_term) = one_leader(&view, &all, &ids).await;

    // SIGKILL the leader: it cannot resign, so its session lease must run
    // out, and another instance takes over within twice the TTL.
    let dead = ids.iter().position(|id| *id == first).unwrap();
    let killed_at = Instant::now();
    servers[dead].as_mut().unwrap().kill();
    servers[dead] = None;
    let alive: Vec<&str> = ids.iter().copied().filter(|id| *id != first).collect();
    let rest: Vec<&Server> = servers.iter().flatten().collect();
    let view = agreed(&rest, &alive, 2 * TTL + Duration::from_secs(5)).await;
    let (second, second_term) = one_leader(&view, &rest, &alive).await;
    let took = killed_at.elapsed();
    eprintln!("a new leader {took:?} after the SIGKILL (TTL {TTL:?})");
    assert!(
        took <= 2 * TTL,
        "a new leader after {took:?}, over twice the {TTL:?} TTL"
    );
    assert_ne!(second, first);
    assert!(second_term > first_term, "{second_term} after {first_term}");

    // A graceful stop resigns: the last instance leads at once, well
    // before the stopped one's lease could have run out.
    let stopping = alive.iter().position(|id| *id == second).unwrap();
    let last = alive[1 - stopping];
    let mut stopped = {
        let i = ids.iter().position(|id| *id == second).unwrap();
        servers[i].take().unwrap()
    };
    let stopped_at = Instant::now();
    assert!(stopped.terminate().success(), "{}", stopped.log());
    let survivor: Vec<&Server> = servers.iter().flatten().collect();
    let view = agreed(&survivor, &[last], TTL).await;
    let handed = stopped_at.elapsed();
    eprintln!("a new leader {handed:?} after the SIGTERM");
    assert!(
        handed < TTL / 2,
        "the hand-over took {handed:?}: the stop did not resign"
    );
    let (third, third_term) = one_leader(&view, &survivor, &[last]).await;
    assert_eq!(third, last);
    assert!(third_term > second_term);
    assert!(
        stopped
            .log()
            .contains("resigned as the membership decision-maker"),
        "{}",
        stopped.log()
    );
}

/// An instance of these in-process tests.
fn instance(id: &str) -> Instance {
    Instance {
        id: InstanceId::new(id).unwrap(),
        url: format!("http://{id}.test:7420"),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        started_at: time::OffsetDateTime::now_utc(),
    }
}

/// Waits until `leadership` holds office; returns its term.
async fn in_office(leadership: &dyn Leadership) -> Term {
    let mut office = leadership.office();
    let held = tokio::time::timeout(SETTLE, office.wait_for(Option::is_some))
        .await
        .expect("office within the limit")
        .expect("the election runs");
    let term = held.expect("in office").0;
    assert_eq!(leadership.fence().map(|f| f.term()), Some(term));
    term
}

fn add(id: &str) -> ChangeRequest {
    let node = NodeRecord::new(NodeId::new(id).unwrap());
    ChangeRequest {
        reason: Some(format!("automatic: {id}")),
        ..ChangeRequest::of(vec![RequestedOp::Op(ChangeOp::Upsert { node })])
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deposed_leaders_fenced_write_is_refused() {
    let etcd = Etcd::start().await;
    let connect = || async {
        let mut options = EtcdOptions::new(vec![etcd.endpoint.clone()]);
        options.prefix = "/fence".into();
        let store: Arc<dyn Store> = Arc::new(
            EtcdStore::connect(options, Arc::new(SystemClock))
                .await
                .unwrap(),
        );
        store
    };
    let (store_a, store_b) = (connect().await, connect().await);
    let leader_a = store_a.elect(instance("a"), TTL);
    let term_a = in_office(leader_a.as_ref()).await;
    // b campaigns behind a.
    let leader_b = store_b.elect(instance("b"), TTL);
    let a = RingService::with_leadership(store_a.clone(), Arc::new(SystemClock), leader_a.clone());
    let b = RingService::with_leadership(store_b.clone(), Arc::new(SystemClock), leader_b.clone());
    assert_eq!(b.leader_term(), None);

    let ring = RingName::new("fenced").unwrap();
    a.rings()
        .create(ring.clone(), RingConfig::new(Algorithm::Ring), Role::Admin)
        .await
        .unwrap();
    let done = a
        .rings()
        .apply_as_leader(&ring, add("n1"), term_a)
        .await
        .unwrap();
    assert!(matches!(done, ChangeOutcome::Committed { .. }), "{done:?}");
    assert_eq!(store_a.latest(&ring).await.unwrap().version, 2);
    // b is not in office: its service refuses before writing anything.
    let refused = b
        .rings()
        .apply_as_leader(&ring, add("n2"), term_a)
        .await
        .unwrap_err();
    assert!(
        matches!(refused, ringd::service::ServiceError::Store(StoreError::Deposed(t)) if t == term_a),
        "{refused:?}"
    );

    // a is deposed but, like a leader whose lease ran out during a pause,
    // still holds its old fence; b takes office.
    let stale = leader_a.fence().unwrap();
    leader_a.resign().await;
    let term_b = in_office(leader_b.as_ref()).await;
    assert!(term_b > term_a, "{term_b:?} after {term_a:?}");

    // The write a computed against version 2 would pass the version's
    // compare-and-swap; the fence alone refuses it.
    let Ok(ChangeOutcome::Preview { snapshot: next, .. }) = b
        .rings()
        .apply(
            &ring,
            ChangeRequest {
                dry_run: true,
                ..add("late")
            },
            Role::Admin,
        )
        .await
    else {
        panic!("a preview");
    };
    assert_eq!(next.version, 3);
    let late = store_a.commit_fenced(&next, &stale).await.unwrap_err();
    assert!(
        matches!(late, StoreError::Deposed(t) if t == term_a),
        "{late:?}"
    );
    let latest = store_b.latest(&ring).await.unwrap();
    assert_eq!(latest.version, 2, "nothing was written");
    assert_eq!(store_b.history(&ring).await.unwrap().len(), 2);
    // And by the service: its own check already refuses the old term.
    let refused = a
        .rings()
        .apply_as_leader(&ring, add("late"), term_a)
        .await
        .unwrap_err();
    assert!(
        matches!(refused, ringd::service::ServiceError::Store(StoreError::Deposed(t)) if t == term_a),
        "{refused:?}"
    );

    // The new leader's write in its own term lands, as one version.
    let fence_b = leader_b.fence().unwrap();
    store_b.commit_fenced(&next, &fence_b).await.unwrap();
    assert_eq!(store_a.latest(&ring).await.unwrap().version, 3);
    let done = b
        .rings()
        .apply_as_leader(&ring, add("n3"), term_b)
        .await
        .unwrap();
    assert!(matches!(done, ChangeOutcome::Committed { .. }), "{done:?}");
    assert_eq!(store_b.latest(&ring).await.unwrap().version, 4);

    // The cluster view from either store names b, in its term.
    let view = leader_a.cluster().await.unwrap();
    let leader = view.leader.expect("a leader");
    assert_eq!((leader.instance.as_str(), leader.term), ("b", term_b));
    assert!(leader.since.is_some());
    let ids: Vec<&str> = view.instances.iter().map(|i| i.id.as_str()).collect();
    assert_eq!(ids, ["b"], "a's record went with its session");
    leader_b.resign().await;
    assert_eq!(b.leader_term(), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_that_cannot_reach_etcd_stops_deciding_within_its_ttl() {
    let mut etcd = Etcd::start().await;
    let mut options = EtcdOptions::new(vec![etcd.endpoint.clone()]);
    options.prefix = "/outage".into();
    let store: Arc<dyn Store> = Arc::new(
        EtcdStore::connect(options, Arc::new(SystemClock))
            .await
            .unwrap(),
    );
    let leadership = store.elect(instance("alone"), TTL);
    let term = in_office(leadership.as_ref()).await;
    let mut office = leadership.office();
    office.mark_unchanged();

    etcd.stop();
    let stopped_at = Instant::now();
    // The session was renewed at most a third of the TTL before the stop,
    // and office lasts nine tenths of the TTL from a renewal, so it ends
    // between 0.57 and 0.9 TTL after the stop, before etcd can let the
    // lease expire (the margin here is only for a slow wake-up).
    tokio::time::timeout(TTL, office.changed())
        .await
        .expect("office ends within the TTL")
        .unwrap();
    let lost = stopped_at.elapsed();
    eprintln!("office lost {lost:?} after etcd stopped (TTL {TTL:?})");
    assert_eq!(*office.borrow(), None);
    assert_eq!(leadership.fence(), None, "term {term:?} is over");
    assert!(lost >= TTL / 2, "gave up after only {lost:?}");

    // Back with etcd, the instance campaigns again and wins a new term.
    etcd.restart().await;
    let again = in_office(leadership.as_ref()).await;
    assert!(again > term, "{again:?} after {term:?}");
}
