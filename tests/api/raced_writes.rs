//! What a write reports when another writer commits while it runs: its own
//! outcome, never a reading of the ring afterwards. The race is made
//! certain, not likely: the server runs on a store that commits another
//! writer's change through the same service at a chosen step of the
//! request, then goes on as the store it wraps.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use async_trait::async_trait;
use reqwest::StatusCode;
use ringd::api::auth::AuthConfig;
use ringd::api::{router, AppState};
use ringd::placement::{Algorithm, NodeId, RingConfig};
use ringd::ring::rollout::{RolloutId, RolloutRecord};
use ringd::ring::{
    ChangeOp, ClientAck, LeaseId, MembershipPolicy, NodeRecord, OnLeave, RingName, Role, Snapshot,
    SystemClock,
};
use ringd::service::{ChangeRequest, RingService};
use ringd::store::leadership::Fence;
use ringd::store::sqlite::SqliteStore;
use ringd::store::{
    HistoryEntry, Lease, LeaseError, LeaseStore, RolloutStore, Store, StoreError, StoreEvent,
};
use serde_json::json;
use time::OffsetDateTime;
use tokio::sync::broadcast;

use crate::support::api::{expect_json, TestApi};

/// The step of a request at which the other writer commits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// Right after the store released a lease, before `on_leave` runs:
    /// the other writer is another request to the same service.
    LeaseReleased,
    /// When a change asks whether the ring is in a rollout, after it read
    /// the ring and before it commits: the other writer is another
    /// instance, committing to the store beneath this one's cache (this
    /// instance's own writers queue behind the change).
    RolloutChecked,
}

/// A SQLite store that, once, at [`Step`], commits another writer's
/// upsert of a node.
struct RacingStore {
    inner: SqliteStore,
    service: Mutex<Weak<RingService>>,
    race: Mutex<Option<(Step, NodeRecord)>>,
}

impl RacingStore {
    async fn at(&self, step: Step, ring: &RingName) {
        let node = {
            let mut race = self.race.lock().unwrap();
            match race.take() {
                Some((s, node)) if s == step => node,
                other => {
                    *race = other;
                    return;
                }
            }
        };
        let op = ChangeOp::Upsert { node };
        match step {
            Step::LeaseReleased => {
                let service = self.service.lock().unwrap().upgrade().unwrap();
                let request = ChangeRequest {
                    reason: Some("the other writer".into()),
                    ..ChangeRequest::of(vec![op.into()])
                };
                service
                    .rings()
                    .apply(ring, request, Role::Admin)
                    .await
                    .unwrap();
            }
            Step::RolloutChecked => {
                let latest = self.inner.latest(ring).await.unwrap();
                let placement = latest.placement().unwrap();
                let next = latest
                    .propose(
                        &placement,
                        vec![op],
                        None,
                        Role::Admin,
                        OffsetDateTime::now_utc(),
                    )
                    .unwrap()
                    .unwrap();
                self.inner.commit(&next.snapshot).await.unwrap();
            }
        }
    }
}

#[async_trait]
impl LeaseStore for RacingStore {
    async fn grant_lease(
        &self,
        ring: &RingName,
        node: &NodeId,
        ttl: Duration,
        now: OffsetDateTime,
    ) -> Result<Lease, LeaseError> {
        self.inner.grant_lease(ring, node, ttl, now).await
    }

    async fn renew_lease(
        &self,
        ring: &RingName,
        node: &NodeId,
        id: LeaseId,
        now: OffsetDateTime,
    ) -> Result<Lease, LeaseError> {
        self.inner.renew_lease(ring, node, id, now).await
    }

    async fn release_lease(
        &self,
        ring: &RingName,
        node: &NodeId,
        id: LeaseId,
        now: OffsetDateTime,
    ) -> Result<Lease, LeaseError> {
        let released = self.inner.release_lease(ring, node, id, now).await?;
        self.at(Step::LeaseReleased, ring).await;
        Ok(released)
    }

    fn leases(&self, ring: &RingName, now: OffsetDateTime) -> HashMap<NodeId, Lease> {
        self.inner.leases(ring, now)
    }

    async fn forget_leases(&self, ring: &RingName, nodes: &[NodeId]) -> Result<(), StoreError> {
        self.inner.forget_leases(ring, nodes).await
    }

    fn forget_ring_leases(&self, ring: &RingName) {
        self.inner.forget_ring_leases(ring)
    }
}

#[async_trait]
impl RolloutStore for RacingStore {
    async fn create_rollout(&self, record: RolloutRecord) -> Result<RolloutRecord, StoreError> {
        self.inner.create_rollout(record).await
    }

    async fn update_rollout(&self, record: &RolloutRecord) -> Result<(), StoreError> {
        self.inner.update_rollout(record).await
    }

    async fn rollout(&self, ring: &RingName, id: RolloutId) -> Result<RolloutRecord, StoreError> {
        self.inner.rollout(ring, id).await
    }

    async fn rollouts(&self, ring: &RingName) -> Result<Vec<RolloutRecord>, StoreError> {
        self.inner.rollouts(ring).await
    }

    async fn latest_rollout(&self, ring: &RingName) -> Result<Option<RolloutRecord>, StoreError> {
        self.inner.latest_rollout(ring).await
    }

    async fn active_rollout(&self, ring: &RingName) -> Result<Option<RolloutRecord>, StoreError> {
        self.at(Step::RolloutChecked, ring).await;
        self.inner.active_rollout(ring).await
    }

    async fn active_rollouts(&self) -> Result<Vec<RolloutRecord>, StoreError> {
        self.inner.active_rollouts().await
    }
}

#[async_trait]
impl Store for RacingStore {
    async fn create_ring(&self, first: &Snapshot) -> Result<(), StoreError> {
        self.inner.create_ring(first).await
    }

    async fn delete_ring(&self, ring: &RingName, expected: Option<u64>) -> Result<(), StoreError> {
        self.inner.delete_ring(ring, expected).await
    }

    async fn list_rings(&self) -> Result<Vec<Snapshot>, StoreError> {
        self.inner.list_rings().await
    }

    async fn latest(&self, ring: &RingName) -> Result<Snapshot, StoreError> {
        self.inner.latest(ring).await
    }

    async fn snapshot(&self, ring: &RingName, version: u64) -> Result<Snapshot, StoreError> {
        self.inner.snapshot(ring, version).await
    }

    async fn history_after(
        &self,
        ring: &RingName,
        after: u64,
    ) -> Result<Vec<HistoryEntry>, StoreError> {
        self.inner.history_after(ring, after).await
    }

    async fn commit(&self, next: &Snapshot) -> Result<(), StoreError> {
        self.inner.commit(next).await
    }

    async fn commit_fenced(&self, next: &Snapshot, fence: &Fence) -> Result<(), StoreError> {
        self.inner.commit_fenced(next, fence).await
    }

    fn subscribe(&self) -> broadcast::Receiver<StoreEvent> {
        self.inner.subscribe()
    }

    async fn confirmed_versions(&self) -> Result<BTreeMap<RingName, u64>, StoreError> {
        self.inner.confirmed_versions().await
    }

    async fn put_ack(&self, ring: &RingName, ack: &ClientAck) -> Result<(), StoreError> {
        self.inner.put_ack(ring, ack).await
    }

    async fn list_acks(
        &self,
        ring: &RingName,
        now: OffsetDateTime,
    ) -> Result<Vec<ClientAck>, StoreError> {
        self.inner.list_acks(ring, now).await
    }
}

/// A server in this task on a [`RacingStore`], with ring `r` at version 1
/// under `membership`; the store, the API and the directory the store
/// lives in.
async fn serve(membership: MembershipPolicy) -> (Arc<RacingStore>, TestApi, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(RacingStore {
        inner: SqliteStore::open(&dir.path().join("ringd.db"), 100, &SystemClock).unwrap(),
        service: Mutex::new(Weak::new()),
        race: Mutex::new(None),
    });
    let service = RingService::with_clock(store.clone(), Arc::new(SystemClock));
    *store.service.lock().unwrap() = Arc::downgrade(&service);
    service
        .rings()
        .create_with(
            RingName::new("r").unwrap(),
            RingConfig::new(Algorithm::Ring),
            membership,
            Role::Admin,
        )
        .await
        .unwrap();
    let app = router(AppState::new(service, AuthConfig::new(None, None)));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (store, TestApi::new(&base, "r"), dir)
}

fn record(id: &str) -> NodeRecord {
    NodeRecord::new(NodeId::new(id).unwrap())
}

/// The version and `changed` of a lease operation's answer.
fn reported(body: &serde_json::Value) -> (u64, bool) {
    (
        body["version"].as_u64().unwrap(),
        body["changed"].as_bool().unwrap(),
    )
}

#[tokio::test]
async fn a_release_whose_on_leave_changes_nothing_says_so_though_another_writer_committed() {
    // `on_leave: drain` on a node an operator drained already: the
    // release has nothing to commit.
    let policy = MembershipPolicy {
        on_leave: OnLeave::Drain,
        ..MembershipPolicy::default()
    };
    let (store, s, _dir) = serve(policy).await;
    let r = s.put("/v1/rings/r/nodes/a/lease", json!({})).await;
    let registered = expect_json(r, StatusCode::CREATED).await;
    assert_eq!(reported(&registered), (2, true));
    let lease = registered["lease_id"].as_str().unwrap().to_owned();
    let r = s
        .put("/v1/rings/r/nodes/a", json!({"state": "draining"}))
        .await;
    assert_eq!(expect_json(r, StatusCode::OK).await["version"], 3);

    *store.race.lock().unwrap() = Some((Step::LeaseReleased, record("other")));
    let r = s
        .delete(&format!("/v1/rings/r/nodes/a/lease/{lease}"))
        .await;
    let released = expect_json(r, StatusCode::OK).await;
    // Version 4 is the other writer's; this release committed nothing.
    assert_eq!(reported(&released), (4, false));
    assert_eq!(released["health"], "left");
    assert!(store.race.lock().unwrap().is_none(), "the race ran");
    let nodes = s.get_ok("/v1/rings/r/nodes").await;
    let states: Vec<(&str, &str)> = nodes["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["id"].as_str().unwrap(), n["state"].as_str().unwrap()))
        .collect();
    assert_eq!(nodes["version"], 4);
    assert_eq!(states, vec![("a", "draining"), ("other", "active")]);
}

#[tokio::test]
async fn a_node_put_that_another_writer_created_first_is_an_update_not_a_creation() {
    let (store, s, _dir) = serve(MembershipPolicy::default()).await;
    // Between this PUT's read of the ring and its commit, another
    // instance registers the same node with another weight: the PUT's
    // commit loses, and its retry updates the node the other made.
    let first = NodeRecord {
        weight: ringd::placement::Weight::new(5).unwrap(),
        ..record("a")
    };
    *store.race.lock().unwrap() = Some((Step::RolloutChecked, first));
    let r = s.put("/v1/rings/r/nodes/a", json!({"weight": 7})).await;
    let answer = expect_json(r, StatusCode::OK).await;
    assert!(store.race.lock().unwrap().is_none(), "the race ran");
    assert_eq!(
        (
            answer["base_version"].as_u64(),
            answer["version"].as_u64(),
            answer["changed"].as_bool()
        ),
        (Some(2), Some(3), Some(true))
    );
    let node = s.get_ok("/v1/rings/r/nodes/a").await;
    assert_eq!(node["weight"], 7);
}
