//! Request extractors and parsers whose every refusal is an [`ApiError`].
//!
//! axum's own extractors answer bad input with plain-text bodies; these
//! wrap them so that clients always get problem details naming the field.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequest, FromRequestParts, Path, Query, Request};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, HeaderValue};
use serde::de::DeserializeOwned;

use super::problem::{ApiError, ProblemKind};
use crate::placement::NodeId;
use crate::ring::{IdempotencyKey, RingName};

/// Largest accepted request body: 1 MiB.
pub const MAX_BODY: usize = 1 << 20;

/// A JSON body: requires `Content-Type: application/json` (or any
/// `+json` type), at most [`MAX_BODY`] bytes, and names the JSON path of
/// the field that failed to parse.
#[derive(Debug, Clone)]
pub struct ApiJson<T>(pub T);

impl<S, T> FromRequest<S> for ApiJson<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        check_json_content_type(req.headers())?;
        // Refuse a declared oversize body before reading any of it.
        let declared = req
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if let Some(n) = declared.filter(|n| *n > MAX_BODY as u64) {
            discard_body(req, n).await;
            return Err(too_large());
        }
        let bytes = Bytes::from_request(req, state).await.map_err(|e| match e {
            BytesRejection::FailedToBufferBody(_) if is_length_limit(&e) => too_large(),
            other => ApiError::new(
                ProblemKind::InvalidInput,
                format!("could not read the request body: {}", other.body_text()),
            ),
        })?;
        parse_json(&bytes).map(ApiJson)
    }
}

/// Most of an oversize body read and thrown away before the refusal.
const MAX_DISCARD: u64 = 8 * MAX_BODY as u64;
/// How long that reading may take.
const DISCARD_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Reads and drops a refused body of `declared` bytes, when it is small
/// enough, before the 413 goes out. A client sending its body
/// unsolicited (without `Expect: 100-continue`) is still writing when
/// the refusal is ready; if the connection closed with the body unread,
/// the client would see a reset or a broken pipe instead of the 413 and
/// its explanation. Larger bodies are not read: the connection closes.
async fn discard_body(req: Request, declared: u64) {
    use futures_util::StreamExt;
    if declared > MAX_DISCARD {
        return;
    }
    let mut body = req.into_body().into_data_stream();
    let _ = tokio::time::timeout(DISCARD_TIMEOUT, async {
        let mut read = 0u64;
        while let Some(Ok(chunk)) = body.next().await {
            read += chunk.len() as u64;
            if read > MAX_DISCARD {
                break;
            }
        }
    })
    .await;
}

fn is_length_limit(e: &BytesRejection) -> bool {
    matches!(
        e,
        BytesRejection::FailedToBufferBody(
            axum::extract::rejection::FailedToBufferBody::LengthLimitError(_)
        )
    )
}

fn too_large() -> ApiError {
    ApiError::new(
        ProblemKind::PayloadTooLarge,
        format!(
            "the request body is over the limit of {MAX_BODY} bytes (1 MiB); split the request"
        ),
    )
}

fn check_json_content_type(headers: &HeaderMap) -> Result<(), ApiError> {
    let Some(value) = headers.get(header::CONTENT_TYPE) else {
        return Err(ApiError::new(
            ProblemKind::UnsupportedMediaType,
            "the request has no Content-Type; send the body as `Content-Type: application/json`",
        )
        .with_field("Content-Type"));
    };
    let essence = value
        .to_str()
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
    {
        return Ok(());
    }
    Err(ApiError::new(
        ProblemKind::UnsupportedMediaType,
        format!(
            "Content-Type `{}` is not accepted; send the body as `Content-Type: application/json`",
            value.to_str().unwrap_or("(not text)")
        ),
    )
    .with_field("Content-Type"))
}

/// Parses `bytes` as JSON into `T`, telling malformed JSON (syntax) from
/// well-formed JSON with invalid content (which names the field's path).
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let err = match serde_path_to_error::deserialize(&mut de) {
        Ok(v) => {
            return de.end().map(|()| v).map_err(|e| {
                ApiError::new(
                    ProblemKind::MalformedJson,
                    format!("the body is not valid JSON: {e}"),
                )
            })
        }
        Err(err) => err,
    };
    let path = err.path().to_string();
    let inner = err.into_inner();
    use serde_json::error::Category;
    match inner.classify() {
        Category::Syntax | Category::Eof | Category::Io => Err(ApiError::new(
            ProblemKind::MalformedJson,
            format!("the body is not valid JSON: {inner}"),
        )),
        Category::Data if path == "." => Err(ApiError::new(
            ProblemKind::InvalidInput,
            format!("invalid body: {}", without_position(&inner)),
        )),
        Category::Data => Err(ApiError::invalid(
            path.clone(),
            format!("invalid value at `{path}`: {}", without_position(&inner)),
        )),
    }
}

/// serde_json's message without its " at line L column C" suffix: once the
/// field is named, a position in a one-line body tells a person nothing.
fn without_position(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    match text.strip_suffix(&suffix) {
        Some(message) => message.to_owned(),
        None => text,
    }
}

/// Deserializes a part of a body already parsed as JSON, naming failed
/// fields by their full path under `prefix` (e.g. `ops[2].node.weight`).
pub fn from_value<T: DeserializeOwned>(
    value: serde_json::Value,
    prefix: &str,
) -> Result<T, ApiError> {
    serde_path_to_error::deserialize(value).map_err(|err| {
        let path = err.path().to_string();
        let field = if path == "." {
            prefix.to_owned()
        } else {
            format!("{prefix}.{path}")
        };
        ApiError::invalid(
            field.clone(),
            format!("invalid value at `{field}`: {}", err.into_inner()),
        )
    })
}

/// Path parameters; a rejection becomes a problem.
#[derive(Debug, Clone)]
pub struct ApiPath<T>(pub T);

impl<S, T> FromRequestParts<S> for ApiPath<T>
where
    S: Send + Sync,
    T: DeserializeOwned + Send,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        Ok(ApiPath(
            Path::<T>::from_request_parts(parts, state).await?.0,
        ))
    }
}

/// Query parameters; a rejection becomes a problem. A parameter whose
/// percent-decoding is not UTF-8 is refused, naming it: axum's own `Query`
/// would replace the bad bytes with U+FFFD and so act on a different
/// value than the one sent.
#[derive(Debug, Clone)]
pub struct ApiQuery<T>(pub T);

impl<S, T> FromRequestParts<S> for ApiQuery<T>
where
    S: Send + Sync,
    T: DeserializeOwned + Send,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        check_query_utf8(parts.uri.query().unwrap_or(""))?;
        Ok(ApiQuery(
            Query::<T>::from_request_parts(parts, state).await?.0,
        ))
    }
}

/// Refuses a query string with a name or value that is not UTF-8 once
/// percent-decoded (the `application/x-www-form-urlencoded` rules that
/// `Query` applies: pairs split on `&`, name and value on the first `=`).
pub fn check_query_utf8(query: &str) -> Result<(), ApiError> {
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let name_bytes: Vec<u8> = percent_encoding::percent_decode_str(name).collect();
        let name = match String::from_utf8(name_bytes) {
            Ok(n) => n,
            Err(e) => {
                return Err(ApiError::invalid(
                    "query",
                    format!(
                        "a query parameter's name is not UTF-8 once percent-decoded ({})",
                        bad_byte(e.as_bytes(), e.utf8_error())
                    ),
                ))
            }
        };
        let value_bytes: Vec<u8> = percent_encoding::percent_decode_str(value).collect();
        if let Err(e) = std::str::from_utf8(&value_bytes) {
            let hint = if name == "key" {
                "; send a key that is not UTF-8 text as `key_b64`, its bytes in standard base64"
            } else {
                ""
            };
            let shown: String = name.chars().take(100).collect();
            return Err(ApiError::invalid(
                shown.clone(),
                format!(
                    "query parameter `{shown}` is not UTF-8 once percent-decoded ({}){hint}",
                    bad_byte(&value_bytes, e)
                ),
            ));
        }
    }
    Ok(())
}

fn bad_byte(bytes: &[u8], e: std::str::Utf8Error) -> String {
    let at = e.valid_up_to();
    format!("byte 0x{:02X} at offset {at}", bytes[at])
}

/// Validates the `{ring}` path parameter.
pub fn ring_name(s: &str) -> Result<RingName, ApiError> {
    RingName::new(s).map_err(|e| ApiError::invalid("ring", e.to_string()))
}

/// Validates the `{node}` path parameter.
pub fn node_id(s: &str) -> Result<NodeId, ApiError> {
    NodeId::new(s).map_err(|e| ApiError::invalid("node", e.to_string()))
}

/// Parses a `{version}` path parameter. Version 0 never exists.
pub fn version(s: &str) -> Result<u64, ApiError> {
    match s.parse::<u64>() {
        Ok(0) => Err(ApiError::new(
            ProblemKind::VersionNotFound,
            "version 0 does not exist: versions start at 1",
        )
        .with_field("version")),
        Ok(v) => Ok(v),
        Err(_) => Err(ApiError::invalid(
            "version",
            format!("version `{}` is not a positive integer", excerpt(s)),
        )),
    }
}

/// Checks an optional `version` query parameter the same way.
pub fn optional_version(v: Option<u64>) -> Result<Option<u64>, ApiError> {
    match v {
        Some(0) => Err(ApiError::new(
            ProblemKind::VersionNotFound,
            "version 0 does not exist: versions start at 1",
        )
        .with_field("version")),
        other => Ok(other),
    }
}

fn excerpt(s: &str) -> String {
    s.chars().take(100).collect()
}

/// The entity tag of a ring version: `"<version>"`.
pub fn etag(version: u64) -> HeaderValue {
    HeaderValue::from_str(&crate::wire::headers::etag(version)).expect("digits are a valid header")
}

/// Whether `If-None-Match` already names `version` (or is `*`), so the
/// answer is 304. Weak comparison, as RFC 9110 prescribes for GET.
pub fn not_modified(headers: &HeaderMap, version: u64) -> bool {
    let want = version.to_string();
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .any(|tag| tag == "*" || tag.trim_start_matches("W/").trim_matches('"') == want)
}

/// The version a mutation is conditional on: `If-Match: "<version>"`
/// and/or an `expected_version` from the body or query. Both may be given
/// only if they agree. `If-Match: *` adds no condition beyond existence,
/// which every mutation of an existing ring checks anyway.
pub fn expected_version(
    headers: &HeaderMap,
    explicit: Option<u64>,
) -> Result<Option<u64>, ApiError> {
    let mut values = headers.get_all(header::IF_MATCH).iter();
    let header_version = match (values.next(), values.next()) {
        (None, _) => None,
        (Some(v), None) => parse_if_match(v)?,
        (Some(_), Some(_)) => return Err(bad_if_match("send one If-Match header")),
    };
    match (header_version, explicit) {
        (Some(h), Some(e)) if h != e => Err(ApiError::invalid(
            "expected_version",
            format!("If-Match names version {h} but expected_version is {e}; send one of them"),
        )),
        (h, e) => Ok(h.or(e)),
    }
}

fn parse_if_match(v: &HeaderValue) -> Result<Option<u64>, ApiError> {
    let text = v.to_str().unwrap_or("").trim();
    if text == "*" {
        return Ok(None);
    }
    let digits = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .ok_or_else(|| bad_if_match("write the version in double quotes, e.g. If-Match: \"7\""))?;
    digits
        .parse::<u64>()
        .map(Some)
        .map_err(|_| bad_if_match("the entity tag must be one ring version, e.g. If-Match: \"7\""))
}

fn bad_if_match(hint: &str) -> ApiError {
    ApiError::invalid(
        "If-Match",
        format!("If-Match is not a ring version: {hint}"),
    )
}

/// The `Idempotency-Key` header, if sent: at most one, 1–255 visible
/// ASCII characters.
pub fn idempotency_key(headers: &HeaderMap) -> Result<Option<IdempotencyKey>, ApiError> {
    let mut values = headers.get_all(IDEMPOTENCY_KEY).iter();
    let value = match (values.next(), values.next()) {
        (None, _) => return Ok(None),
        (Some(v), None) => v,
        (Some(_), Some(_)) => {
            return Err(ApiError::invalid(
                "Idempotency-Key",
                "send one Idempotency-Key header, not several",
            ))
        }
    };
    let text = value.to_str().map_err(|_| {
        ApiError::invalid(
            "Idempotency-Key",
            "Idempotency-Key is invalid: use 1–255 visible ASCII characters, e.g. a UUID",
        )
    })?;
    Ok(Some(IdempotencyKey::try_from(text.to_owned())?))
}

/// Name of the idempotency header.
pub const IDEMPOTENCY_KEY: &str = "idempotency-key";
