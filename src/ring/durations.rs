//! Every duration ringd accepts, from a flag of `ringd serve`, a query
//! parameter, header or body field of the API, with its allowed range and,
//! where it has one, its default. The ranges live here, once, so the
//! server's start-up checks, the API's 400 answers, the client library's
//! settings, the CLI's help and the docs cannot disagree. What a duration is
//! called where it is given (a flag, a parameter) belongs to the layer
//! that reads it, which names it in its messages: see
//! [`DurationError::named`].

use std::time::Duration;

/// The range a duration setting or parameter must fall in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DurationBounds {
    /// Shortest accepted.
    pub min: Duration,
    /// Longest accepted.
    pub max: Duration,
}

/// How often an idle watch stream gets a keep-alive event: 1 s to 5 min.
/// Below a second, keep-alives become traffic of their own (at zero the
/// server would send them in a busy loop); above five minutes, proxies
/// with common idle timeouts close the stream and clients cannot tell a
/// quiet stream from a dead one.
pub const WATCH_KEEPALIVE: DurationBounds = DurationBounds {
    min: Duration::from_secs(1),
    max: Duration::from_secs(5 * 60),
};

/// The watch keep-alive interval unless the server is configured otherwise.
pub const DEFAULT_WATCH_KEEPALIVE: Duration = Duration::from_secs(15);

/// How long a client's ack counts: 10 s to 24 h. Below ten seconds a
/// client that acks on time still flickers in and out of the list; beyond
/// a day, clients that are long gone are counted as diverging.
pub const CLIENT_TTL: DurationBounds = DurationBounds {
    min: Duration::from_secs(10),
    max: Duration::from_secs(24 * 3600),
};

/// How long a client's ack counts unless the server is configured
/// otherwise.
pub const DEFAULT_CLIENT_TTL: Duration = Duration::from_secs(5 * 60);

/// A long-poll's wait: 1 ms to 5 min. Longer waits are better served by
/// polling again (or a watch stream), and they pin a request for longer
/// than many proxies allow.
pub const LONG_POLL_WAIT: DurationBounds = DurationBounds {
    min: Duration::from_millis(1),
    max: Duration::from_secs(5 * 60),
};

/// A write's own deadline: 100 ms to 5 min. Shorter, and a healthy commit
/// would not fit; longer waits pin a request for longer than many proxies
/// allow, as with a long-poll's wait.
pub const WRITE_TIMEOUT: DurationBounds = DurationBounds {
    min: Duration::from_millis(100),
    max: Duration::from_secs(5 * 60),
};

/// A lease's TTL: 1 s to 1 h. Below a second, renewals become most of a
/// node's traffic and one slow round trip costs it its health; beyond an
/// hour, a dead node goes unnoticed for longer than anyone waits.
pub const LEASE_TTL: DurationBounds = DurationBounds {
    min: Duration::from_secs(1),
    max: Duration::from_secs(3600),
};

/// A lease's TTL when the registration gives none.
pub const DEFAULT_LEASE_TTL: Duration = Duration::from_secs(10);

/// The decision-maker's session TTL with etcd: 2 s to 1 min, in whole
/// seconds (etcd's leases count seconds). etcd stretches shorter leases to
/// one and a half of its own election timeout (2 s with its defaults), so a
/// shorter TTL would not mean what it says; beyond a minute, a dead
/// decision-maker holds up every automatic change for minutes.
pub const ELECTION_TTL: DurationBounds = DurationBounds {
    min: Duration::from_secs(2),
    max: Duration::from_secs(60),
};

/// The decision-maker's session TTL unless the server is configured
/// otherwise.
pub const DEFAULT_ELECTION_TTL: Duration = Duration::from_secs(5);

impl DurationBounds {
    /// Parses `text` (see [`parse_duration`]) and checks it is in range.
    pub fn parse(&self, text: &str) -> Result<Duration, DurationError> {
        let d = parse_duration(text).map_err(DurationError::Syntax)?;
        if d < self.min || d > self.max {
            return Err(DurationError::OutOfRange {
                text: text.trim().to_owned(),
                short: d < self.min,
                bounds: *self,
            });
        }
        Ok(d)
    }

    /// Whether `d` is in range.
    pub fn contains(&self, d: Duration) -> bool {
        (self.min..=self.max).contains(&d)
    }

    /// The range for people, e.g. `1s to 5m`.
    pub fn range(&self) -> String {
        format!(
            "{} to {}",
            format_duration(self.min),
            format_duration(self.max)
        )
    }
}

/// Why a duration was refused. The message does not name the setting, so
/// that callers which already do (clap, a problem's `field`) need not
/// repeat it; [`DurationError::named`] adds the name the caller gives.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    /// Not a duration at all.
    #[error("{0}")]
    Syntax(String),
    /// A duration outside its bounds.
    #[error("`{text}` is {} the {} {}; use {}",
        if *short { "below" } else { "above" },
        format_duration(if *short { bounds.min } else { bounds.max }),
        if *short { "minimum" } else { "maximum" },
        bounds.range())]
    OutOfRange {
        /// As given.
        text: String,
        /// Below the minimum (else above the maximum).
        short: bool,
        /// The bounds it broke.
        bounds: DurationBounds,
    },
}

impl DurationError {
    /// The message with `name`, what the setting is called where it was
    /// given, in front of a range error, for places where nothing else
    /// names it.
    pub fn named(&self, name: &str) -> String {
        match self {
            Self::Syntax(m) => m.clone(),
            Self::OutOfRange { .. } => format!("{name} {self}"),
        }
    }
}

/// Parses a duration such as `500ms`, `15s`, `5m` or `1h`; a bare number
/// is seconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("`{text}` is not a duration: use e.g. 500ms, 15s, 5m or 1h"))?;
    let scale = match unit {
        "ms" => 1,
        "" | "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => return Err(format!("`{text}` has an unknown unit: use ms, s, m or h")),
    };
    n.checked_mul(scale)
        .map(Duration::from_millis)
        .ok_or_else(|| format!("`{text}` is too long"))
}

/// Writes `d` in the largest unit of [`parse_duration`] that is exact:
/// `5m`, `24h`, `1500ms`.
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    for (unit, scale) in [("h", 3_600_000), ("m", 60_000), ("s", 1_000)] {
        if ms >= scale && ms.is_multiple_of(scale) {
            return format!("{}{unit}", ms / scale);
        }
    }
    format!("{ms}ms")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_read_back_as_written() {
        assert_eq!(WATCH_KEEPALIVE.range(), "1s to 5m");
        assert_eq!(CLIENT_TTL.range(), "10s to 24h");
        assert_eq!(LONG_POLL_WAIT.range(), "1ms to 5m");
        assert_eq!(WRITE_TIMEOUT.range(), "100ms to 5m");
        assert_eq!(LEASE_TTL.range(), "1s to 1h");
        assert!(WATCH_KEEPALIVE.contains(DEFAULT_WATCH_KEEPALIVE));
        assert!(CLIENT_TTL.contains(DEFAULT_CLIENT_TTL));
        assert!(LEASE_TTL.contains(DEFAULT_LEASE_TTL));
        assert_eq!(ELECTION_TTL.range(), "2s to 1m");
        assert!(ELECTION_TTL.contains(DEFAULT_ELECTION_TTL));
        for b in [
            WATCH_KEEPALIVE,
            CLIENT_TTL,
            LONG_POLL_WAIT,
            LEASE_TTL,
            ELECTION_TTL,
        ] {
            assert_eq!(parse_duration(&format_duration(b.min)), Ok(b.min));
            assert_eq!(parse_duration(&format_duration(b.max)), Ok(b.max));
        }
    }

    #[test]
    fn the_ends_are_inside_and_one_step_beyond_is_refused() {
        let b = WATCH_KEEPALIVE;
        assert_eq!(b.parse("1s"), Ok(Duration::from_secs(1)));
        assert_eq!(b.parse("300s"), Ok(Duration::from_secs(300)));
        let message = |text: &str| b.parse(text).unwrap_err().to_string();
        assert_eq!(
            message("999ms"),
            "`999ms` is below the 1s minimum; use 1s to 5m"
        );
        assert_eq!(
            message("300001ms"),
            "`300001ms` is above the 5m maximum; use 1s to 5m"
        );
        assert_eq!(
            b.parse(" 0 ").unwrap_err().named("keepalive"),
            "keepalive `0` is below the 1s minimum; use 1s to 5m"
        );
        assert_eq!(
            b.parse("soon").unwrap_err().named("keepalive"),
            "`soon` is not a duration: use e.g. 500ms, 15s, 5m or 1h"
        );
        assert!(b.contains(b.min) && b.contains(b.max));
        assert!(!b.contains(Duration::ZERO));
    }

    #[test]
    fn durations_parse_in_every_unit() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration(" 15 "), Ok(Duration::from_secs(15)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(
            parse_duration("18446744073709551615h"),
            Err("`18446744073709551615h` is too long".into())
        );
        assert_eq!(format_duration(Duration::from_millis(1500)), "1500ms");
    }
}
