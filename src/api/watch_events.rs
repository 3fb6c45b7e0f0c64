//! What a watch stream sends: its query, its event bodies and their
//! framing on the wire.

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};

use super::model::{RoleName, SnapshotView};
use crate::ring::Snapshot;

/// What each event carries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum WatchMode {
    /// The complete snapshot, as `GET …/snapshot` returns it.
    #[default]
    Full,
    /// Version, fingerprint and change summary only ([`LightEvent`]).
    Light,
}

/// Query parameters of a watch.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct WatchQuery {
    /// Resume after this version: the stream starts with version
    /// `after + 1`. `Last-Event-ID` takes precedence.
    pub after: Option<u64>,
    /// `full` (default) or `light`.
    pub mode: Option<WatchMode>,
}

/// The data of a `light`-mode event.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct LightEvent {
    /// The ring.
    pub ring: String,
    /// The version.
    pub version: u64,
    /// Its fingerprint.
    pub fingerprint: String,
    /// When it was committed (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// Number of ops in the change that produced it.
    pub ops: usize,
    /// Share of the keyspace that changed owner.
    pub moved_fraction: f64,
    /// The operator's reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The acting token's role.
    pub role: RoleName,
}

/// The data of a `keepalive` event, and of a `deleted` event (without
/// version and fingerprint).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct KeepaliveEvent {
    /// The ring.
    pub ring: String,
    /// The newest version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
    /// Its fingerprint.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
}

/// The data of a full-mode event: the snapshot as `GET …/snapshot` has it.
pub fn full_data(s: &Snapshot) -> Vec<u8> {
    // Serializing plain data into memory cannot fail.
    serde_json::to_vec(&SnapshotView::from(s)).unwrap_or_default()
}

/// The data of a light-mode event.
pub fn light_data(s: &Snapshot) -> Vec<u8> {
    let event = LightEvent {
        ring: s.ring.to_string(),
        version: s.version,
        fingerprint: s.fingerprint.to_string(),
        created_at: s.created_at,
        ops: s.change.ops.len(),
        moved_fraction: s.change.moved_fraction,
        reason: s.change.reason.clone(),
        role: s.change.role.into(),
    };
    serde_json::to_vec(&event).unwrap_or_default()
}

/// One SSE event. JSON from serde_json has no raw newlines, so the data
/// fits on one `data:` line.
pub fn frame(event: &str, id: Option<u64>, data: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(data.len() + 48);
    out.extend_from_slice(b"event: ");
    out.extend_from_slice(event.as_bytes());
    out.push(b'\n');
    if let Some(id) = id {
        out.extend_from_slice(format!("id: {id}\n").as_bytes());
    }
    out.extend_from_slice(b"data: ");
    out.extend_from_slice(data);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}
