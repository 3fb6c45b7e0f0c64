//! The behaviour every `Store` backend must show, written once against the
//! trait so each backend runs the same cases unchanged.
//!
//! A backend's test module invokes
//! [`store_conformance_tests!`] with an async opener
//! `async fn(retention: u64) -> (Guard, Arc<dyn Store>)`: each case gets a
//! fresh, empty store, kept alive (a temporary directory, an etcd prefix
//! …) by `Guard` until the case ends.
//!
//! Leases and the election depend on time and on other instances, so
//! their cases ([`lease_and_leadership_conformance_tests!`]) take a
//! [`Backend`] instead, which opens as many stores on one deployment as a
//! case needs, each dated by a `ManualClock`: every deadline is exact, and
//! no case waits out a TTL.
//!
//! Snapshots are built with the real domain code (`Snapshot::first`,
//! `Snapshot::propose`), so stored data has realistic node lists,
//! fingerprints, bucket orders and change records.

#![allow(dead_code)] // Each backend's test binary uses a different subset of helpers.

mod acks;
mod commits;
mod events;
mod jump;
mod leadership;
mod leases;
mod reads;
mod rings;
mod rollouts;
mod table;

pub(crate) use acks::client_acks;
pub(crate) use commits::{
    commits_are_gapless, concurrent_commits_one_wins, create_then_latest,
    create_twice_is_ring_exists, stale_commit_conflicts,
};
pub(crate) use events::subscribe_sees_writes_in_order;
pub(crate) use jump::{jump_chain, jump_orders_round_trip};
pub(crate) use leadership::the_first_candidate_leads_in_a_term_until_it_resigns;
pub(crate) use leases::{
    a_grant_is_dated_by_its_now_and_read_from_memory, a_release_leaves_and_ends_the_lease,
    a_renewal_extends_from_now_and_keeps_the_id,
    a_store_opened_later_dates_the_leases_by_its_clock, forgotten_leases_are_gone,
    leases_not_held_are_refused, leases_stay_in_their_ring,
};
pub(crate) use reads::{history_order_and_contents, pruned_versions, snapshot_lookup};
pub(crate) use rings::{delete_then_recreate, list_rings_sorted};
pub(crate) use rollouts::rollouts_one_active_per_ring;
pub(crate) use table::tables_round_trip;

use std::sync::Arc;

use ringd::placement::{Algorithm, NodeId, Placement, RingConfig, Weight};
use ringd::ring::{ChangeOp, ManualClock, NodeRecord, RingName, Role, Snapshot};
use ringd::store::Store;
use time::OffsetDateTime;

/// One deployment of a backend (a database file, an etcd prefix) on which
/// a case opens stores, as instances and restarts of ringd would.
pub(crate) trait Backend {
    /// What [`ringd::store::leadership::ClusterState::store`] names it.
    const NAME: &'static str;

    /// A store on this deployment's data that dates what it learns on its
    /// own (leases read when it opens) by `clock`.
    async fn open(&self, clock: Arc<ManualClock>) -> Arc<dyn Store>;
}

/// Defines one `#[tokio::test]` per conformance case, each on a fresh
/// store from `$open`.
#[macro_export]
macro_rules! store_conformance_tests {
    ($open:expr) => {
        $crate::store_conformance_tests!(@cases $open;
            create_then_latest,
            create_twice_is_ring_exists,
            commits_are_gapless,
            stale_commit_conflicts,
            concurrent_commits_one_wins,
            snapshot_lookup,
            history_order_and_contents,
            delete_then_recreate,
            list_rings_sorted,
            subscribe_sees_writes_in_order,
            client_acks,
            jump_orders_round_trip,
            tables_round_trip,
            rollouts_one_active_per_ring,
        );
        #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
        async fn pruned_versions() {
            let (_guard, store) = $open(3).await;
            $crate::conformance::pruned_versions(store).await;
        }
    };
    (@cases $open:expr; $($case:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $case() {
                let (_guard, store) = $open(ringd::store::DEFAULT_RETENTION).await;
                $crate::conformance::$case(store).await;
            }
        )*
    };
}

/// Defines one `#[tokio::test]` per lease and leadership case, each on a
/// fresh deployment from `$start`, an async `fn() -> impl Backend`.
#[macro_export]
macro_rules! lease_and_leadership_conformance_tests {
    ($start:expr) => {
        $crate::lease_and_leadership_conformance_tests!(@cases $start;
            a_grant_is_dated_by_its_now_and_read_from_memory,
            a_renewal_extends_from_now_and_keeps_the_id,
            leases_not_held_are_refused,
            a_release_leaves_and_ends_the_lease,
            forgotten_leases_are_gone,
            leases_stay_in_their_ring,
            a_store_opened_later_dates_the_leases_by_its_clock,
            the_first_candidate_leads_in_a_term_until_it_resigns,
        );
    };
    (@cases $start:expr; $($case:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $case() {
                $crate::conformance::$case($start().await).await;
            }
        )*
    };
}

/// A valid ring name.
pub(crate) fn name(s: &str) -> RingName {
    RingName::new(s).expect("valid ring name")
}

/// A valid node id.
pub(crate) fn node(s: &str) -> NodeId {
    NodeId::new(s).expect("valid node id")
}

/// A manual clock showing `at(secs)`, to the microsecond (a clock keeps
/// no finer time).
pub(crate) fn clock_at(secs: i64) -> Arc<ManualClock> {
    Arc::new(ManualClock::new(at(secs)))
}

/// A fixed instant `secs` after a base, with nanoseconds so that
/// sub-second precision must survive a round trip through the store.
pub(crate) fn at(secs: i64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp_nanos(
        (1_750_000_000 + i128::from(secs)) * 1_000_000_000 + 123_456_789,
    )
    .expect("valid time")
}

/// Version 1 of `ring` on `algorithm`, with its placement.
pub(crate) fn first_with(ring: &str, algorithm: Algorithm) -> (Snapshot, Placement) {
    Snapshot::first(name(ring), RingConfig::new(algorithm), Role::Admin, at(0))
        .expect("first snapshot")
}

/// Version 1 of `ring` on the default `ring` algorithm.
pub(crate) fn first(ring: &str) -> (Snapshot, Placement) {
    first_with(ring, Algorithm::Ring)
}

/// The version after `prev` that registers node `node`, with an address,
/// a weight and a label, as an operator would.
pub(crate) fn add_node(
    prev: &Snapshot,
    placement: &Placement,
    node: &str,
) -> (Snapshot, Placement) {
    let mut record = NodeRecord::new(NodeId::new(node).expect("valid node id"));
    record.address = Some(format!("{node}.internal:11211"));
    record.weight = Weight::new(1 + prev.version % 3).expect("valid weight");
    record
        .labels
        .insert("rack".into(), format!("r{}", prev.version % 2));
    let proposal = prev
        .propose(
            placement,
            vec![ChangeOp::Upsert { node: record }],
            Some(format!("add {node}")),
            Role::Admin,
            at(i64::try_from(prev.version).expect("small version")),
        )
        .expect("valid change")
        .expect("not a no-op");
    (proposal.snapshot, proposal.placement)
}

/// Versions 1..=n of `ring`, each adding one node.
pub(crate) fn chain(ring: &str, n: u64) -> Vec<Snapshot> {
    let (mut snapshot, mut placement) = first(ring);
    let mut out = vec![snapshot.clone()];
    for v in 2..=n {
        (snapshot, placement) = add_node(&snapshot, &placement, &format!("node-{v}"));
        out.push(snapshot.clone());
    }
    out
}

/// Creates the ring and commits every later version of `versions`.
pub(crate) async fn store_all(store: &dyn Store, versions: &[Snapshot]) {
    store.create_ring(&versions[0]).await.expect("create");
    for s in &versions[1..] {
        store.commit(s).await.expect("commit");
    }
}
