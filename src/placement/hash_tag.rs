//! `hash_tag`: the two characters around the part of a key that
//! nutcracker hashes (a `twemproxy` ring's config, spec 5.9.3). Its own
//! module, so that the config holds it without depending on the
//! algorithm that uses it.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::placement::error::{excerpt, PlacementError};

/// A `twemproxy` ring's `hash_tag`: two ASCII characters, as nutcracker's
/// `hash_tag: "{}"`. A key is hashed by the part between the first opening
/// character and the first closing one after it, when that part is not
/// empty; otherwise whole (spec 5.9).
///
/// Quotes and the backslash are refused so that the tag is written into a
/// YAML string as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct HashTag([u8; 2]);

impl HashTag {
    /// Validates `tag`.
    pub fn new(tag: &str) -> Result<Self, PlacementError> {
        let refuse = |reason| PlacementError::InvalidHashTag {
            tag: excerpt(tag),
            reason,
        };
        let &[open, close] = tag.as_bytes() else {
            return Err(refuse("must be exactly two characters, as \"{}\""));
        };
        let allowed = |c: u8| c.is_ascii_graphic() && !matches!(c, b'"' | b'\'' | b'\\');
        if !allowed(open) || !allowed(close) {
            return Err(refuse(
                "must be printable ASCII other than a space, a quote or a backslash",
            ));
        }
        Ok(Self([open, close]))
    }

    /// The opening character.
    pub fn open(self) -> u8 {
        self.0[0]
    }

    /// The closing character.
    pub fn close(self) -> u8 {
        self.0[1]
    }

    /// The two characters.
    pub fn as_bytes(&self) -> &[u8; 2] {
        &self.0
    }

    /// The part of `key` nutcracker hashes: after the first `open`, up to
    /// the first `close` after it, if both are found and the part is not
    /// empty; else the whole key.
    #[inline]
    pub fn hashed_part(self, key: &[u8]) -> &[u8] {
        let Some(start) = key.iter().position(|&b| b == self.open()) else {
            return key;
        };
        let inner = &key[start + 1..];
        match inner.iter().position(|&b| b == self.close()) {
            Some(end) if end > 0 => &inner[..end],
            _ => key,
        }
    }
}

impl TryFrom<String> for HashTag {
    type Error = PlacementError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        Self::new(&s)
    }
}

impl From<HashTag> for String {
    fn from(t: HashTag) -> Self {
        t.to_string()
    }
}

impl fmt::Display for HashTag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Both bytes are ASCII (checked in `new`).
        write!(f, "{}{}", char::from(self.0[0]), char::from(self.0[1]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tagged_part_as_nutcracker_finds_it() {
        let t = HashTag::new("{}").unwrap();
        assert_eq!(t.hashed_part(b"user:{42}:cart"), b"42");
        // The first opening character, then the first closing one after it.
        assert_eq!(t.hashed_part(b"a{b{c}d}"), b"b{c");
        assert_eq!(t.hashed_part(b"a}b{c}"), b"c");
        // Empty, unclosed or missing tags hash the whole key.
        for whole in [&b"a{}b"[..], b"a{b", b"ab", b"}{"] {
            assert_eq!(t.hashed_part(whole), whole);
        }
        let same = HashTag::new("::").unwrap();
        assert_eq!(same.hashed_part(b"x:y:z"), b"y");
    }

    #[test]
    fn refusals() {
        for bad in ["", "{", "{}}", "{ ", "\"}", "é}", "\\}"] {
            assert!(HashTag::new(bad).is_err(), "{bad:?}");
        }
        assert_eq!(HashTag::new("<>").unwrap().to_string(), "<>");
    }
}
