//! A snapshot read back from the wire: the one conversion from the body
//! that `GET …/snapshot`, `…/snapshots/{v}` and the watch events carry
//! ([`SnapshotView`], which the CLI prints as it is) into the domain's
//! [`Snapshot`], which the Rust client verifies and places keys with.
//!
//! The inverse of the views' `From` conversions. Each value passes the
//! checks the server applies when it takes that value in (ring and node
//! names, node records, configs, policies, idempotency keys), so a client
//! never holds a snapshot the server could not have made. Node text is
//! not checked for refused characters: versions stored before that rule
//! may hold some, and the server sends them as stored.

use thiserror::Error;

use super::changes::{ChangeView, OpView, RoleName};
use super::membership::{MembershipPolicyView, OnJoinName, OnLeaveName};
use super::nodes::{NodeStateName, NodeView};
use super::rings::{AlgorithmName, HashName, RingConfigView};
use super::snapshots::{ServerIdsView, SnapshotView};
use crate::placement::{
    Algorithm, BadFingerprint, HashFunction, HashKey, HashTag, NodeId, NodeState, PlacementError,
    Ramp, RingConfig, RingConfigSpec, Weight, Zone,
};
use crate::ring::durations::parse_duration;
use crate::ring::membership_policy::{ChangeRate, PolicyDelay, UnhealthyFraction};
use crate::ring::{
    ChangeOp, ChangeRecord, IdempotencyKey, MembershipPolicy, MembershipPolicySpec, NodeRecord,
    NodeRecordSpec, OnJoin, OnLeave, RingError, RingName, Role, ServerIds, Snapshot,
};

/// Why a snapshot view is not a snapshot ringd could have made.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SnapshotViewError {
    /// A ring name, node, config or idempotency key that the ring's rules
    /// refuse.
    #[error(transparent)]
    Ring(#[from] RingError),
    /// The fingerprint is not 64 lowercase hex digits.
    #[error(transparent)]
    Fingerprint(#[from] BadFingerprint),
    /// A membership policy value outside its range.
    #[error("membership policy `{field}`: {reason}")]
    Policy {
        /// The policy's field.
        field: &'static str,
        /// What is wrong with its value.
        reason: String,
    },
}

impl From<PlacementError> for SnapshotViewError {
    fn from(e: PlacementError) -> Self {
        Self::Ring(e.into())
    }
}

impl TryFrom<SnapshotView> for Snapshot {
    type Error = SnapshotViewError;

    fn try_from(v: SnapshotView) -> Result<Self, Self::Error> {
        let (config, membership) = config_of(v.config)?;
        Ok(Snapshot {
            ring: RingName::new(v.ring)?,
            version: v.version,
            created_at: v.created_at,
            config,
            // A snapshot's config always shows its policy.
            membership: membership.unwrap_or_default(),
            nodes: v.nodes.into_iter().map(node_of).collect::<Result<_, _>>()?,
            fingerprint: v.fingerprint.parse()?,
            bucket_runs: v.buckets,
            server_ids: v.server_ids.map(server_ids_of).transpose()?,
            // Never sent: a client downloads it, or applies the moves.
            table: None,
            table_moves: v.table_moves,
            change: change_of(v.change)?,
        })
    }
}

/// A config view as the placement config and, if it shows one, the
/// policy (always in a snapshot's config; in a recorded `set_config`,
/// only if the op set it).
fn config_of(
    c: RingConfigView,
) -> Result<(RingConfig, Option<MembershipPolicy>), SnapshotViewError> {
    let config = RingConfig::try_from(RingConfigSpec {
        algorithm: Some(algorithm_of(c.algorithm)),
        hash: Some(hash_of(c.hash)),
        vnodes_per_weight: Some(c.vnodes_per_weight.into()),
        table_size: c.table_size,
        replication_factor: Some(c.replication_factor.into()),
        zone_aware: Some(c.zone_aware),
        partitions: c.partitions.map(Into::into),
        avalanche: c.avalanche,
        hash_tag: Some(c.hash_tag.as_deref().map(HashTag::new).transpose()?),
    })?;
    Ok((config, c.membership.map(policy_of).transpose()?))
}

fn server_ids_of(v: ServerIdsView) -> Result<ServerIds, SnapshotViewError> {
    Ok(ServerIds {
        ids: v
            .ids
            .into_iter()
            .map(|(n, i)| Ok((NodeId::new(n)?, i)))
            .collect::<Result<_, PlacementError>>()?,
        next: v.next,
    })
}

fn algorithm_of(a: AlgorithmName) -> Algorithm {
    match a {
        AlgorithmName::Ring => Algorithm::Ring,
        AlgorithmName::Ketama => Algorithm::Ketama,
        AlgorithmName::Maglev => Algorithm::Maglev,
        AlgorithmName::Jump => Algorithm::Jump,
        AlgorithmName::Rendezvous => Algorithm::Rendezvous,
        AlgorithmName::Table => Algorithm::Table,
        AlgorithmName::Nginx => Algorithm::Nginx,
        AlgorithmName::Haproxy => Algorithm::Haproxy,
        AlgorithmName::Twemproxy => Algorithm::Twemproxy,
    }
}

fn hash_of(h: HashName) -> HashFunction {
    match h {
        HashName::Xxh3 => HashFunction::Xxh3,
        HashName::Md5 => HashFunction::Md5,
        HashName::Sha256 => HashFunction::Sha256,
        HashName::Murmur3 => HashFunction::Murmur3,
        HashName::Fnv1a64 => HashFunction::Fnv1a64,
        HashName::Fnv164 => HashFunction::Fnv164,
        HashName::Fnv1a32 => HashFunction::Fnv1a32,
        HashName::Fnv132 => HashFunction::Fnv132,
        HashName::Crc32a => HashFunction::Crc32a,
        HashName::OneAtATime => HashFunction::OneAtATime,
        HashName::Murmur => HashFunction::Murmur,
        HashName::Jenkins => HashFunction::Jenkins,
        HashName::Hsieh => HashFunction::Hsieh,
        HashName::Crc32 => HashFunction::Crc32,
        HashName::Sdbm => HashFunction::Sdbm,
        HashName::Djb2 => HashFunction::Djb2,
        HashName::Wt6 => HashFunction::Wt6,
    }
}

fn policy_of(p: MembershipPolicyView) -> Result<MembershipPolicy, SnapshotViewError> {
    let refused =
        |field: &'static str| move |reason: String| SnapshotViewError::Policy { field, reason };
    let delay = |field: &'static str, text: Option<String>| {
        text.map(|t| parse_duration(&t).and_then(PolicyDelay::new))
            .transpose()
            .map_err(refused(field))
    };
    let spec = MembershipPolicySpec {
        on_join: Some(match p.on_join {
            OnJoinName::Active => OnJoin::Active,
            OnJoinName::Joining => OnJoin::Joining,
        }),
        activate_after: Some(delay("activate_after", p.activate_after)?),
        drain_after: Some(delay("drain_after", p.drain_after)?),
        forget_after: Some(delay("forget_after", p.forget_after)?),
        on_leave: Some(match p.on_leave {
            OnLeaveName::Remove => OnLeave::Remove,
            OnLeaveName::Drain => OnLeave::Drain,
        }),
        max_unhealthy_fraction: Some(
            UnhealthyFraction::new(p.max_unhealthy_fraction)
                .map_err(refused("max_unhealthy_fraction"))?,
        ),
        max_auto_changes_per_minute: Some(
            ChangeRate::new(p.max_auto_changes_per_minute.into())
                .map_err(refused("max_auto_changes_per_minute"))?,
        ),
    };
    Ok(spec.into())
}

fn node_of(n: NodeView) -> Result<NodeRecord, SnapshotViewError> {
    let spec = NodeRecordSpec {
        id: Some(NodeId::new(n.id)?),
        address: n.address,
        weight: Some(Weight::new(n.weight.into())?),
        zone: n.zone.map(Zone::new).transpose()?,
        labels: n.labels,
        state: Some(match n.state {
            NodeStateName::Active => NodeState::Active,
            NodeStateName::Draining => NodeState::Draining,
            NodeStateName::Joining => NodeState::Joining,
        }),
        hash_key: n.hash_key.map(HashKey::new).transpose()?,
        ramp: n.ramp.map(|r| Ramp::new(r.into())).transpose()?,
    };
    Ok(spec.into_record(None)?)
}

fn op_of(op: OpView) -> Result<ChangeOp, SnapshotViewError> {
    Ok(match op {
        OpView::Upsert { node } => ChangeOp::Upsert {
            node: node_of(node)?,
        },
        OpView::Remove { id } => ChangeOp::Remove {
            id: NodeId::new(id)?,
        },
        OpView::SetConfig { config } => {
            let (config, membership) = config_of(config)?;
            ChangeOp::SetConfig { config, membership }
        }
    })
}

fn change_of(c: ChangeView) -> Result<ChangeRecord, SnapshotViewError> {
    Ok(ChangeRecord {
        ops: c.ops.into_iter().map(op_of).collect::<Result<_, _>>()?,
        reason: c.reason,
        role: match c.role {
            RoleName::Admin => Role::Admin,
            RoleName::Anonymous => Role::Anonymous,
        },
        moved_fraction: c.moved_fraction,
        idempotency_key: c
            .idempotency_key
            .map(IdempotencyKey::try_from)
            .transpose()?,
    })
}

#[cfg(test)]
mod tests {
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
        let ops = ["a", "b", "c", "d", "e"]
            .map(|id| RequestedOp::Op(ChangeOp::Upsert { node: node(id) }));
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
}
