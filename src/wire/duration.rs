//! The `wait=` duration of a long-poll (`GET …/snapshot?after=N&wait=D`):
//! the client writes it, the server parses it, both through this file.

use std::time::Duration;

use crate::ring::durations::{DurationBounds, DurationError, LONG_POLL_WAIT};

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

/// The `wait` values the server accepts, as a pattern: see
/// [`duration_pattern`].
pub fn wait_pattern() -> String {
    duration_pattern(&LONG_POLL_WAIT)
}

/// The texts [`DurationBounds::parse`] accepts for `bounds`, as a regular
/// expression: a whole number and a unit (`ms`, `s` or none, `m`, `h`),
/// with leading zeros. Each unit gets its own range of numbers, so the
/// pattern says exactly what `parse_duration` and the bounds together
/// allow (white space around the value aside, which the parser forgives
/// and the pattern does not invite); a unit with no whole number in range
/// is left out.
pub fn duration_pattern(bounds: &DurationBounds) -> String {
    let (min, max) = (bounds.min.as_millis() as u64, bounds.max.as_millis() as u64);
    let units = [("ms", 1), ("s?", 1_000), ("m", 60_000), ("h", 3_600_000)];
    let alternatives: Vec<String> = units
        .iter()
        .filter_map(|(unit, scale)| {
            let (lo, hi) = (min.div_ceil(*scale).max(1), max / scale);
            (lo <= hi).then(|| format!("0*(?:{}){unit}", in_range(lo, hi)))
        })
        .collect();
    format!("^(?:{})$", alternatives.join("|"))
}

/// A regular expression for the decimal numbers from `lo` to `hi`
/// (1 ≤ `lo` ≤ `hi`), without leading zeros (callers add `0*`).
///
/// The range is cut, from `lo` upwards, into runs that share every digit
/// but the last few: each run is the longest that starts at the current
/// number, stays within `hi`, and does not carry into a higher digit, so
/// it reads as a fixed prefix, one digit class and `[0-9]{k}`.
fn in_range(lo: u64, hi: u64) -> String {
    debug_assert!(1 <= lo && lo <= hi);
    let mut alternatives = Vec::new();
    let mut start = lo;
    loop {
        // The largest block of 10^k numbers aligned at `start` that fits.
        let mut k = 0u32;
        while let Some(next) = 10u64.checked_pow(k + 1) {
            if !start.is_multiple_of(next) || start.checked_add(next - 1).is_none_or(|end| end > hi)
            {
                break;
            }
            k += 1;
        }
        let step = 10u64.pow(k);
        let digit = (start / step) % 10;
        let blocks = (10 - digit).min((hi - start + 1) / step);
        let end = start + blocks * step - 1;
        let text = start.to_string();
        let prefix = &text[..text.len() - k as usize - 1];
        let last = digit + blocks - 1;
        let class = if last == digit {
            digit.to_string()
        } else {
            format!("[{digit}-{last}]")
        };
        let tail = match k {
            0 => String::new(),
            1 => "[0-9]".to_owned(),
            k => format!("[0-9]{{{k}}}"),
        };
        alternatives.push(format!("{prefix}{class}{tail}"));
        if end >= hi {
            break;
        }
        start = end + 1;
    }
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

    #[test]
    fn ranges_read_as_their_runs() {
        assert_eq!(in_range(1, 1), "1");
        assert_eq!(in_range(1, 9), "[1-9]");
        assert_eq!(in_range(1, 300), "[1-9]|[1-9][0-9]|[1-2][0-9]{2}|300");
        assert_eq!(in_range(1000, 2592000), "[1-9][0-9]{3}|[1-9][0-9]{4}|[1-9][0-9]{5}|1[0-9]{6}|2[0-4][0-9]{5}|25[0-8][0-9]{4}|259[0-1][0-9]{3}|2592000");
        assert_eq!(in_range(17, 23), "1[7-9]|2[0-3]");
    }

    #[test]
    fn every_number_of_a_range_and_no_other_matches() {
        for (lo, hi) in [
            (1, 1),
            (1, 10),
            (3, 97),
            (10, 10),
            (99, 1001),
            (1000, 5000),
            (17, 23),
        ] {
            let re = regex::Regex::new(&format!("^(?:{})$", in_range(lo, hi))).unwrap();
            for n in 0..6000u64 {
                assert_eq!(
                    re.is_match(&n.to_string()),
                    (lo..=hi).contains(&n),
                    "{n} in {lo}..={hi}"
                );
            }
        }
    }
}
