//! Random spreading of waits, so that parties that would otherwise all act
//! in the same instant (clients coming back after an outage, long-polls
//! timing out together, instances retrying the same compare-and-swap) do
//! not.
//!
//! Used by the server (long-poll deadlines, change retries) and by the
//! client (reconnect backoff), so it is compiled for either feature.

use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

/// A uniformly drawn duration in `[0, max)`.
///
/// An input of zero returns zero: the range is empty, and "no jitter
/// asked for" must not become a wait. Durations beyond `u64::MAX`
/// nanoseconds (about 584 years) are drawn as if they were that long.
///
/// Not for cryptography: the randomness comes from the standard library's
/// randomly keyed hasher (every `RandomState` gets fresh keys), which is
/// plenty for spreading waits and needs no extra dependency for one number.
pub(crate) fn random_below(max: Duration) -> Duration {
    let nanos = u64::try_from(max.as_nanos()).unwrap_or(u64::MAX);
    if nanos == 0 {
        return Duration::ZERO;
    }
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(nanos);
    Duration::from_nanos(h.finish() % nanos)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_gives_zero() {
        assert_eq!(random_below(Duration::ZERO), Duration::ZERO);
    }

    #[test]
    fn one_nanosecond_leaves_only_zero() {
        for _ in 0..100 {
            assert_eq!(random_below(Duration::from_nanos(1)), Duration::ZERO);
        }
    }

    #[test]
    fn draws_stay_below_max_and_spread_over_the_range() {
        let max = Duration::from_millis(10);
        let draws: Vec<Duration> = (0..1000).map(|_| random_below(max)).collect();
        assert!(draws.iter().all(|d| *d < max), "{draws:?}");
        // Uniform over [0, 10 ms): each half gets some of 1000 draws
        // unless the source is broken (chance of a false failure 2^-999).
        assert!(draws.iter().any(|d| *d < max / 2), "none in the lower half");
        assert!(
            draws.iter().any(|d| *d >= max / 2),
            "none in the upper half"
        );
    }

    #[test]
    fn the_longest_durations_do_not_overflow() {
        let d = random_below(Duration::MAX);
        assert!(d < Duration::from_nanos(u64::MAX), "{d:?}");
    }
}
