//! A watch: its query and the bodies of its events.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::changes::RoleName;
use super::nodes::NodeHealthName;
#[cfg(feature = "server")]
use super::schema::{LeaseIdSchema, VersionCursorSchema};

/// What each event carries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum EventDetail {
    /// The complete snapshot, as `GET …/snapshot` returns it.
    #[default]
    Full,
    /// Version, fingerprint and change summary only ([`LightEvent`]).
    Light,
}

/// Query parameters of a watch.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::IntoParams))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "server", into_params(parameter_in = Query))]
pub struct WatchQuery {
    /// Resume after this version: the stream starts with version
    /// `after + 1`. `Last-Event-ID` takes precedence.
    #[cfg_attr(feature = "server", param(value_type = Option<VersionCursorSchema>))]
    pub after: Option<u64>,
    /// `full` (default) or `light`.
    pub mode: Option<EventDetail>,
    /// `true`: also send `health` events, one per node health transition
    /// (`HealthEvent`). They carry no `id` and no version.
    pub health: Option<bool>,
    /// `true`: also send `rollout` events, one each time a rollout of the
    /// ring changes (`RolloutView`). They carry no `id` and no version.
    pub rollouts: Option<bool>,
}

/// The data of a `light`-mode event.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct LightEvent {
    /// The ring.
    pub ring: String,
    /// The version.
    pub version: u64,
    /// Its fingerprint.
    pub fingerprint: String,
    /// When it was committed (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[cfg_attr(feature = "server", schema(value_type = String, format = DateTime))]
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
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
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

/// The data of a `stale` event: whether the instance serving the stream
/// can still vouch that it is current. With `stale: true`, versions made
/// through other instances may be late; with `stale: false`, every version
/// the stream missed meanwhile has been sent before it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct StaleEvent {
    /// The ring.
    pub ring: String,
    /// Whether answers from this instance may be behind.
    pub stale: bool,
}

/// The data of a `health` event: one node's health changed. Not a
/// version: the ring's record is as it was.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct HealthEvent {
    /// The ring.
    pub ring: String,
    /// The node.
    pub node: String,
    /// Its health now; `null` once it has no lease (removed from the ring).
    #[cfg_attr(feature = "server", schema(required = true))]
    pub health: Option<NodeHealthName>,
    /// Its health before; `null` when it had no lease (it just
    /// registered, or was an operator's node until now).
    #[cfg_attr(feature = "server", schema(required = true))]
    pub previous: Option<NodeHealthName>,
    /// Its lease's last registration or renewal (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[cfg_attr(feature = "server", schema(value_type = String, format = DateTime))]
    pub last_heartbeat: OffsetDateTime,
    /// Its lease's deadline (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[cfg_attr(feature = "server", schema(value_type = String, format = DateTime))]
    pub deadline: OffsetDateTime,
    /// The lease: the new one after a new registration.
    #[cfg_attr(feature = "server", schema(value_type = LeaseIdSchema))]
    pub lease_id: String,
}
