//! The HTTP headers ringd's answers carry beyond the standard ones, named
//! once for the server that sets them and the clients that read them.

/// Set to `true` on an answer that may be behind changes made through
/// other instances: the instance could not confirm that it is current.
pub const STALE_HEADER: &str = "ringd-stale";

/// Sent with a change: how long the server may try before answering 503,
/// for a client willing to wait out a partition (a duration such as `10s`).
pub const TIMEOUT_HEADER: &str = "ringd-timeout";

/// Set to `true` on a long-poll answer whose ring went back to a lower
/// version than the client's (it was deleted and created again): drop what
/// you hold and take this snapshot.
pub const RESET_HEADER: &str = "ringd-reset";

/// The fingerprint of a placement table (`GET …/snapshot/{version}/table`).
pub const FINGERPRINT_HEADER: &str = "ringd-fingerprint";

/// The entity tag of a ring version: `"<version>"`.
pub fn etag(version: u64) -> String {
    format!("\"{version}\"")
}

/// The version an `ETag` names: `"<version>"`, also in the weak form
/// `W/"<version>"`; `None` for anything else.
pub fn etag_version(tag: &str) -> Option<u64> {
    tag.trim_start_matches("W/").trim_matches('"').parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_etag_names_its_version_in_either_form() {
        assert_eq!(etag(7), "\"7\"");
        assert_eq!(etag_version(&etag(7)), Some(7));
        assert_eq!(etag_version("W/\"12\""), Some(12));
        assert_eq!(etag_version("\"x\""), None);
    }
}
