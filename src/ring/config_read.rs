//! How snapshots and `set_config` ops are read back: from the store,
//! where the policy sits beside the config (`membership`), and from the
//! wire, where the config view carries it inside (`config.membership`).
//! Both forms read into the same [`Snapshot`] and [`ChangeOp`]; versions
//! stored before policies existed read with no policy recorded.

use serde::Deserialize;
use time::OffsetDateTime;

use super::bucket_order::BucketOrder;
use super::change::{ChangeOp, ChangeRecord};
use super::membership_policy::MembershipPolicy;
use super::record::NodeRecord;
use super::snapshot::Snapshot;
use super::table_bytes::TableBytes;
use super::RingName;
use crate::placement::json_integer;
use crate::placement::{Algorithm, Fingerprint, HashFunction, NodeId, RingConfig, RingConfigSpec};

/// A config as written anywhere: the placement fields, and perhaps the
/// policy among them.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFields {
    algorithm: Option<Algorithm>,
    hash: Option<HashFunction>,
    #[serde(default, deserialize_with = "json_integer::option")]
    vnodes_per_weight: Option<u64>,
    #[serde(default, deserialize_with = "json_integer::option")]
    table_size: Option<u64>,
    #[serde(default, deserialize_with = "json_integer::option")]
    replication_factor: Option<u64>,
    zone_aware: Option<bool>,
    #[serde(default, deserialize_with = "json_integer::option")]
    partitions: Option<u64>,
    #[serde(default)]
    membership: Option<MembershipPolicy>,
}

/// A config read back, with the policy it carried inside, if any.
#[derive(Deserialize)]
#[serde(try_from = "ConfigFields")]
pub(super) struct ConfigRead {
    config: RingConfig,
    membership: Option<MembershipPolicy>,
}

impl TryFrom<ConfigFields> for ConfigRead {
    type Error = crate::placement::PlacementError;
    fn try_from(f: ConfigFields) -> Result<Self, Self::Error> {
        let spec = RingConfigSpec {
            algorithm: f.algorithm,
            hash: f.hash,
            vnodes_per_weight: f.vnodes_per_weight,
            table_size: f.table_size,
            replication_factor: f.replication_factor,
            zone_aware: f.zone_aware,
            partitions: f.partitions,
        };
        Ok(Self {
            config: RingConfig::try_from(spec)?,
            membership: f.membership,
        })
    }
}

/// A snapshot as stored or sent.
#[derive(Deserialize)]
pub(super) struct SnapshotRead {
    ring: RingName,
    version: u64,
    #[serde(with = "time::serde::rfc3339")]
    created_at: OffsetDateTime,
    config: ConfigRead,
    #[serde(default)]
    membership: Option<MembershipPolicy>,
    nodes: Vec<NodeRecord>,
    fingerprint: Fingerprint,
    #[serde(default, alias = "buckets")]
    bucket_runs: Option<BucketOrder>,
    #[serde(default)]
    table: Option<TableBytes>,
    #[serde(default)]
    table_moves: Option<TableBytes>,
    change: ChangeRecord,
}

impl From<SnapshotRead> for Snapshot {
    fn from(s: SnapshotRead) -> Self {
        Snapshot {
            ring: s.ring,
            version: s.version,
            created_at: s.created_at,
            membership: s.membership.or(s.config.membership).unwrap_or_default(),
            config: s.config.config,
            nodes: s.nodes,
            fingerprint: s.fingerprint,
            bucket_runs: s.bucket_runs,
            table: s.table,
            table_moves: s.table_moves,
            change: s.change,
        }
    }
}

/// A recorded op as stored or sent.
#[derive(Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub(super) enum ChangeOpRead {
    Upsert {
        node: NodeRecord,
    },
    Remove {
        id: NodeId,
    },
    SetConfig {
        config: ConfigRead,
        #[serde(default)]
        membership: Option<MembershipPolicy>,
    },
}

impl From<ChangeOpRead> for ChangeOp {
    fn from(op: ChangeOpRead) -> Self {
        match op {
            ChangeOpRead::Upsert { node } => ChangeOp::Upsert { node },
            ChangeOpRead::Remove { id } => ChangeOp::Remove { id },
            ChangeOpRead::SetConfig { config, membership } => ChangeOp::SetConfig {
                membership: membership.or(config.membership),
                config: config.config,
            },
        }
    }
}
