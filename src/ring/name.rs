//! Ring names.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::RingError;

/// Longest accepted ring name, in bytes.
pub const MAX_RING_NAME_LEN: usize = 63;

/// A ring's name: 1–63 characters of `[a-z0-9._-]`, starting with a
/// lowercase letter or digit, so it is safe in URLs, etcd keys and file
/// names alike.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct RingName(String);

impl RingName {
    /// Validates `name`.
    pub fn new(name: impl Into<String>) -> Result<Self, RingError> {
        let name = name.into();
        let ok_first = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
        let ok_rest = name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-'));
        if name.len() > MAX_RING_NAME_LEN || !ok_first || !ok_rest {
            return Err(RingError::InvalidRingName(name.chars().take(100).collect()));
        }
        Ok(Self(name))
    }

    /// The name as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for RingName {
    type Error = RingError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        Self::new(s)
    }
}

impl From<RingName> for String {
    fn from(n: RingName) -> Self {
        n.0
    }
}

impl fmt::Display for RingName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(RingName::new("cache-eu.1_a").is_ok());
        assert!(RingName::new("0").is_ok());
        assert!(RingName::new("").is_err());
        assert!(RingName::new("Cache").is_err());
        assert!(RingName::new("-x").is_err());
        assert!(RingName::new("a/b").is_err());
        assert!(RingName::new("a".repeat(64)).is_err());
        assert!(RingName::new("a".repeat(63)).is_ok());
    }
}
