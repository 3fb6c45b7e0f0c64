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
}

impl ClientAck {
    /// Whether the ack still counts at `now`.
    pub fn is_live(&self, now: OffsetDateTime) -> bool {
        self.expires_at > now
    }
}
