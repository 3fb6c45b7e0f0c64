use std::time::Duration;

use time::OffsetDateTime;

use super::*;
use crate::placement::Placement;
use crate::ring::{ExactLayout, OnJoin, RequestedOp};

fn at(seconds: i64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(seconds) * 1_000_000_000 + 123_456_789)
        .unwrap()
}

fn node(id: &str) -> NodeRecord {
    NodeRecord::new(NodeId::new(id).unwrap())
}

/// `next` applied to `s`, which places as `p`.
fn apply(s: &Snapshot, p: &Placement, ops: Vec<RequestedOp>) -> (Snapshot, Placement) {
    let next = s
        .propose(p, ops, Some("next".into()), Role::Admin, at(2))
        .unwrap()
        .expect("a change");
    (next.snapshot, next.placement)
}

/// What a client makes of `s` as ringd sends it.
fn sent_and_read(s: &Snapshot) -> Result<Snapshot, SnapshotViewError> {
    let body = serde_json::to_string(&SnapshotView::from(s)).unwrap();
    Snapshot::try_from(serde_json::from_str::<SnapshotView>(&body).unwrap())
}

#[test]
fn every_part_of_a_snapshot_reads_back_as_sent() {
    let policy = MembershipPolicy {
        on_join: OnJoin::Joining,
        drain_after: Some(PolicyDelay::new(Duration::from_secs(30)).unwrap()),
        on_leave: OnLeave::Drain,
        max_unhealthy_fraction: UnhealthyFraction::new(0.25).unwrap(),
        ..MembershipPolicy::default()
    };
    let ring = RingName::new("cache").unwrap();
    let config = RingConfig {
        vnodes_per_weight: 40,
        ..RingConfig::new(Algorithm::Ring)
    };
    let (first, p) = Snapshot::first_with(ring, config, policy, Role::Admin, at(1)).unwrap();
    let mut full = node("a");
    full.address = Some("10.0.0.1:11211".into());
    full.weight = Weight::new(3).unwrap();
    full.zone = Some(Zone::new("z1").unwrap());
    full.labels.insert("rack".into(), "r1".into());
    full.hash_key = Some(HashKey::new("old-a").unwrap());
    full.ramp = Ramp::new(16_384).unwrap();
    let mut joining = node("b");
    joining.state = NodeState::Joining;
    let patch: RingConfigSpec = serde_json::from_str(r#"{"replication_factor": 2}"#).unwrap();
    let tighter: MembershipPolicySpec =
        serde_json::from_str(r#"{"forget_after": "10m", "on_join": "active"}"#).unwrap();
    let ops = vec![
        RequestedOp::Op(ChangeOp::Upsert { node: full }),
        RequestedOp::Op(ChangeOp::Upsert { node: joining }),
        RequestedOp::UpdateConfig(patch, Some(tighter)),
    ];
    let (mut s, _) = apply(&first, &p, ops);
    s.change.idempotency_key = Some(IdempotencyKey::try_from("key-1".to_owned()).unwrap());
    assert_eq!(sent_and_read(&first).unwrap(), first);
    assert_eq!(sent_and_read(&s).unwrap(), s);
    // The set_config op recorded the policy the patch made.
    let ChangeOp::SetConfig { membership, .. } = &s.change.ops[2] else {
        panic!("{:?}", s.change.ops[2]);
    };
    assert_eq!(membership.unwrap().on_join, OnJoin::Active);
    // Version 1 of a ring with the default policy records none.
    let (plain, _) = Snapshot::first(
        RingName::new("plain").unwrap(),
        RingConfig::new(Algorithm::Maglev),
        Role::Anonymous,
        at(1),
    )
    .unwrap();
    assert_eq!(sent_and_read(&plain).unwrap(), plain);
}

#[test]
fn a_jump_order_reads_back_and_a_table_arrives_without_its_body() {
    let (jump, p) = Snapshot::first(
        RingName::new("j").unwrap(),
        RingConfig::new(Algorithm::Jump),
        Role::Admin,
        at(1),
    )
    .unwrap();
    let ops = ["a", "b", "c"].map(|id| RequestedOp::Op(ChangeOp::Upsert { node: node(id) }));
    let (jump, p) = apply(&jump, &p, ops.to_vec());
    let remove = RequestedOp::Op(ChangeOp::Remove {
        id: NodeId::new("b").unwrap(),
    });
    let (jump, _) = apply(&jump, &p, vec![remove]);
    let runs = jump.bucket_runs.as_ref().unwrap().runs();
    assert!(runs.iter().any(|r| r.owner.is_none()), "a hole: {runs:?}");
    assert_eq!(sent_and_read(&jump).unwrap(), jump);

    let config = RingConfig {
        partitions: 4096,
        ..RingConfig::new(Algorithm::Table)
    };
    let (table, p) =
        Snapshot::first(RingName::new("t").unwrap(), config, Role::Admin, at(1)).unwrap();
    let ops =
        ["a", "b", "c", "d", "e"].map(|id| RequestedOp::Op(ChangeOp::Upsert { node: node(id) }));
    let (table, p) = apply(&table, &p, ops[..4].to_vec());
    // A fifth node takes a fifth of the slots: the moves are shorter
    // than the table, so the version carries them.
    let (table, _) = apply(&table, &p, ops[4..].to_vec());
    assert!(table.table.is_some() && table.table_moves.is_some());
    let read = sent_and_read(&table).unwrap();
    assert_eq!(read.table, None);
    assert_eq!(
        read,
        Snapshot {
            table: None,
            ..table.clone()
        }
    );
    // With the body downloaded, it places as the server's.
    let body = table.table.as_ref().unwrap().as_bytes();
    let placement = read.placement_with_table(body).unwrap();
    assert_eq!(placement.fingerprint(), table.fingerprint);
    assert_eq!(ExactLayout::of(&read), None);
}

#[test]
fn a_view_the_server_could_not_have_sent_is_refused_naming_why() {
    let (s, _) = Snapshot::first(
        RingName::new("r").unwrap(),
        RingConfig::default(),
        Role::Admin,
        at(1),
    )
    .unwrap();
    let view = || SnapshotView::from(&s);
    let refused = |v: SnapshotView| Snapshot::try_from(v).unwrap_err();
    assert_eq!(
        refused(SnapshotView {
            fingerprint: "00".into(),
            ..view()
        }),
        SnapshotViewError::Fingerprint(BadFingerprint)
    );
    let mut v = view();
    v.ring = "Not A Name".into();
    assert_eq!(
        refused(v),
        SnapshotViewError::Ring(RingError::InvalidRingName("Not A Name".into()))
    );
    let mut v = view();
    v.config.membership.as_mut().unwrap().drain_after = Some("500ms".into());
    assert_eq!(
        refused(v).to_string(),
        "membership policy `drain_after`: `500ms` is out of range; use 1s to 720h, or null for off"
    );
    let mut v = view();
    v.config.vnodes_per_weight = 0;
    assert!(matches!(
        refused(v),
        SnapshotViewError::Ring(RingError::Placement(PlacementError::VnodesOutOfRange {
            value: 0,
            ..
        }))
    ));
    let mut v = view();
    v.change.idempotency_key = Some(String::new());
    assert_eq!(
        refused(v),
        SnapshotViewError::Ring(RingError::InvalidIdempotencyKey(String::new()))
    );
}
