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

/// The `wait` values the server accepts: a whole number and a unit,
/// within [`LONG_POLL_WAIT`]. Each unit gets its own bound, so the pattern
/// says exactly what `parse_duration` and the bounds together allow. The
/// bounds' minimum is one millisecond, so every unit starts at 1, and a
/// unit too large to fit under the maximum once is left out.
pub fn wait_pattern() -> String {
    debug_assert_eq!(LONG_POLL_WAIT.min.as_millis(), 1, "every unit starts at 1");
    let ms = LONG_POLL_WAIT.max.as_millis() as u64;
    let units = [
        ("ms", ms),
        ("s?", ms / 1_000),
        ("m", ms / 60_000),
        ("h", ms / 3_600_000),
    ];
    let alternatives: Vec<String> = units
        .iter()
        .filter(|(_, max)| *max > 0)
        .map(|(unit, max)| format!("0*(?:{}){unit}", one_to(*max)))
        .collect();
    format!("^(?:{})$", alternatives.join("|"))
}

/// A regular expression for the decimal numbers from 1 to `n` (`n` ≥ 1),
/// without leading zeros (callers add `0*`).
fn one_to(n: u64) -> String {
    let digits: Vec<u32> = n
        .to_string()
        .chars()
        .map(|c| c.to_digit(10).expect("decimal digits"))
        .collect();
    let k = digits.len();
    let mut alternatives = Vec::new();
    // Every number with fewer digits than `n`.
    if k > 1 {
        alternatives.push(format!("[1-9][0-9]{{0,{}}}", k - 2));
    }
    // Numbers with as many digits, below `n`: equal to `n` up to digit
    // `i`, smaller there; the first digit is never 0.
    for i in 0..k {
        let low = if i == 0 { 1 } else { 0 };
        if digits[i] <= low {
            continue;
        }
        let prefix: String = digits[..i].iter().map(|d| d.to_string()).collect();
        let rest = k - 1 - i;
        let tail = if rest == 0 {
            String::new()
        } else {
            format!("[0-9]{{{rest}}}")
        };
        alternatives.push(format!("{prefix}[{low}-{}]{tail}", digits[i] - 1));
    }
    alternatives.push(n.to_string());
    alternatives.join("|")
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
