//! A service over a real SQLite store in a temporary directory, reading
//! the time from a manual clock, for the service's unit tests.

use std::sync::Arc;

use time::OffsetDateTime;

use super::RingService;
use crate::placement::{Algorithm, NodeId, RingConfig};
use crate::ring::{ChangeOp, ManualClock, NodeRecord, RequestedOp, RingName, Role, Snapshot};
use crate::store::sqlite::SqliteStore;

/// The time `secs` seconds (and `micros` microseconds) after a fixed start.
pub(super) fn at(secs: i64, micros: i64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp(1_750_000_000 + secs).expect("a valid time")
        + time::Duration::microseconds(micros)
}

/// A service, its clock (showing [`at`]`(0, 0)`) and the directory that
/// holds its store, which lives as long as the directory does.
pub(super) fn service(retention: u64) -> (Arc<RingService>, Arc<ManualClock>, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let clock = Arc::new(ManualClock::new(at(0, 0)));
    let store =
        SqliteStore::open(&dir.path().join("ringd.db"), retention, &*clock).expect("the store");
    let service = RingService::with_clock(Arc::new(store), clock.clone());
    (service, clock, dir)
}

/// Creates ring `name` on the default algorithm.
pub(super) async fn create(service: &RingService, name: &str) -> RingName {
    let ring = RingName::new(name).expect("a valid ring name");
    service
        .rings()
        .create(ring.clone(), RingConfig::new(Algorithm::Ring), Role::Admin)
        .await
        .expect("the ring is created");
    ring
}

/// Ring `ring`'s latest snapshot, as the service holds it.
pub(super) async fn latest(service: &RingService, ring: &RingName) -> Arc<Snapshot> {
    let current = service.rings().current(ring).await;
    current.expect("the ring exists").snapshot.clone()
}

/// An op registering node `id` with the default record.
pub(super) fn upsert(id: &str) -> RequestedOp {
    let node = NodeRecord::new(NodeId::new(id).expect("a valid node id"));
    RequestedOp::Op(ChangeOp::Upsert { node })
}

/// An op removing node `id`.
pub(super) fn remove(id: &str) -> RequestedOp {
    RequestedOp::Op(ChangeOp::Remove {
        id: NodeId::new(id).expect("a valid node id"),
    })
}
