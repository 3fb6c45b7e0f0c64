//! Snapshots: complete versions and the history.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::changes::{ChangeView, OpView, RoleName};
use super::nodes::NodeView;
use super::rings::RingConfigView;
#[cfg(feature = "server")]
use super::schema::{VersionCursorSchema, WaitSchema};
use std::collections::BTreeMap;

use crate::ring::{BucketOrder, ServerIds, Snapshot, TableBytes};

/// A complete, immutable ring version.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct SnapshotView {
    /// The ring's name.
    pub ring: String,
    /// Starts at 1 when the ring is created; +1 per accepted change.
    pub version: u64,
    /// When the version was committed (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[cfg_attr(feature = "server", schema(value_type = String, format = DateTime))]
    pub created_at: OffsetDateTime,
    /// Algorithm, hash and parameters.
    pub config: RingConfigView,
    /// Every node (active, draining or joining), sorted by id.
    pub nodes: Vec<NodeView>,
    /// SHA-256 of the placement's canonical encoding (64 hex digits).
    pub fingerprint: String,
    /// `jump` only: the persisted bucket order (`null` marks a hole).
    // Held as the snapshot's shared runs and written out one id per bucket
    // while the response is serialized, never collected per bucket.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "per_bucket"
    )]
    #[cfg_attr(feature = "server", schema(value_type = Option<Vec<Option<String>>>))]
    pub buckets: Option<BucketOrder>,
    /// `haproxy` only: every node's numeric server id (HAProxy's `id`),
    /// which the node keeps for life, and the next id the ring will give.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_ids: Option<ServerIdsView>,
    /// `table` only: the slots that changed since the previous version,
    /// base64 of `u32` count, then per slot `u32` partition, `u8` slot and
    /// the node's index in this version's active nodes (`u16`, or `u32`
    /// above 65,535 nodes), little-endian. A client holding the previous
    /// version applies them; without them (or without that version) it
    /// downloads `…/snapshots/{v}/table`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "server", schema(value_type = Option<String>, format = Byte))]
    pub table_moves: Option<TableBytes>,
    /// What produced this version.
    pub change: ChangeView,
}

/// A `haproxy` ring's server ids.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct ServerIdsView {
    /// Node id → server id, for every node of the version.
    pub ids: BTreeMap<String, u32>,
    /// Above every id the ring has given: the id of its next new node.
    pub next: u32,
}

impl From<&ServerIds> for ServerIdsView {
    fn from(s: &ServerIds) -> Self {
        Self {
            ids: s.ids.iter().map(|(n, &i)| (n.to_string(), i)).collect(),
            next: s.next,
        }
    }
}

fn per_bucket<S: serde::Serializer>(order: &Option<BucketOrder>, s: S) -> Result<S::Ok, S::Error> {
    order.as_ref().map(BucketOrder::per_bucket).serialize(s)
}

impl From<&Snapshot> for SnapshotView {
    fn from(s: &Snapshot) -> Self {
        Self {
            ring: s.ring.to_string(),
            version: s.version,
            created_at: s.created_at,
            config: RingConfigView::of(&s.config, &s.membership),
            nodes: s.nodes.iter().map(NodeView::from).collect(),
            fingerprint: s.fingerprint.to_string(),
            buckets: s.bucket_runs.clone(),
            server_ids: s.server_ids.as_ref().map(Into::into),
            table_moves: s.table_moves.clone(),
            change: (&s.change).into(),
        }
    }
}

/// One version in a ring's history.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct HistoryEntryView {
    /// The version.
    pub version: u64,
    /// When it was committed (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[cfg_attr(feature = "server", schema(value_type = String, format = DateTime))]
    pub created_at: OffsetDateTime,
    /// Its fingerprint.
    pub fingerprint: String,
    /// The ops that produced it.
    pub ops: Vec<OpView>,
    /// The operator's reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The acting token's role.
    pub role: RoleName,
    /// Share of the keyspace that changed owner against the previous version.
    pub moved_fraction: f64,
    /// The `Idempotency-Key` the change was sent with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
}

/// A ring's retained history.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct HistoryView {
    /// The ring.
    pub ring: String,
    /// One entry per retained version, oldest first.
    pub entries: Vec<HistoryEntryView>,
}

/// Long-poll parameters of `GET …/snapshot`.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::IntoParams))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "server", into_params(parameter_in = Query))]
pub struct SnapshotQuery {
    /// The version the client holds: answer as soon as the ring is past it.
    #[cfg_attr(feature = "server", param(value_type = Option<VersionCursorSchema>))]
    pub after: Option<u64>,
    /// With `after`: how long to wait for a newer version before answering
    /// 304, e.g. `30s` (`1ms` to `5m`; up to 1/16 more is added as jitter).
    /// Without it the answer is immediate.
    #[cfg_attr(feature = "server", param(value_type = Option<WaitSchema>))]
    pub wait: Option<String>,
}
