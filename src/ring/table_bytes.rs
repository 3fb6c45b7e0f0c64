//! A `table` ring's binary forms as a snapshot holds them: the table body
//! of the canonical encoding and a version's moves, shared between copies
//! and written as base64 (standard alphabet, padded) in JSON.

use std::fmt;
use std::sync::Arc;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Bytes of a table body or of a version's moves
/// (`docs/placement-spec.md`, "table").
#[derive(Clone, PartialEq, Eq)]
pub struct TableBytes(Arc<[u8]>);

impl TableBytes {
    /// The bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

impl From<Vec<u8>> for TableBytes {
    fn from(v: Vec<u8>) -> Self {
        Self(v.into())
    }
}

impl fmt::Debug for TableBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TableBytes({} bytes)", self.0.len())
    }
}

impl Serialize for TableBytes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&STANDARD.encode(&self.0))
    }
}

impl<'de> Deserialize<'de> for TableBytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        STANDARD
            .decode(text.as_bytes())
            .map(Self::from)
            .map_err(|e| serde::de::Error::custom(format!("invalid base64: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_round_trip_as_base64() {
        let b = TableBytes::from(vec![0, 1, 2, 255]);
        let json = serde_json::to_string(&b).unwrap();
        assert_eq!(json, r#""AAEC/w==""#);
        assert_eq!(serde_json::from_str::<TableBytes>(&json).unwrap(), b);
        assert!(serde_json::from_str::<TableBytes>(r#""A*""#).is_err());
    }
}
