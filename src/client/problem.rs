//! An error answer of ringd as a [`ClientError`]: its problem document,
//! with the `Retry-After` the client's backoff honours.

use reqwest::Response;

use super::error::ClientError;
use crate::wire::Problem;

/// Turns an error response into a [`ClientError`].
pub(crate) async fn problem_of(resp: Response, url: &str) -> ClientError {
    let status = resp.status().as_u16();
    let retry_after = retry_after_of(resp.headers());
    match resp
        .bytes()
        .await
        .ok()
        .and_then(|b| serde_json::from_slice::<Problem>(&b).ok())
    {
        Some(p) => ClientError::Problem(Box::new(Problem { retry_after, ..p })),
        None => ClientError::Status {
            status,
            url: url.to_owned(),
        },
    }
}

/// A `Retry-After` in delta-seconds, the form ringd sends; the HTTP-date
/// form and anything unreadable count as none.
fn retry_after_of(headers: &reqwest::header::HeaderMap) -> Option<u64> {
    headers
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_is_read_in_seconds_only() {
        let of = |v: &str| {
            let mut h = reqwest::header::HeaderMap::new();
            h.insert(reqwest::header::RETRY_AFTER, v.parse().unwrap());
            retry_after_of(&h)
        };
        assert_eq!(of("7"), Some(7));
        assert_eq!(of(" 12 "), Some(12));
        assert_eq!(of("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(of("-1"), None);
        assert_eq!(of("1.5"), None);
        assert_eq!(retry_after_of(&reqwest::header::HeaderMap::new()), None);
    }
}
