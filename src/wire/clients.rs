//! Clients and their convergence.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

#[cfg(feature = "server")]
use super::schema::{ClientKindSchema, FingerprintSchema, VersionSchema};
use crate::placement::json_integer;
pub use crate::ring::ClientKind;
/// One client's latest ack, judged against the ring.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct ClientView {
    /// The client.
    pub client_id: String,
    /// The version it applied.
    pub version: u64,
    /// The fingerprint it computed for that version.
    pub fingerprint: String,
    /// How many versions it is behind the ring's current version.
    pub lag: u64,
    /// When its latest ack arrived.
    #[serde(with = "time::serde::rfc3339")]
    #[cfg_attr(feature = "server", schema(value_type = String, format = DateTime))]
    pub last_seen: OffsetDateTime,
    /// When the ack stops counting unless the client acks again.
    #[serde(with = "time::serde::rfc3339")]
    #[cfg_attr(feature = "server", schema(value_type = String, format = DateTime))]
    pub expires_at: OffsetDateTime,
    /// Whether it applied the current version.
    pub on_latest: bool,
    /// Whether its fingerprint equals the server's for that version; null
    /// when the version has been pruned, so the server cannot tell.
    pub matches: Option<bool>,
    /// `matches` is false: the client computed a different placement for
    /// the same version (a client bug or a different library version).
    pub divergent: bool,
    /// `library` for an application routing keys itself, `proxy` for a
    /// proxy that `ringd sync` keeps on a version.
    #[cfg_attr(feature = "server", schema(value_type = ClientKindSchema))]
    pub kind: ClientKind,
    /// The newest version the client could not apply, and why; null when
    /// its last attempt succeeded.
    pub failure: Option<ApplyFailureView>,
}

/// A version a client could not apply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct ApplyFailureView {
    /// The version it tried.
    pub version: u64,
    /// What went wrong, as the program that refused it said (free text).
    pub error: String,
}

/// Counts over a ring's live clients.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct ClientSummary {
    /// Clients with a live ack.
    pub clients: u64,
    /// Of those, how many applied the current version.
    pub on_latest: u64,
    /// `on_latest / clients`; null when there are no clients.
    pub on_latest_share: Option<f64>,
    /// Clients whose fingerprint differs from the server's.
    pub divergent: u64,
    /// Clients that report a version they could not apply.
    pub failing: u64,
}

/// A ring's clients and how far they have converged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct ClientList {
    /// The ring.
    pub ring: String,
    /// The ring's current version.
    pub version: u64,
    /// Its fingerprint.
    pub fingerprint: String,
    /// Every client with a live ack, sorted by id.
    pub clients: Vec<ClientView>,
    /// Counts over `clients`.
    pub summary: ClientSummary,
}

/// The answer to an ack: the ring's current state and the stored ack.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct AckResult {
    /// The ring.
    pub ring: String,
    /// The ring's current version.
    pub version: u64,
    /// Its fingerprint.
    pub fingerprint: String,
    /// The ack as stored, judged against the ring.
    pub client: ClientView,
}

/// The body of an ack; unknown fields are refused.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "server", schema(example = json!({"version": 3, "fingerprint": "5f0c0e9ac5d4d3b1a0e1f2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7"})))]
#[serde(deny_unknown_fields)]
pub struct AckInput {
    /// The ring version the client applied: at least 1 and at most the
    /// ring's current version. Older (even pruned) versions are accepted.
    #[cfg_attr(feature = "server", schema(value_type = VersionSchema, required = true))]
    #[serde(default, deserialize_with = "json_integer::option")]
    pub version: Option<u64>,
    /// The placement fingerprint the client computed for that version:
    /// 64 lowercase hex digits.
    #[cfg_attr(feature = "server", schema(value_type = FingerprintSchema, required = true))]
    pub fingerprint: Option<String>,
    /// `library` (the default) or `proxy`: a proxy whose configuration an
    /// agent rewrites, which acks only after the proxy reloaded.
    #[cfg_attr(feature = "server", schema(value_type = Option<ClientKindSchema>))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<ClientKind>,
    /// A newer version the client tried and could not apply (it stays on
    /// `version`); leave it out, or null, once a version applies again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<ApplyFailureInput>,
}

/// A version a client could not apply, as it reports it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ApplyFailureInput {
    /// The version it tried: at least 1.
    #[cfg_attr(feature = "server", schema(value_type = VersionSchema, required = true))]
    #[serde(default, deserialize_with = "json_integer::option")]
    pub version: Option<u64>,
    /// What went wrong, for a person: 1 to 2048 characters, not only white
    /// space, such as a proxy's own configuration error.
    #[cfg_attr(
        feature = "server",
        schema(value_type = String, required = true, min_length = 1, max_length = 2048)
    )]
    pub error: Option<String>,
}
