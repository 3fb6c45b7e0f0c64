//! Limits and rules of request bodies that the server checks in the API
//! layer (not in a domain type), stated here so that the schemas, the
//! server's messages and the clients read one value.

/// Longest accepted `reason`, in bytes.
pub const MAX_REASON_LEN: usize = 1_024;

/// Most keys one `POST …/lookup` accepts.
pub const MAX_LOOKUP_KEYS: usize = 10_000;

/// The alphabet and padding `key_b64` and `keys_b64` take, for messages
/// and the OpenAPI descriptions.
pub const BASE64_RULES: &str =
    "standard base64 (RFC 4648 §4: A–Z, a–z, 0–9, '+' and '/', padded with '=' to a multiple of 4 characters)";
