//! Exponential backoff with jitter, so that clients that lost the same
//! server do not all come back in the same instant.

use std::time::Duration;

use crate::jitter::random_below;

/// Doubles from `min` to `max`; each wait is drawn uniformly from the upper
/// half of the current step ("equal jitter"): never shorter than half the
/// step, so a flapping server is not hammered, yet spread out.
#[derive(Debug, Clone)]
pub(crate) struct Backoff {
    min: Duration,
    max: Duration,
    step: Duration,
}

impl Backoff {
    pub(crate) fn new(min: Duration, max: Duration) -> Self {
        Self {
            min,
            max,
            step: min,
        }
    }

    /// Back to the shortest wait, after something worked.
    pub(crate) fn reset(&mut self) {
        self.step = self.min;
    }

    /// The next wait.
    pub(crate) fn next_wait(&mut self) -> Duration {
        let step = self.step;
        self.step = (self.step * 2).min(self.max);
        step / 2 + random_below(step / 2)
    }

    /// The next wait after servers refused with a `Retry-After`: no
    /// shorter than the backoff's, nor than what they asked for (cut to
    /// the maximum, so a server cannot park a client for long), plus up to
    /// a second of jitter: `Retry-After` is in whole seconds, and the
    /// clients refused in one second would otherwise all return together
    /// in another.
    pub(crate) fn after_refusal(&mut self, retry_after: Duration) -> Duration {
        let asked = retry_after.min(self.max) + random_below(Duration::from_secs(1));
        self.next_wait().max(asked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_within_jitter_and_stop_at_max() {
        let ms = Duration::from_millis;
        let mut b = Backoff::new(ms(100), ms(1000));
        for step in [100, 200, 400, 800, 1000, 1000] {
            let w = b.next_wait();
            assert!(w >= ms(step / 2) && w < ms(step), "step {step}: {w:?}");
        }
        b.reset();
        let w = b.next_wait();
        assert!(w >= ms(50) && w < ms(100), "{w:?}");
    }

    #[test]
    fn a_refusal_waits_what_the_server_asked_within_the_maximum() {
        let s = Duration::from_secs;
        let mut b = Backoff::new(Duration::from_millis(100), s(10));
        for _ in 0..200 {
            b.reset();
            let w = b.after_refusal(s(3));
            assert!(w >= s(3) && w < s(4), "{w:?}");
            // Cut to the maximum backoff.
            let w = b.after_refusal(s(3600));
            assert!(w >= s(10) && w < s(11), "{w:?}");
        }
        // The backoff still advances, and wins when it is the longer wait.
        let mut b = Backoff::new(s(8), s(64));
        assert!(b.after_refusal(s(1)) >= s(4));
        let w = b.after_refusal(Duration::ZERO);
        assert!(w >= s(8) && w < s(16), "{w:?}");
    }
}
