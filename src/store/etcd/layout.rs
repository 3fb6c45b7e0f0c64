//! Where the etcd store keeps what, and how each value is encoded.
//!
//! Documented for operators in `docs/etcd-layout.md`; keep the two in step.
//! Every value is JSON. Ring names cannot contain `/`, so the per-ring
//! prefixes below never overlap (`nodes/a/` is not a prefix of `nodes/a-1/`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::placement::{Fingerprint, NodeId, RingConfig};
use crate::ring::{
    BucketOrder, ChangeRecord, ClientId, MembershipPolicy, NodeRecord, RingName, ServerIds,
    Snapshot, TableBytes,
};
use crate::store::{Cause, StoreError};

/// Largest transaction the store sends, in bytes of keys and values. etcd
/// refuses requests over 1.5 MiB by default (`--max-request-bytes`); the
/// margin covers the protobuf framing and the compares.
pub const MAX_TXN_BYTES: usize = 1_400 * 1024;

/// The keys of one store, all under a configurable prefix.
#[derive(Debug, Clone)]
pub(super) struct Keys {
    prefix: String,
}

impl Keys {
    /// Keys under `prefix` (a trailing `/` is dropped).
    pub(super) fn new(prefix: &str) -> Self {
        Self {
            prefix: prefix.trim_end_matches('/').to_owned(),
        }
    }

    /// The layout-version key: the number of migrations applied.
    pub(super) fn layout(&self) -> String {
        format!("{}/layout", self.prefix)
    }

    /// A key given relative to the prefix (by a migration).
    pub(super) fn below(&self, relative: &str) -> String {
        format!("{}/{}", self.prefix, relative.trim_start_matches('/'))
    }

    /// The name of the etcd lock held while migrating.
    pub(super) fn migrate_lock(&self) -> String {
        format!("{}/lock/migrate", self.prefix)
    }

    /// Prefix of every ring's meta key; watched for events and listed.
    pub(super) fn rings(&self) -> String {
        format!("{}/rings/", self.prefix)
    }

    /// A ring's meta key: latest and oldest retained version.
    pub(super) fn meta(&self, ring: &RingName) -> String {
        format!("{}{ring}", self.rings())
    }

    /// The ring named by a meta key, if `key` is one.
    pub(super) fn ring_of_meta(&self, key: &[u8]) -> Result<RingName, StoreError> {
        let key = std::str::from_utf8(key).map_err(|e| corrupt("meta key", e))?;
        let name = key
            .strip_prefix(&self.rings())
            .ok_or_else(|| StoreError::corrupt(format!("`{key}` is not a ring key")))?;
        RingName::new(name).map_err(|e| corrupt("ring name", e))
    }

    /// Prefix of a ring's latest node records.
    pub(super) fn nodes(&self, ring: &RingName) -> String {
        format!("{}/nodes/{ring}/", self.prefix)
    }

    /// One node record of a ring's latest version.
    pub(super) fn node(&self, ring: &RingName, id: &NodeId) -> String {
        format!("{}{}", self.nodes(ring), id.as_str())
    }

    /// Prefix of a ring's version records.
    pub(super) fn versions(&self, ring: &RingName) -> String {
        format!("{}/versions/{ring}/", self.prefix)
    }

    /// One version record; zero-padded so key order is version order.
    pub(super) fn version(&self, ring: &RingName, version: u64) -> String {
        format!("{}{version:020}", self.versions(ring))
    }

    /// Prefix of a ring's rollout records.
    pub(super) fn rollouts(&self, ring: &RingName) -> String {
        format!("{}/rollouts/{ring}/", self.prefix)
    }

    /// One rollout record; the id zero-padded so keys sort by id.
    pub(super) fn rollout(&self, ring: &RingName, id: u64) -> String {
        format!("{}{id:020}", self.rollouts(ring))
    }

    /// Prefix of every ring's active-rollout key.
    pub(super) fn active_rollouts(&self) -> String {
        format!("{}/rollout-active/", self.prefix)
    }

    /// A ring's active-rollout key: the active rollout's id, absent when
    /// the ring has none.
    pub(super) fn active_rollout(&self, ring: &RingName) -> String {
        format!("{}{ring}", self.active_rollouts())
    }

    /// Prefix of a ring's client acks.
    pub(super) fn acks(&self, ring: &RingName) -> String {
        format!("{}/acks/{ring}/", self.prefix)
    }

    /// One client's ack of a ring (client ids cannot contain `/`).
    pub(super) fn ack(&self, ring: &RingName, client: &ClientId) -> String {
        format!("{}{}", self.acks(ring), client.as_str())
    }
}

/// A ring's meta value. Its `mod_revision` is what commits compare on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct RingMeta {
    /// The latest version.
    pub latest: u64,
    /// The oldest retained version.
    pub oldest: u64,
}

/// A node's record before a change: `None` if the change added it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct BeforeImage {
    /// The node.
    pub id: NodeId,
    /// Its record in the previous version, if it had one.
    pub node: Option<NodeRecord>,
}

/// One version, without its node list. The nodes of an older version are
/// rebuilt from the latest nodes by undoing newer versions' `before`
/// images, so no value ever holds a whole 10,000-node list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct VersionRecord {
    /// The version (checked against the key on reading).
    pub version: u64,
    /// When it was committed.
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// Algorithm, hash and parameters.
    pub config: RingConfig,
    /// The membership policy; values written before policies existed
    /// read as the default, which is not written.
    #[serde(default, skip_serializing_if = "MembershipPolicy::is_default")]
    pub membership: MembershipPolicy,
    /// Placement fingerprint.
    pub fingerprint: Fingerprint,
    /// For `jump`, the bucket order: written as runs (`bucket_runs`), read
    /// as runs or as the per-bucket `buckets` of values written before runs.
    #[serde(default, alias = "buckets", skip_serializing_if = "Option::is_none")]
    pub bucket_runs: Option<BucketOrder>,
    /// For `haproxy`, every node's server id and the next id to give.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_ids: Option<ServerIds>,
    /// For `table`, the table body (base64).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<TableBytes>,
    /// For `table`, the moves since the previous version (base64).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_moves: Option<TableBytes>,
    /// What produced it.
    pub change: ChangeRecord,
    /// The previous records of every node this version changed.
    pub before: Vec<BeforeImage>,
}

impl VersionRecord {
    /// The record of `s`, given the nodes it changed.
    pub(super) fn of(s: &Snapshot, before: Vec<BeforeImage>) -> Self {
        Self {
            version: s.version,
            created_at: s.created_at,
            config: s.config.clone(),
            membership: s.membership,
            fingerprint: s.fingerprint,
            bucket_runs: s.bucket_runs.clone(),
            server_ids: s.server_ids.clone(),
            table: s.table.clone(),
            table_moves: s.table_moves.clone(),
            change: s.change.clone(),
            before,
        }
    }

    /// The snapshot of this version with `nodes` (sorted by id).
    pub(super) fn into_snapshot(self, ring: RingName, nodes: Vec<NodeRecord>) -> Snapshot {
        Snapshot {
            ring,
            version: self.version,
            created_at: self.created_at,
            config: self.config,
            membership: self.membership,
            nodes,
            fingerprint: self.fingerprint,
            bucket_runs: self.bucket_runs,
            server_ids: self.server_ids,
            table: self.table,
            table_moves: self.table_moves,
            change: self.change,
        }
    }
}

/// Turns `nodes`, the nodes of a version, into those of the version
/// before it, given the before-images that version recorded.
pub(super) fn undo(nodes: &mut BTreeMap<NodeId, NodeRecord>, before: Vec<BeforeImage>) {
    for b in before {
        match b.node {
            Some(node) => nodes.insert(b.id, node),
            None => nodes.remove(&b.id),
        };
    }
}

/// A corruption error naming what failed to decode.
pub(super) fn corrupt(what: &'static str, e: impl Into<Cause>) -> StoreError {
    StoreError::corrupt_from(what, e)
}

/// Encodes a value; our types always serialize, but never panic on it.
pub(super) fn encode<T: Serialize>(what: &str, value: &T) -> Result<Vec<u8>, StoreError> {
    serde_json::to_vec(value)
        .map_err(|e| StoreError::unavailable_from(format!("cannot encode {what}"), e))
}

/// Decodes the value of `key`.
pub(super) fn decode<T: for<'de> Deserialize<'de>>(
    key: &[u8],
    value: &[u8],
) -> Result<T, StoreError> {
    serde_json::from_slice(value).map_err(|e| {
        StoreError::corrupt_from(format!("value of `{}`", String::from_utf8_lossy(key)), e)
    })
}
