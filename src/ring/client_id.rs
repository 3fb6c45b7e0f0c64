//! Client ids: how a client that applies ring versions names itself when
//! it reports (acks) the version it applied.

use std::fmt;

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Longest accepted client id, in bytes.
pub const MAX_CLIENT_ID_LEN: usize = 128;

/// Why a client id was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("client id `{0}` is invalid: use 1–{max} characters of A-Z, a-z, 0-9, '.', '_', '-' and ':', starting with a letter or digit (e.g. a host name or pod name)", max = MAX_CLIENT_ID_LEN)]
pub struct InvalidClientId(pub String);

/// A client's self-chosen id: 1–128 characters of `[A-Za-z0-9._:-]`,
/// starting with a letter or digit — the node-id rules, so a host or pod
/// name fits, and safe in URLs and etcd keys (no `/`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ClientId(String);

impl ClientId {
    /// Validates `id`.
    pub fn new(id: impl Into<String>) -> Result<Self, InvalidClientId> {
        let id = id.into();
        let ok_first = id.chars().next().is_some_and(|c| c.is_ascii_alphanumeric());
        let ok_rest = id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | ':'));
        if id.len() > MAX_CLIENT_ID_LEN || !ok_first || !ok_rest {
            // Echo a bounded excerpt: the id may be arbitrarily long.
            return Err(InvalidClientId(id.chars().take(100).collect()));
        }
        Ok(Self(id))
    }

    /// The id as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for ClientId {
    type Error = InvalidClientId;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        Self::new(s)
    }
}

impl From<ClientId> for String {
    fn from(c: ClientId) -> Self {
        c.0
    }
}

impl fmt::Display for ClientId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids() {
        assert!(ClientId::new("web-7f9c:8080").is_ok());
        assert!(ClientId::new("Pod_1.eu").is_ok());
        assert!(ClientId::new("0").is_ok());
        assert!(ClientId::new("").is_err());
        assert!(ClientId::new("-x").is_err());
        assert!(ClientId::new("a/b").is_err());
        assert!(ClientId::new("a b").is_err());
        assert!(ClientId::new("é").is_err());
        assert!(ClientId::new("a".repeat(128)).is_ok());
        assert!(ClientId::new("a".repeat(129)).is_err());
        assert_eq!(
            ClientId::new("a/b").unwrap_err().to_string(),
            "client id `a/b` is invalid: use 1–128 characters of A-Z, a-z, 0-9, '.', '_', '-' and ':', starting with a letter or digit (e.g. a host name or pod name)"
        );
    }
}
