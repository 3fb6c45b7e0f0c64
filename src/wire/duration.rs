//! The `wait=` duration of a long-poll (`GET …/snapshot?after=N&wait=D`):
//! the client writes it, the server parses it, both through this file.

use std::time::Duration;

use crate::ring::durations::{DurationError, LONG_POLL_WAIT};

/// Writes `wait` as the query value: whole milliseconds (`30000ms`), which
/// every accepted wait is.
pub fn format_wait(wait: Duration) -> String {
    format!("{}ms", wait.as_millis())
}

/// Parses a `wait` value: a duration such as `30s`, `500ms` or `2m`,
/// within [`LONG_POLL_WAIT`].
pub fn parse_wait(text: &str) -> Result<Duration, DurationError> {
    LONG_POLL_WAIT.parse(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_client_writes_the_server_parses() {
        for wait in [
            LONG_POLL_WAIT.min,
            Duration::from_millis(1500),
            Duration::from_secs(30),
            LONG_POLL_WAIT.max,
        ] {
            assert_eq!(parse_wait(&format_wait(wait)), Ok(wait));
        }
        assert_eq!(format_wait(Duration::from_secs(30)), "30000ms");
        assert!(parse_wait("0ms").is_err());
    }
}
