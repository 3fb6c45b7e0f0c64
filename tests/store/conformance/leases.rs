//! Conformance: the leases of self-registered nodes. A lease is granted,
//! renewed and released at the `now` it is given, read back from memory
//! exactly, refused when it is not the caller's, kept per ring, ended by
//! forgetting, and found again by a store opened later on the same data.
//!
//! Expiry is the backends' own: SQLite expires a lease when the clock
//! passes its deadline, etcd when etcd lets its lease go, in real time.
//! Each backend's tests check it.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use ringd::ring::{Clock, LeaseId, ManualClock, NodeHealth, RingName};
use ringd::store::{Lease, LeaseError, Store, StoreError};
use time::OffsetDateTime;

use super::{clock_at, first, name, node, Backend};

/// Long enough that no etcd lease behind a case's leases runs out, in
/// real time, while the case runs.
const TTL: Duration = Duration::from_secs(30);

/// A store on `backend` dated by a fresh manual clock, with ring `cache`.
async fn ready(backend: &impl Backend) -> (Arc<ManualClock>, Arc<dyn Store>, RingName) {
    let clock = clock_at(0);
    let store = backend.open(clock.clone()).await;
    store.create_ring(&first("cache").0).await.unwrap();
    (clock, store, name("cache"))
}

/// A live lease `id` last renewed at `at`.
fn live(id: LeaseId, ttl: Duration, at: OffsetDateTime) -> Lease {
    Lease {
        id,
        ttl,
        deadline: at + ttl,
        last_heartbeat: at,
        released: false,
    }
}

/// Moves `clock` on by `secs` and returns the new time.
fn later(clock: &ManualClock, secs: i64) -> OffsetDateTime {
    clock.advance(time::Duration::seconds(secs));
    clock.now()
}

pub(crate) async fn a_grant_is_dated_by_its_now_and_read_from_memory(backend: impl Backend) {
    let (clock, store, ring) = ready(&backend).await;
    let now = clock.now();
    let a = store
        .grant_lease(&ring, &node("a"), TTL, now)
        .await
        .unwrap();
    assert_eq!(a, live(a.id, TTL, now));
    let short = Duration::from_secs(5);
    let b = store
        .grant_lease(&ring, &node("b"), short, now)
        .await
        .unwrap();
    assert_eq!(b, live(b.id, short, now));
    assert_ne!(a.id, b.id, "every lease has an id of its own");
    assert_eq!(
        store.leases(&ring, now),
        HashMap::from([(node("a"), a), (node("b"), b)])
    );

    // A ring that does not exist gets no lease.
    let missing = name("missing");
    let refused = store
        .grant_lease(&missing, &node("a"), TTL, now)
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, LeaseError::Store(StoreError::RingNotFound(r)) if *r == missing),
        "{refused:?}"
    );
    assert_eq!(store.leases(&missing, now), HashMap::new());
}

pub(crate) async fn a_renewal_extends_from_now_and_keeps_the_id(backend: impl Backend) {
    let (clock, store, ring) = ready(&backend).await;
    let a = node("a");
    let granted = store
        .grant_lease(&ring, &a, TTL, clock.now())
        .await
        .unwrap();

    let now = later(&clock, 4);
    let renewed = store.renew_lease(&ring, &a, granted.id, now).await.unwrap();
    assert_eq!(renewed, live(granted.id, TTL, now));
    assert_eq!(store.leases(&ring, now)[&a], renewed);

    // Registering again while the lease is live renews it.
    let now = later(&clock, 3);
    let again = store.grant_lease(&ring, &a, TTL, now).await.unwrap();
    assert_eq!(again, live(granted.id, TTL, now));

    // So does registering with another TTL, which then applies.
    let now = later(&clock, 1);
    let longer = TTL * 2;
    let changed = store.grant_lease(&ring, &a, longer, now).await.unwrap();
    assert_eq!(changed, live(granted.id, longer, now));
    assert_eq!(store.leases(&ring, now)[&a], changed);
    let now = later(&clock, 2);
    let renewed = store.renew_lease(&ring, &a, granted.id, now).await.unwrap();
    assert_eq!(renewed, live(granted.id, longer, now));
}

pub(crate) async fn leases_not_held_are_refused(backend: impl Backend) {
    let (clock, store, ring) = ready(&backend).await;
    let now = clock.now();
    let (a, b) = (node("a"), node("b"));
    let of_a = store.grant_lease(&ring, &a, TTL, now).await.unwrap();
    let of_b = store.grant_lease(&ring, &b, TTL, now).await.unwrap();
    let held = store.leases(&ring, now);

    let now = later(&clock, 1);
    let unknown = LeaseId::from_bits(42);
    let refused = store.renew_lease(&ring, &a, unknown, now).await;
    assert!(matches!(refused, Err(LeaseError::NotFound)), "{refused:?}");
    let refused = store.release_lease(&ring, &a, unknown, now).await;
    assert!(matches!(refused, Err(LeaseError::NotFound)), "{refused:?}");
    // Another node's lease, whether or not the caller holds one.
    for caller in [&b, &node("c")] {
        let refused = store.renew_lease(&ring, caller, of_a.id, now).await;
        assert!(
            matches!(&refused, Err(LeaseError::OfAnotherNode { owner }) if *owner == a),
            "{refused:?}"
        );
        let refused = store.release_lease(&ring, caller, of_a.id, now).await;
        assert!(
            matches!(&refused, Err(LeaseError::OfAnotherNode { owner }) if *owner == a),
            "{refused:?}"
        );
    }
    // The refusals changed nothing: no renewal moved a deadline.
    assert_eq!(store.leases(&ring, now), held);
    assert_eq!(held[&b], of_b);
}

pub(crate) async fn a_release_leaves_and_ends_the_lease(backend: impl Backend) {
    let (clock, store, ring) = ready(&backend).await;
    let a = node("a");
    let granted_at = clock.now();
    let granted = store.grant_lease(&ring, &a, TTL, granted_at).await.unwrap();

    let now = later(&clock, 2);
    let left = store
        .release_lease(&ring, &a, granted.id, now)
        .await
        .unwrap();
    assert_eq!(
        left,
        Lease {
            id: granted.id,
            ttl: TTL,
            deadline: now,
            last_heartbeat: granted_at,
            released: true,
        }
    );
    assert_eq!(left.health(now), NodeHealth::Left);
    assert_eq!(store.leases(&ring, now)[&a], left);

    // The lease is over: a second release and a renewal are refused.
    let now = later(&clock, 1);
    let again = store.release_lease(&ring, &a, granted.id, now).await;
    assert!(matches!(again, Err(LeaseError::Released)), "{again:?}");
    let renewed = store.renew_lease(&ring, &a, granted.id, now).await;
    assert!(matches!(renewed, Err(LeaseError::Released)), "{renewed:?}");
    assert_eq!(store.leases(&ring, now)[&a], left);

    // Registering again is a new lease, and the old id is held no more.
    let back = store.grant_lease(&ring, &a, TTL, now).await.unwrap();
    assert_ne!(back.id, granted.id);
    assert_eq!(back, live(back.id, TTL, now));
    assert_eq!(store.leases(&ring, now)[&a], back);
    let old = store.renew_lease(&ring, &a, granted.id, now).await;
    assert!(matches!(old, Err(LeaseError::NotFound)), "{old:?}");
}

pub(crate) async fn forgotten_leases_are_gone(backend: impl Backend) {
    let (clock, store, ring) = ready(&backend).await;
    let now = clock.now();
    let (a, b, c) = (node("a"), node("b"), node("c"));
    let of_a = store.grant_lease(&ring, &a, TTL, now).await.unwrap();
    let of_b = store.grant_lease(&ring, &b, TTL, now).await.unwrap();
    store.grant_lease(&ring, &c, TTL, now).await.unwrap();

    store
        .forget_leases(&ring, &[a.clone(), c.clone()])
        .await
        .unwrap();
    assert_eq!(store.leases(&ring, now), HashMap::from([(b.clone(), of_b)]));
    let renewed = store.renew_lease(&ring, &a, of_a.id, now).await;
    assert!(matches!(renewed, Err(LeaseError::NotFound)), "{renewed:?}");
    // Forgetting a node that holds no lease is no error.
    store
        .forget_leases(&ring, std::slice::from_ref(&a))
        .await
        .unwrap();
    store.forget_leases(&ring, &[]).await.unwrap();

    // Registering again starts afresh.
    let now = later(&clock, 1);
    let back = store.grant_lease(&ring, &a, TTL, now).await.unwrap();
    assert_ne!(back.id, of_a.id);
    assert_eq!(back, live(back.id, TTL, now));
}

pub(crate) async fn leases_stay_in_their_ring(backend: impl Backend) {
    let (clock, store, cache) = ready(&backend).await;
    let other = name("other");
    store.create_ring(&first("other").0).await.unwrap();
    let now = clock.now();
    let a = node("a");
    let in_cache = store.grant_lease(&cache, &a, TTL, now).await.unwrap();
    let in_other = store.grant_lease(&other, &a, TTL, now).await.unwrap();
    assert_ne!(in_cache.id, in_other.id);
    assert_eq!(
        store.leases(&cache, now),
        HashMap::from([(a.clone(), in_cache.clone())])
    );
    assert_eq!(
        store.leases(&other, now),
        HashMap::from([(a.clone(), in_other.clone())])
    );
    let refused = store.renew_lease(&other, &a, in_cache.id, now).await;
    assert!(matches!(refused, Err(LeaseError::NotFound)), "{refused:?}");

    // Forgetting, and deleting a ring, touch no other ring's leases.
    store
        .forget_leases(&cache, std::slice::from_ref(&a))
        .await
        .unwrap();
    assert_eq!(store.leases(&cache, now), HashMap::new());
    assert_eq!(
        store.leases(&other, now),
        HashMap::from([(a.clone(), in_other.clone())])
    );
    store
        .grant_lease(&cache, &node("b"), TTL, now)
        .await
        .unwrap();
    store.delete_ring(&cache, None).await.unwrap();
    store.forget_ring_leases(&cache);
    assert_eq!(store.leases(&cache, now), HashMap::new());
    let now = later(&clock, 1);
    assert_eq!(
        store.leases(&other, now),
        HashMap::from([(a.clone(), in_other.clone())])
    );
    let renewed = store
        .renew_lease(&other, &a, in_other.id, now)
        .await
        .unwrap();
    assert_eq!(renewed, live(in_other.id, TTL, now));
}

/// What every backend promises a store opened later on the same data (a
/// restart, or another instance): it knows every lease, a live one dated
/// by its own clock as renewed when it opened (one full TTL of grace), a
/// released one as it was released, and it renews the live one by its id.
pub(crate) async fn a_store_opened_later_dates_the_leases_by_its_clock(backend: impl Backend) {
    let (clock, store, ring) = ready(&backend).await;
    let (a, b) = (node("a"), node("b"));
    let of_a = store
        .grant_lease(&ring, &a, TTL, clock.now())
        .await
        .unwrap();
    let of_b = store
        .grant_lease(&ring, &b, TTL, clock.now())
        .await
        .unwrap();
    let released_at = later(&clock, 3);
    store
        .release_lease(&ring, &b, of_b.id, released_at)
        .await
        .unwrap();
    drop(store);

    let opened = later(&clock, 500);
    let store = backend.open(clock.clone()).await;
    assert_eq!(
        store.leases(&ring, opened),
        HashMap::from([
            (a.clone(), live(of_a.id, TTL, opened)),
            (
                b.clone(),
                Lease {
                    id: of_b.id,
                    ttl: TTL,
                    deadline: released_at,
                    last_heartbeat: released_at,
                    released: true,
                }
            ),
        ])
    );
    let now = later(&clock, 1);
    let renewed = store.renew_lease(&ring, &a, of_a.id, now).await.unwrap();
    assert_eq!(renewed, live(of_a.id, TTL, now));
    let refused = store.renew_lease(&ring, &b, of_b.id, now).await;
    assert!(matches!(refused, Err(LeaseError::Released)), "{refused:?}");
}
