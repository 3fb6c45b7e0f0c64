//! Client acks: which version of a ring a client reports having applied,
//! and the fingerprint it computed for it.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::ClientId;
use crate::placement::Fingerprint;

/// One client's latest report for one ring. A newer ack from the same
/// client replaces the older one; an ack stops counting at `expires_at`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientAck {
    /// Who reported.
    pub client_id: ClientId,
    /// The version the client applied.
    pub version: u64,
    /// The placement fingerprint the client computed for that version.
    pub fingerprint: Fingerprint,
    /// When the server received the ack.
    #[serde(with = "time::serde::rfc3339")]
    pub last_seen: OffsetDateTime,
    /// When the ack stops counting unless the client reports again.
    #[serde(with = "time::serde::rfc3339")]
    pub expires_at: OffsetDateTime,
    /// What kind of client it is. Stored only when not the default, so
    /// acks written before kinds existed read back unchanged.
    #[serde(default, skip_serializing_if = "ClientKind::is_library")]
    pub kind: ClientKind,
    /// The newest version the client tried to apply and could not, while
    /// it stays on `version`; `None` once a version applies again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<ApplyFailure>,
}

/// What kind of program acks: one that routes keys itself, or a proxy
/// whose configuration an agent (`ringd sync`) rewrites and reloads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClientKind {
    /// An application routing with a client library (or `ringd follow`).
    #[default]
    Library,
    /// A proxy (nginx, HAProxy, twemproxy) kept on a version by `ringd sync`.
    Proxy,
}

impl ClientKind {
    /// The name in the API, the store and the CLI.
    pub fn name(self) -> &'static str {
        match self {
            Self::Library => "library",
            Self::Proxy => "proxy",
        }
    }

    fn is_library(&self) -> bool {
        *self == Self::Library
    }
}

/// A version a client could not apply, and why, in the words of the
/// program that refused it (a proxy's configuration check, say).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApplyFailure {
    /// The version it tried.
    pub version: u64,
    /// What went wrong: free text from another program, so it is escaped
    /// wherever it is shown, and at most [`ApplyFailure::MAX_ERROR`]
    /// characters.
    pub error: String,
}

impl ApplyFailure {
    /// The longest error kept, in characters (as JSON Schema's `maxLength`
    /// counts them): enough for a proxy's own message (nginx's `-t` output
    /// is a few lines), short enough for every ack.
    pub const MAX_ERROR: usize = 2048;
}

impl ClientAck {
    /// Whether the ack still counts at `now`.
    pub fn is_live(&self, now: OffsetDateTime) -> bool {
        self.expires_at > now
    }
}
