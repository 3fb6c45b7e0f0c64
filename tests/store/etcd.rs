//! The etcd store against a real etcd: the shared conformance cases, plus
//! what only etcd can show (layout versions, big rings, several clients).
#![cfg(feature = "server")]

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use crate::conformance::{add_node, chain, first, name, store_all, Backend};
use crate::support::etcd::Etcd;
use ringd::placement::{Algorithm, NodeId, Weight, Zone};
use ringd::ring::{ChangeOp, Clock, ManualClock, NodeRecord, Role, Snapshot, SystemClock};
use ringd::store::etcd::{EtcdOptions, EtcdStore, LAYOUT_VERSION};
use ringd::store::{Lease, LeaseStore, Store, StoreError, StoreEvent, DEFAULT_RETENTION};

/// Options for the store on `etcd` under the default prefix.
fn options(etcd: &Etcd, retention: u64) -> EtcdOptions {
    let mut o = EtcdOptions::new(vec![etcd.endpoint.clone()]);
    o.retention = retention;
    o
}

/// A fresh store on its own etcd, stopped with the guard.
async fn open(retention: u64) -> (Etcd, Arc<dyn Store>) {
    let etcd = Etcd::start().await;
    let store = EtcdStore::connect(options(&etcd, retention), Arc::new(SystemClock))
        .await
        .expect("connect");
    (etcd, Arc::new(store))
}

store_conformance_tests!(open);

/// One etcd, stopped with it; each store opened on it is another ringd
/// instance under the default prefix.
struct EtcdDeployment {
    etcd: Etcd,
}

impl Backend for EtcdDeployment {
    const NAME: &'static str = "etcd";

    async fn open(&self, clock: Arc<ManualClock>) -> Arc<dyn Store> {
        let store = EtcdStore::connect(options(&self.etcd, DEFAULT_RETENTION), clock)
            .await
            .expect("connect");
        Arc::new(store)
    }
}

lease_and_leadership_conformance_tests!(|| async {
    EtcdDeployment {
        etcd: Etcd::start().await,
    }
});

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn too_new_layout_is_refused() {
    let etcd = Etcd::start().await;
    let mut client = etcd.client().await;
    drop(
        EtcdStore::connect(options(&etcd, 10), Arc::new(SystemClock))
            .await
            .unwrap(),
    );
    let layout = client.get("/ringd/layout", None).await.unwrap();
    assert_eq!(
        layout.kvs()[0].value_str().unwrap(),
        LAYOUT_VERSION.to_string()
    );

    let newer = (LAYOUT_VERSION + 1).to_string();
    client
        .put("/ringd/layout", newer.as_str(), None)
        .await
        .unwrap();
    let err = EtcdStore::connect(options(&etcd, 10), Arc::new(SystemClock))
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::SchemaTooNew { found, supported }
            if found == LAYOUT_VERSION + 1 && supported == LAYOUT_VERSION),
        "{err:?}"
    );
    assert!(err.to_string().contains("upgrade ringd"), "{err}");
    // Refusing writes nothing.
    let layout = client.get("/ringd/layout", None).await.unwrap();
    assert_eq!(layout.kvs()[0].value_str().unwrap(), newer);

    // Another prefix is another deployment, with its own layout.
    let mut other = options(&etcd, 10);
    other.prefix = "/other/ringd".into();
    let store = EtcdStore::connect(other, Arc::new(SystemClock))
        .await
        .unwrap();
    assert_eq!(store.list_rings().await.unwrap(), vec![]);
}

/// A node record of realistic size.
fn big_node(i: usize) -> NodeRecord {
    let mut n = NodeRecord::new(NodeId::new(format!("cache-{i:05}")).unwrap());
    n.address = Some(format!(
        "10.{}.{}.{}:11211",
        i / 65536,
        (i / 256) % 256,
        i % 256
    ));
    n.weight = Weight::new(1 + (i as u64 % 4)).unwrap();
    n.zone = Some(Zone::new(format!("zone-{}", i % 3)).unwrap());
    n.labels.insert("rack".into(), format!("rack-{}", i % 40));
    n.labels.insert("team".into(), "storage".into());
    n
}

/// The version after `prev` with `ops` applied. The store does not check
/// fingerprints, so this skips building placements of 10,000 nodes.
fn apply(prev: &Snapshot, ops: Vec<ChangeOp>) -> Snapshot {
    let mut next = prev.clone();
    next.version += 1;
    for op in &ops {
        match op {
            ChangeOp::Upsert { node } => {
                next.nodes.retain(|n| n.id != node.id);
                next.nodes.push(node.clone());
            }
            ChangeOp::Remove { id } => next.nodes.retain(|n| n.id != *id),
            ChangeOp::SetConfig { config, .. } => next.config = config.clone(),
        }
    }
    next.nodes.sort_by(|a, b| a.id.cmp(&b.id));
    next.change.ops = ops;
    next.change.reason = Some(format!("step {}", next.version));
    next
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_node_ring() {
    let etcd = Etcd::start().await;
    let store = EtcdStore::connect(options(&etcd, 1000), Arc::new(SystemClock))
        .await
        .unwrap();
    let (mut s, _) = first("big");
    store.create_ring(&s).await.unwrap();
    // 100 upserts per change stays within etcd's default 128 ops per txn.
    let mut versions = vec![s.clone()];
    for batch in 0..100 {
        let ops = (0..100)
            .map(|i| ChangeOp::Upsert {
                node: big_node(batch * 100 + i),
            })
            .collect();
        s = apply(&s, ops);
        store.commit(&s).await.unwrap();
        versions.push(s.clone());
    }
    assert_eq!(s.nodes.len(), 10_000);
    // One change that re-weights some nodes and removes others.
    let mut ops = Vec::new();
    for i in (0..10_000).step_by(200) {
        let mut n = big_node(i);
        n.weight = Weight::new(9).unwrap();
        ops.push(ChangeOp::Upsert { node: n });
        ops.push(ChangeOp::Remove {
            id: big_node(i + 1).id,
        });
    }
    s = apply(&s, ops);
    store.commit(&s).await.unwrap();
    versions.push(s.clone());

    let ring = name("big");
    assert_eq!(store.latest(&ring).await.unwrap(), s);
    for v in [102, 101, 51, 2, 1] {
        assert_eq!(
            store.snapshot(&ring, v).await.unwrap(),
            versions[v as usize - 1]
        );
    }
    assert_eq!(store.history(&ring).await.unwrap().len(), 102);

    // A change over etcd's transaction limits is refused, clearly, and
    // leaves the ring as it was.
    let ops = (0..1000)
        .map(|i| {
            let mut n = big_node(i);
            n.address = Some(format!("moved-{i}:1"));
            ChangeOp::Upsert { node: n }
        })
        .collect();
    let err = store.commit(&apply(&s, ops)).await.unwrap_err();
    assert!(
        matches!(&err, StoreError::Unavailable { source: None, .. })
            && err.to_string().contains("max-txn-ops"),
        "{err:?}"
    );
    assert_eq!(store.latest(&ring).await.unwrap(), s);
}

/// The next event, failing the test if none arrives soon.
async fn next_event(rx: &mut tokio::sync::broadcast::Receiver<StoreEvent>) -> StoreEvent {
    tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .expect("an event within 5 s")
        .expect("channel open and not lagged")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commits_through_one_client_reach_another() {
    let etcd = Etcd::start().await;
    let a = EtcdStore::connect(options(&etcd, 1000), Arc::new(SystemClock))
        .await
        .unwrap();
    let b = EtcdStore::connect(options(&etcd, 1000), Arc::new(SystemClock))
        .await
        .unwrap();
    let mut rx = b.subscribe();
    let versions = chain("cache", 3);
    store_all(&a, &versions).await;
    a.delete_ring(&name("cache"), Some(3)).await.unwrap();
    for expected in &versions {
        match next_event(&mut rx).await {
            StoreEvent::Committed(s) => assert_eq!(*s, *expected),
            other => panic!("expected Committed v{}, got {other:?}", expected.version),
        }
    }
    assert!(matches!(next_event(&mut rx).await, StoreEvent::Deleted(r) if r == name("cache")));
    // And B sees A's writes when reading.
    let (other, placement) = first("other");
    a.create_ring(&other).await.unwrap();
    assert_eq!(b.latest(&name("other")).await.unwrap(), other);

    // Racing commits of version 2 through both clients: exactly one wins.
    let (via_a, _) = add_node(&other, &placement, "from-a");
    let (via_b, _) = add_node(&other, &placement, "from-b");
    let (ra, rb) = tokio::join!(a.commit(&via_a), b.commit(&via_b));
    let winner = match (ra, rb) {
        (
            Ok(()),
            Err(StoreError::VersionConflict {
                expected: 1,
                current: 2,
            }),
        ) => via_a,
        (
            Err(StoreError::VersionConflict {
                expected: 1,
                current: 2,
            }),
            Ok(()),
        ) => via_b,
        other => panic!("expected one winner, got {other:?}"),
    };
    assert_eq!(a.latest(&name("other")).await.unwrap(), winner);
    assert_eq!(b.latest(&name("other")).await.unwrap(), winner);
}

/// A lease made through another instance after this one connected comes
/// through the watch, dated by this instance's clock when it arrives:
/// granted at the clock's now, one TTL to its deadline. (What a store
/// opened later reads at start-up is a conformance case.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_brought_by_the_watch_is_dated_by_this_instances_clock() {
    let etcd = Etcd::start().await;
    let ring = name("cache");
    let ttl = Duration::from_secs(30);
    let a = EtcdStore::connect(options(&etcd, 10), Arc::new(SystemClock))
        .await
        .unwrap();
    a.create_ring(&first("cache").0).await.unwrap();
    let clock = crate::conformance::clock_at(0);
    let b = EtcdStore::connect(options(&etcd, 10), clock.clone())
        .await
        .unwrap();
    let node = NodeId::new("after").unwrap();
    let after = a
        .grant_lease(&ring, &node, ttl, SystemClock.now())
        .await
        .unwrap();
    let now = clock.now();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while b.leases(&ring, now).is_empty() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the watch never brought the lease"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        b.leases(&ring, now),
        HashMap::from([(
            node,
            Lease {
                id: after.id,
                ttl,
                deadline: now + ttl,
                last_heartbeat: now,
                released: false,
            }
        )])
    );
}

/// Version 4 of `jump_chain("heavy")` as its version record holds it: the
/// bucket order as runs.
const RUNS_VALUE: &str = r#"{"version":4,"created_at":"2025-06-15T15:06:43.123456789Z","config":{"algorithm":"jump","hash":"xxh3","vnodes_per_weight":160,"replication_factor":3,"zone_aware":false},"fingerprint":"fcb34de3d0f9a18d8a1918bca10104dc84b12cafed5e2adc14970f1b7b203426","bucket_runs":[[null,2],["node-3",3]],"change":{"ops":[{"op":"remove","id":"node-2"}],"reason":"remove node-2","role":"admin","moved_fraction":0.4000000000000001},"before":[{"id":"node-2","node":{"id":"node-2","address":"node-2.internal:11211","weight":2,"labels":{"rack":"r1"},"state":"active"}}]}"#;

/// The same record as values written before bucket orders were stored as
/// runs (and `table_size` for `maglev` only) hold it: one entry per bucket.
const PER_BUCKET_VALUE: &str = r#"{"version":4,"created_at":"2025-06-15T15:06:43.123456789Z","config":{"algorithm":"jump","hash":"xxh3","vnodes_per_weight":160,"table_size":65537,"replication_factor":3,"zone_aware":false},"fingerprint":"fcb34de3d0f9a18d8a1918bca10104dc84b12cafed5e2adc14970f1b7b203426","buckets":[null,null,"node-3","node-3","node-3"],"change":{"ops":[{"op":"remove","id":"node-2"}],"reason":"remove node-2","role":"admin","moved_fraction":0.4000000000000001},"before":[{"id":"node-2","node":{"id":"node-2","address":"node-2.internal:11211","weight":2,"labels":{"rack":"r1"},"state":"active"}}]}"#;

const VERSION_4: &str = "/ringd/versions/heavy/00000000000000000004";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jump_orders_are_stored_as_runs_and_old_per_bucket_values_still_read() {
    let etcd = Etcd::start().await;
    let versions = crate::conformance::jump_chain("heavy");
    store_all(
        &EtcdStore::connect(options(&etcd, 10), Arc::new(SystemClock))
            .await
            .unwrap(),
        &versions,
    )
    .await;
    let mut client = etcd.client().await;
    let stored = client.get(VERSION_4, None).await.unwrap();
    assert_eq!(stored.kvs()[0].value_str().unwrap(), RUNS_VALUE);

    client.put(VERSION_4, PER_BUCKET_VALUE, None).await.unwrap();
    let store = EtcdStore::connect(options(&etcd, 10), Arc::new(SystemClock))
        .await
        .unwrap();
    let ring = name("heavy");
    let read = store.snapshot(&ring, 4).await.unwrap();
    assert_eq!(read, versions[3]);
    assert_eq!(store.latest(&ring).await.unwrap(), versions[3]);
    assert_eq!(
        read.placement().unwrap().fingerprint().to_string(),
        "fcb34de3d0f9a18d8a1918bca10104dc84b12cafed5e2adc14970f1b7b203426"
    );
}

/// Five nodes at weight 1,000,000: a bucket order of 5,000,000 entries is
/// five runs, so each version record stays far below etcd's request limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heavy_jump_ring_fits_in_etcd() {
    let etcd = Etcd::start().await;
    let store = EtcdStore::connect(options(&etcd, 10), Arc::new(SystemClock))
        .await
        .unwrap();
    let (mut s, mut placement) = crate::conformance::first_with("heavy", Algorithm::Jump);
    store.create_ring(&s).await.unwrap();
    for i in 0..5 {
        let mut node = NodeRecord::new(NodeId::new(format!("node-{i}")).unwrap());
        node.weight = Weight::new(1_000_000).unwrap();
        let p = s
            .propose(
                &placement,
                vec![ChangeOp::Upsert { node }],
                None,
                Role::Admin,
                crate::conformance::at(i + 1),
            )
            .unwrap()
            .unwrap();
        store.commit(&p.snapshot).await.unwrap();
        (s, placement) = (p.snapshot, p.placement);
    }
    let read = store.latest(&name("heavy")).await.unwrap();
    assert_eq!(read, s);
    assert_eq!(read.bucket_runs.as_ref().unwrap().runs().len(), 5);
    assert_eq!(read.bucket_runs.as_ref().unwrap().bucket_count(), 5_000_000);
    let mut client = etcd.client().await;
    let stored = client
        .get("/ringd/versions/heavy/00000000000000000006", None)
        .await
        .unwrap();
    let value: serde_json::Value = serde_json::from_slice(stored.kvs()[0].value()).unwrap();
    assert_eq!(
        value["bucket_runs"],
        serde_json::json!([
            ["node-0", 1_000_000],
            ["node-1", 1_000_000],
            ["node-2", 1_000_000],
            ["node-3", 1_000_000],
            ["node-4", 1_000_000]
        ])
    );
    assert_eq!(
        read.placement().unwrap().fingerprint(),
        placement.fingerprint()
    );
}
