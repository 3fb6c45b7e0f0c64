//! The assertion on an RFC 9457 problem response:
//!
//! ```ignore
//! assert_problem(r, Problem::status(401).slug("unauthorized").detail_has("admin token")).await;
//! ```
//!
//! It always checks the status, the `application/problem+json` content
//! type, the `type` URN, the `status` member, a non-empty title and a
//! detail; and that the blamed `field` is exactly the one given (absent
//! when none is given).

use reqwest::{Response, StatusCode};
use serde_json::Value;

use super::api::expect_json;

/// What a problem response must say.
#[must_use = "a Problem checks nothing until given to assert_problem"]
pub(crate) struct Problem {
    status: StatusCode,
    slug: Option<String>,
    field: Option<String>,
    detail_has: String,
}

impl Problem {
    /// A problem with this HTTP status (a `StatusCode` or its number).
    pub(crate) fn status<S>(status: S) -> Self
    where
        S: TryInto<StatusCode>,
        S::Error: std::fmt::Debug,
    {
        Self {
            status: status.try_into().expect("an HTTP status"),
            slug: None,
            field: None,
            detail_has: String::new(),
        }
    }

    /// Its `type` is `urn:ringd:problem:<slug>`.
    pub(crate) fn slug(mut self, slug: &str) -> Self {
        self.slug = Some(slug.to_owned());
        self
    }

    /// It blames this request field (without it, `field` must be absent).
    pub(crate) fn field(mut self, field: &str) -> Self {
        self.field = Some(field.to_owned());
        self
    }

    /// It blames `field`, or no field at all when `None`.
    pub(crate) fn field_opt(mut self, field: Option<&str>) -> Self {
        self.field = field.map(str::to_owned);
        self
    }

    /// Its detail contains these words.
    pub(crate) fn detail_has(mut self, words: &str) -> Self {
        self.detail_has = words.to_owned();
        self
    }
}

/// Asserts that `r` is the problem `want` describes; returns its body.
pub(crate) async fn assert_problem(r: Response, want: Problem) -> Value {
    let content_type = r
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned());
    let body = expect_json(r, want.status).await;
    assert_eq!(
        content_type.as_deref(),
        Some("application/problem+json"),
        "{body}"
    );
    let slug = want.slug.expect("Problem::slug: every problem has a type");
    assert_eq!(body["type"], format!("urn:ringd:problem:{slug}"), "{body}");
    assert_eq!(body["status"], want.status.as_u16(), "{body}");
    assert!(
        body["title"].as_str().is_some_and(|t| !t.is_empty()),
        "{body}"
    );
    let detail = body["detail"].as_str().expect("detail");
    assert!(
        detail.contains(&want.detail_has),
        "detail {detail:?} lacks {:?}",
        want.detail_has
    );
    assert_eq!(body["field"].as_str(), want.field.as_deref(), "{body}");
    body
}
