//! The request headers the API acts on: entity tags and `If-None-Match`
//! for reads, `Last-Event-ID` for watch streams, `If-Match` and
//! `Idempotency-Key` for mutations.

use axum::http::{header, HeaderMap, HeaderValue};

use super::problem::ApiError;
use crate::ring::IdempotencyKey;

/// The entity tag of a ring version: `"<version>"`.
pub fn etag(version: u64) -> HeaderValue {
    HeaderValue::from_str(&crate::wire::headers::etag(version)).expect("digits are a valid header")
}

/// Whether `If-None-Match` already names `version` (or is `*`), so the
/// answer is 304. Weak comparison, as RFC 9110 prescribes for GET.
pub fn not_modified(headers: &HeaderMap, version: u64) -> bool {
    if_none_match_names(headers, &version.to_string())
}

/// Whether `If-None-Match` names the entity tag whose quoted text is
/// `opaque` (or is `*`), compared weakly.
pub fn if_none_match_names(headers: &HeaderMap, opaque: &str) -> bool {
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .any(|tag| tag == "*" || tag.trim_start_matches("W/").trim_matches('"') == opaque)
}

/// Parses `Last-Event-ID`, which this API always sets to a version.
pub fn last_event_id(headers: &HeaderMap) -> Result<Option<u64>, ApiError> {
    let Some(value) = headers.get("last-event-id") else {
        return Ok(None);
    };
    let text = value.to_str().unwrap_or("").trim();
    if text.is_empty() {
        // EventSource sends an empty id when it never received one.
        return Ok(None);
    }
    text.parse().map(Some).map_err(|_| {
        ApiError::invalid(
            "Last-Event-ID",
            format!(
                "Last-Event-ID `{}` is not a version: resume with the id of the last event received",
                text.chars().take(40).collect::<String>()
            ),
        )
    })
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
