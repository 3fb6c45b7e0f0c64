//! A version as its `snapshots` row holds it, and how every shape that row
//! has held is read back.
//!
//! The `snapshot` column is the whole version as JSON, the source of
//! truth; `created_at`, `fingerprint` and `change` repeat parts of it so
//! that history is listed without decoding node lists (schema 1). The
//! record is this store's own: the domain's `Snapshot` is not serialized
//! as it is, so a change to it cannot change the file by accident, and
//! the golden files under `tests/store/golden/sqlite/` pin every shape.
//!
//! Shapes written before, and still read:
//! - the jump bucket order one entry per bucket (`buckets`), before it
//!   was written as runs (`bucket_runs`);
//! - no `membership` (versions written before policies existed), or the
//!   default policy written out, before the default was left out: both
//!   read as the default policy;
//! - `table_size` in every config, before it was written for `maglev`
//!   (or where it is not the default) only;
//! - nodes without `ramp` (full), and changes without `idempotency_key`.

use serde::{Deserialize, Serialize};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use crate::placement::{Fingerprint, RingConfig};
use crate::ring::{
    BucketOrder, ChangeRecord, MembershipPolicy, NodeRecord, RingName, ServerIds, Snapshot,
    TableBytes,
};
use crate::store::{Cause, StoreError};

/// The `snapshot` column, as written: the version's parts, borrowed.
#[derive(Serialize)]
struct SnapshotOut<'a> {
    ring: &'a RingName,
    version: u64,
    #[serde(with = "time::serde::rfc3339")]
    created_at: OffsetDateTime,
    config: &'a RingConfig,
    /// The default policy is not written, so rings that never set one are
    /// written as before policies existed.
    #[serde(skip_serializing_if = "Option::is_none")]
    membership: Option<&'a MembershipPolicy>,
    nodes: &'a [NodeRecord],
    fingerprint: &'a Fingerprint,
    #[serde(skip_serializing_if = "Option::is_none")]
    bucket_runs: Option<&'a BucketOrder>,
    #[serde(skip_serializing_if = "Option::is_none")]
    server_ids: Option<&'a ServerIds>,
    #[serde(skip_serializing_if = "Option::is_none")]
    table: Option<&'a TableBytes>,
    #[serde(skip_serializing_if = "Option::is_none")]
    table_moves: Option<&'a TableBytes>,
    change: &'a ChangeRecord,
}

/// The `snapshot` column, as read: any shape it has held.
#[derive(Deserialize)]
struct SnapshotIn {
    ring: RingName,
    version: u64,
    #[serde(with = "time::serde::rfc3339")]
    created_at: OffsetDateTime,
    config: RingConfig,
    #[serde(default)]
    membership: MembershipPolicy,
    nodes: Vec<NodeRecord>,
    fingerprint: Fingerprint,
    /// Runs, or the per-bucket `buckets` of rows written before runs.
    #[serde(default, alias = "buckets")]
    bucket_runs: Option<BucketOrder>,
    #[serde(default)]
    server_ids: Option<ServerIds>,
    #[serde(default)]
    table: Option<TableBytes>,
    #[serde(default)]
    table_moves: Option<TableBytes>,
    change: ChangeRecord,
}

impl From<SnapshotIn> for Snapshot {
    fn from(s: SnapshotIn) -> Self {
        Snapshot {
            ring: s.ring,
            version: s.version,
            created_at: s.created_at,
            config: s.config,
            membership: s.membership,
            nodes: s.nodes,
            fingerprint: s.fingerprint,
            bucket_runs: s.bucket_runs,
            server_ids: s.server_ids,
            table: s.table,
            table_moves: s.table_moves,
            change: s.change,
        }
    }
}

/// A version encoded for its `snapshots` row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SnapshotRow {
    /// `version`.
    pub(super) version: i64,
    /// `created_at`, RFC 3339.
    pub(super) created_at: String,
    /// `fingerprint`, 64 hex digits.
    pub(super) fingerprint: String,
    /// `change`, the change record as JSON.
    pub(super) change: String,
    /// `snapshot`, the whole version as JSON.
    pub(super) snapshot: String,
}

impl SnapshotRow {
    /// The row of `s`.
    pub(super) fn encode(s: &Snapshot) -> Result<Self, StoreError> {
        let bad = |what: &str, e: Cause| {
            StoreError::unavailable_from(
                format!(
                    "cannot encode {what} of ring `{}` version {}",
                    s.ring, s.version
                ),
                e,
            )
        };
        let out = SnapshotOut {
            ring: &s.ring,
            version: s.version,
            created_at: s.created_at,
            config: &s.config,
            membership: (!s.membership.is_default()).then_some(&s.membership),
            nodes: &s.nodes,
            fingerprint: &s.fingerprint,
            bucket_runs: s.bucket_runs.as_ref(),
            server_ids: s.server_ids.as_ref(),
            table: s.table.as_ref(),
            table_moves: s.table_moves.as_ref(),
            change: &s.change,
        };
        Ok(Self {
            version: to_sql(s.version)?,
            created_at: s
                .created_at
                .format(&Rfc3339)
                .map_err(|e| bad("time", e.into()))?,
            fingerprint: s.fingerprint.to_string(),
            change: serde_json::to_string(&s.change).map_err(|e| bad("change", e.into()))?,
            snapshot: serde_json::to_string(&out).map_err(|e| bad("snapshot", e.into()))?,
        })
    }
}

/// Decodes a `snapshot` column and checks it is the version its key
/// names, so a mix-up in the file is reported instead of being served as
/// another ring.
pub(super) fn decode_snapshot(
    ring: &RingName,
    version: u64,
    json: &str,
) -> Result<Snapshot, StoreError> {
    let s: SnapshotIn = serde_json::from_str(json).map_err(|e| {
        StoreError::corrupt_from(format!("snapshot of ring `{ring}` version {version}"), e)
    })?;
    if s.ring != *ring || s.version != version {
        return Err(StoreError::corrupt(format!(
            "the row for ring `{ring}` version {version} holds ring `{}` version {}",
            s.ring, s.version
        )));
    }
    Ok(s.into())
}

/// Decodes a `change` column.
pub(super) fn decode_change(json: &str) -> Result<ChangeRecord, serde_json::Error> {
    serde_json::from_str(json)
}

/// A version as SQLite stores it (signed 64-bit).
pub(super) fn to_sql(version: u64) -> Result<i64, StoreError> {
    i64::try_from(version)
        .map_err(|_| StoreError::unavailable(format!("version {version} is too large to store")))
}
