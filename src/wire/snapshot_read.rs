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
        minimum_ring_size: c.minimum_ring_size,
        maximum_ring_size: c.maximum_ring_size,
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
        AlgorithmName::EnvoyRingHash => Algorithm::EnvoyRingHash,
        AlgorithmName::EnvoyMaglev => Algorithm::EnvoyMaglev,
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
        HashName::Xxh64 => HashFunction::Xxh64,
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
mod tests;
