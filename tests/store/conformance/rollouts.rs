//! Rollout records: numbered per ring, one active at a time, updates
//! guarded by revision, listed newest first, gone with their ring.

use std::sync::Arc;
use std::time::Duration;

use ringd::placement::Fingerprint;
use ringd::ring::rollout::{
    OnGateTimeout, PlannedRollout, RolloutId, RolloutPolicy, RolloutRecord, RolloutState,
};
use ringd::ring::{RingName, Role};
use ringd::store::{Store, StoreError};

use super::{at, first, name};

fn record(ring: &RingName) -> RolloutRecord {
    RolloutRecord {
        state: RolloutState::Running,
        ..RolloutRecord::planned(PlannedRollout {
            ring: ring.clone(),
            created_at: at(5),
            role: Role::Admin,
            reason: Some("add cache-k".into()),
            ops: Vec::new(),
            policy: RolloutPolicy {
                steps: Some(5),
                max_moved_fraction_per_step: None,
                min_dwell: Duration::from_secs(2),
                gate: 0.95,
                gate_timeout: Duration::from_secs(60),
                on_gate_timeout: OnGateTimeout::Pause,
                max_moves_per_node_per_step: None,
            },
            base_version: 1,
            base_fingerprint: Fingerprint([1; 32]),
            target_fingerprint: Fingerprint([2; 32]),
            direct_moved_fraction: 0.1,
            steps: Vec::new(),
            notes: vec!["a note".into()],
        })
    }
}

pub(crate) async fn rollouts_one_active_per_ring(store: Arc<dyn Store>) {
    let (a, b) = (name("roll-a"), name("roll-b"));
    let missing = store.create_rollout(record(&a)).await.unwrap_err();
    assert!(matches!(missing, StoreError::RingNotFound(r) if r == a));
    store.create_ring(&first("roll-a").0).await.unwrap();
    store.create_ring(&first("roll-b").0).await.unwrap();

    let first = store.create_rollout(record(&a)).await.unwrap();
    assert_eq!((first.id, first.revision), (RolloutId(1), 1));
    assert_eq!(store.rollout(&a, RolloutId(1)).await.unwrap(), first);
    // One active rollout per ring; the other ring is free.
    let busy = store.create_rollout(record(&a)).await.unwrap_err();
    assert!(
        matches!(&busy, StoreError::RolloutActive { ring, id } if *ring == a && *id == RolloutId(1)),
        "{busy:?}"
    );
    assert_eq!(
        store.create_rollout(record(&b)).await.unwrap().id,
        RolloutId(1)
    );
    assert_eq!(store.active_rollout(&a).await.unwrap(), Some(first.clone()));
    let active: Vec<(String, u64)> = store
        .active_rollouts()
        .await
        .unwrap()
        .into_iter()
        .map(|r| (r.ring.to_string(), r.id.0))
        .collect();
    assert_eq!(active, [("roll-a".into(), 1), ("roll-b".into(), 1)]);

    // An update names the revision it read, plus one.
    let mut next = first.clone();
    next.position = 1;
    next.revision = 2;
    store.update_rollout(&next).await.unwrap();
    let stale = store.update_rollout(&next).await.unwrap_err();
    assert!(
        matches!(stale, StoreError::RolloutConflict { .. }),
        "{stale:?}"
    );
    assert_eq!(store.rollout(&a, RolloutId(1)).await.unwrap().position, 1);

    // Finishing releases the ring: the next rollout is number 2.
    next.state = RolloutState::Done;
    next.finished_at = Some(at(9));
    next.revision = 3;
    store.update_rollout(&next).await.unwrap();
    assert_eq!(store.active_rollout(&a).await.unwrap(), None);
    let second = store.create_rollout(record(&a)).await.unwrap();
    assert_eq!(second.id, RolloutId(2));
    let ids: Vec<u64> = store
        .rollouts(&a)
        .await
        .unwrap()
        .iter()
        .map(|r| r.id.0)
        .collect();
    assert_eq!(ids, [2, 1]);
    assert_eq!(store.rollout(&a, RolloutId(1)).await.unwrap(), next);

    let unknown = store.rollout(&a, RolloutId(9)).await.unwrap_err();
    assert!(matches!(
        unknown,
        StoreError::RolloutNotFound {
            id: RolloutId(9),
            ..
        }
    ));
    let mut ghost = record(&a);
    ghost.id = RolloutId(9);
    ghost.revision = 2;
    let ghost = store.update_rollout(&ghost).await.unwrap_err();
    assert!(
        matches!(ghost, StoreError::RolloutNotFound { .. }),
        "{ghost:?}"
    );

    // Deleting the ring deletes its rollouts.
    store.delete_ring(&a, None).await.unwrap();
    store.create_ring(&first_again("roll-a")).await.unwrap();
    assert!(store.rollouts(&a).await.unwrap().is_empty());
    assert_eq!(store.active_rollout(&a).await.unwrap(), None);
    assert_eq!(
        store.create_rollout(record(&a)).await.unwrap().id,
        RolloutId(1)
    );
}

fn first_again(ring: &str) -> ringd::ring::Snapshot {
    first(ring).0
}
