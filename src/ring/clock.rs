//! Where the service reads the time: a seam, so tests can set it.
//!
//! Snapshots record when they were committed and acks when they arrived
//! and expire. Reading the wall clock directly would leave tests that
//! check a TTL only one way to do it, sleeping through it; with a
//! [`ManualClock`] they set the exact time instead.

use std::fmt::Debug;
use std::sync::Mutex;

use time::OffsetDateTime;

/// A source of the current time.
pub trait Clock: Debug + Send + Sync + 'static {
    /// The current time, truncated to microseconds so it survives a round
    /// trip through RFC 3339 text unchanged.
    fn now(&self) -> OffsetDateTime;
}

/// The system's wall clock, in UTC.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> OffsetDateTime {
        to_micros(OffsetDateTime::now_utc())
    }
}

/// A clock that stands still until it is set or advanced, for tests.
#[derive(Debug)]
pub struct ManualClock {
    now: Mutex<OffsetDateTime>,
}

impl ManualClock {
    /// A clock showing `start` (truncated to microseconds).
    pub fn new(start: OffsetDateTime) -> Self {
        Self {
            now: Mutex::new(to_micros(start)),
        }
    }

    /// Sets the time to `t` (truncated to microseconds).
    pub fn set(&self, t: OffsetDateTime) {
        *self.now.lock().expect("clock lock") = to_micros(t);
    }

    /// Moves the time forward (or back, for a negative `by`).
    pub fn advance(&self, by: time::Duration) {
        let mut now = self.now.lock().expect("clock lock");
        *now = to_micros(*now + by);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> OffsetDateTime {
        *self.now.lock().expect("clock lock")
    }
}

fn to_micros(t: OffsetDateTime) -> OffsetDateTime {
    t.replace_nanosecond(t.nanosecond() / 1_000 * 1_000)
        .expect("a nanosecond below 10^9 stays below it when truncated")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(unix_nanos: i128) -> OffsetDateTime {
        OffsetDateTime::from_unix_timestamp_nanos(unix_nanos).unwrap()
    }

    #[test]
    fn a_manual_clock_shows_exactly_what_it_was_set_to_in_microseconds() {
        let clock = ManualClock::new(at(1_750_000_000_123_456_789));
        assert_eq!(clock.now(), at(1_750_000_000_123_456_000));
        clock.advance(time::Duration::seconds(30));
        assert_eq!(clock.now(), at(1_750_000_030_123_456_000));
        clock.set(at(1_750_000_100_000_000_999));
        assert_eq!(clock.now(), at(1_750_000_100_000_000_000));
    }

    #[test]
    fn the_system_clock_has_no_sub_microsecond_part() {
        let t = SystemClock.now();
        assert_eq!(t.nanosecond() % 1_000, 0, "{t}");
        assert_eq!(t.offset(), time::UtcOffset::UTC);
    }
}
