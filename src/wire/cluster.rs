//! `GET /v1/cluster`: the ringd instances sharing a store and which of
//! them is the decision-maker of automatic membership changes.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

/// The store kind the instances share.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum StoreKindName {
    /// The embedded store: one instance, always the decision-maker.
    Sqlite,
    /// etcd: the instances elect one.
    Etcd,
}

impl StoreKindName {
    /// The name as sent.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Sqlite => "sqlite",
            Self::Etcd => "etcd",
        }
    }
}

/// The answer of `GET /v1/cluster`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct ClusterView {
    /// The store the instances share.
    pub store: StoreKindName,
    /// The decision-maker; `null` while no instance holds office (an
    /// election is under way).
    pub leader: Option<ClusterLeaderView>,
    /// Every live instance, sorted by id.
    pub instances: Vec<InstanceView>,
}

/// The decision-maker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct ClusterLeaderView {
    /// The leading instance's id.
    pub instance: String,
    /// Its advertised URL.
    pub url: String,
    /// Its term: with etcd the revision of its election key, larger for
    /// every later term; with SQLite always 1.
    pub term: u64,
    /// When it took office; `null` in the moment between winning the
    /// election and announcing it.
    #[serde(with = "time::serde::rfc3339::option")]
    #[cfg_attr(feature = "server", schema(value_type = Option<String>, format = DateTime))]
    pub since: Option<OffsetDateTime>,
}

/// One ringd instance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct InstanceView {
    /// Its id (`--instance-id`, or random at start).
    pub id: String,
    /// Where it serves (`--advertise-url`, or its listen address).
    pub url: String,
    /// Its ringd version.
    pub version: String,
    /// When it started.
    #[serde(with = "time::serde::rfc3339")]
    #[cfg_attr(feature = "server", schema(value_type = String, format = DateTime))]
    pub started_at: OffsetDateTime,
    /// Whether it is the decision-maker.
    pub leader: bool,
}
