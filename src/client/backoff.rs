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
}
