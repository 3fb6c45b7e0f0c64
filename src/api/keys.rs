//! Lookup keys as the API receives them: UTF-8 text (`key`, `keys`) or
//! arbitrary bytes in standard base64 (`key_b64`, `keys_b64`).
//!
//! Keys are bytes (see `docs/placement-spec.md`). Text is the convenient
//! form; base64 is the form that carries every byte string. Exactly one
//! form is accepted per request, and an answer names each key in the form
//! it was asked in, so a caller never has to guess which key was placed.

use base64::engine::general_purpose::STANDARD;
use base64::{DecodeError, Engine};

use super::problem::ApiError;

pub use crate::wire::limits::{BASE64_RULES, MAX_LOOKUP_KEYS};

/// One key to place, in the form it was sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LookupKey {
    /// Sent as text; its UTF-8 bytes are hashed.
    Text(String),
    /// Sent in base64; `bytes` are hashed, `encoded` is echoed back.
    Bytes {
        /// The decoded key.
        bytes: Vec<u8>,
        /// The key as sent (canonical: decoding refuses any other form).
        encoded: String,
    },
}

impl LookupKey {
    /// The bytes hashed.
    pub fn bytes(&self) -> &[u8] {
        match self {
            LookupKey::Text(t) => t.as_bytes(),
            LookupKey::Bytes { bytes, .. } => bytes,
        }
    }

    /// `(key, key_b64)` for an answer: exactly one is set.
    pub fn into_echo(self) -> (Option<String>, Option<String>) {
        match self {
            LookupKey::Text(t) => (Some(t), None),
            LookupKey::Bytes { encoded, .. } => (None, Some(encoded)),
        }
    }

    /// Decodes `encoded`, sent in `field`, as standard padded base64.
    pub fn from_base64(field: &str, encoded: String) -> Result<Self, ApiError> {
        match STANDARD.decode(&encoded) {
            Ok(bytes) => Ok(LookupKey::Bytes { bytes, encoded }),
            Err(e) => Err(ApiError::invalid(
                field,
                base64_problem(field, &encoded, &e),
            )),
        }
    }
}

/// What is wrong with `text` as base64, in terms a person can act on.
fn base64_problem(field: &str, text: &str, e: &DecodeError) -> String {
    let why = match *e {
        // A form-encoded query turns an unescaped '+' into a space.
        DecodeError::InvalidByte(at, b' ') => format!(
            "has a space at offset {at}; in a query string an unescaped '+' means a space, so write '+' as %2B"
        ),
        DecodeError::InvalidByte(at, b @ (b'-' | b'_')) => format!(
            "has '{}' at offset {at}, which belongs to the URL-safe alphabet; re-encode with the standard alphabet",
            b as char
        ),
        DecodeError::InvalidByte(at, b'=') => {
            format!("has '=' at offset {at}; padding may only end the text")
        }
        DecodeError::InvalidByte(at, b) if b.is_ascii_graphic() => {
            format!("has '{}' at offset {at}, which is not a base64 character", b as char)
        }
        DecodeError::InvalidByte(at, b) => {
            format!("has byte 0x{b:02X} at offset {at}, which is not a base64 character")
        }
        DecodeError::InvalidLength(_) | DecodeError::InvalidPadding if !text.len().is_multiple_of(4) => {
            format!(
                "is {} characters long, not a multiple of 4: padding with '=' is required",
                text.len()
            )
        }
        DecodeError::InvalidLength(_) => "does not end in a whole base64 group".to_owned(),
        DecodeError::InvalidPadding => "has the wrong amount of '=' padding".to_owned(),
        DecodeError::InvalidLastSymbol(at, _) => format!(
            "is not canonical: the character at offset {at} carries bits that encode nothing"
        ),
    };
    format!("`{field}` {why}; it takes {BASE64_RULES}")
}

/// The one key of `GET …/lookup`: `key` or `key_b64`, exactly one.
pub fn single(key: Option<String>, key_b64: Option<String>) -> Result<LookupKey, ApiError> {
    match (key, key_b64) {
        (Some(k), None) => Ok(LookupKey::Text(k)),
        (None, Some(b)) => LookupKey::from_base64("key_b64", b),
        (Some(_), Some(_)) => Err(ApiError::invalid(
            "key_b64",
            "send either `key` or `key_b64`, not both",
        )),
        (None, None) => Err(ApiError::invalid(
            "key",
            "`key` is required: the key as UTF-8 text, or `key_b64` with its bytes in standard base64",
        )),
    }
}

/// The keys of `POST …/lookup`: `keys` or `keys_b64`, exactly one.
pub fn batch(
    keys: Option<Vec<String>>,
    keys_b64: Option<Vec<String>>,
) -> Result<Vec<LookupKey>, ApiError> {
    match (keys, keys_b64) {
        (Some(k), None) => Ok(k.into_iter().map(LookupKey::Text).collect()),
        (None, Some(b)) => b
            .into_iter()
            .enumerate()
            .map(|(i, e)| LookupKey::from_base64(&format!("keys_b64[{i}]"), e))
            .collect(),
        (Some(_), Some(_)) => Err(ApiError::invalid(
            "keys_b64",
            "send either `keys` or `keys_b64`, not both",
        )),
        (None, None) => Err(ApiError::invalid(
            "keys",
            "`keys` is required: an array of UTF-8 keys, or `keys_b64` with each key's bytes in standard base64",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(text: &str) -> String {
        LookupKey::from_base64("key_b64", text.to_owned())
            .unwrap_err()
            .detail
    }

    #[test]
    fn standard_padded_base64_only() {
        let k = LookupKey::from_base64("key_b64", "/w==".into()).unwrap();
        assert_eq!(k.bytes(), [0xff]);
        assert_eq!(k.into_echo(), (None, Some("/w==".to_owned())));
        let empty = LookupKey::from_base64("key_b64", String::new()).unwrap();
        assert_eq!(empty.bytes(), b"");
        assert!(refusal("/w").starts_with(
            "`key_b64` is 2 characters long, not a multiple of 4: padding with '=' is required;"
        ));
        assert!(refusal("_w==").contains("'_' at offset 0, which belongs to the URL-safe alphabet"));
        assert!(refusal("a+b c").contains("a space at offset 3"));
        assert!(refusal("/x==").contains("is not canonical"));
        assert!(refusal("ab=c").contains("has '=' at offset 2"));
        assert!(refusal("ab*c").contains("has '*' at offset 2"));
        assert!(refusal("ab*c").ends_with(BASE64_RULES));
    }

    #[test]
    fn exactly_one_form() {
        let field = |r: Result<LookupKey, ApiError>| r.unwrap_err().field.unwrap();
        assert_eq!(field(single(None, None)), "key");
        assert_eq!(
            field(single(Some("a".into()), Some("YQ==".into()))),
            "key_b64"
        );
        assert_eq!(single(Some("a".into()), None).unwrap().bytes(), b"a");
        let err = batch(None, Some(vec!["YQ==".into(), "Y".into()])).unwrap_err();
        assert_eq!(err.field.as_deref(), Some("keys_b64[1]"));
        assert_eq!(
            batch(None, None).unwrap_err().field.as_deref(),
            Some("keys")
        );
        assert_eq!(
            batch(Some(vec![]), Some(vec![]))
                .unwrap_err()
                .field
                .as_deref(),
            Some("keys_b64")
        );
    }
}
