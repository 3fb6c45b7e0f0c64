//! `GET /v1/access`: what the presented credentials may do, so that a
//! console or a script can tell a read token from an admin token before
//! it offers to change anything.

use serde::{Deserialize, Serialize};

/// Which token a request presented.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum TokenKind {
    /// No `Authorization` header.
    None,
    /// The read token.
    Read,
    /// The admin token.
    Admin,
    /// A token that is neither, or a header that is not `Bearer <token>`.
    Invalid,
}

/// The answer of `GET /v1/access`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct AccessView {
    /// The token presented.
    pub token: TokenKind,
    /// Whether these credentials may read (every `GET`).
    pub read: bool,
    /// Whether they may change rings (every mutation).
    pub write: bool,
    /// Whether the server requires a token for reads (`--read-token`).
    pub read_token_required: bool,
    /// Whether it requires the admin token for changes (`--admin-token`).
    pub admin_token_required: bool,
}
