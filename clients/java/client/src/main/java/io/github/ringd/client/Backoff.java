package io.github.ringd.client;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Waits after failed attempts: doubles from min to max, each wait drawn uniformly from the upper
 * half of the current step ("equal jitter"): never shorter than half the step, so a flapping server
 * is not hammered, yet spread out so that clients that lost the same server do not return together.
 * Used by one thread.
 */
final class Backoff {
  private final long minNanos;
  private final long maxNanos;
  private long stepNanos;

  Backoff(Duration min, Duration max) {
    this.minNanos = min.toNanos();
    this.maxNanos = max.toNanos();
    this.stepNanos = minNanos;
  }

  /** Back to the shortest wait, after something worked. */
  void reset() {
    stepNanos = minNanos;
  }

  /** The next wait, in nanoseconds. */
  long next() {
    long step = stepNanos;
    stepNanos = Math.min(step > Long.MAX_VALUE / 2 ? Long.MAX_VALUE : 2 * step, maxNanos);
    return step / 2 + jitter(step / 2);
  }

  /**
   * The next wait after a watch or long-poll was refused with 503 or 429 and a Retry-After of
   * retryAfter (every server tried): the backoff advances as after any failure, and the wait is
   * {@link #retryAfterWait} of its next wait.
   */
  long afterRefusal(Duration retryAfter) {
    return retryAfterWait(next(), saturatedNanos(retryAfter), maxNanos, jitter(1_000_000_000L));
  }

  /**
   * The rule every ringd client follows after a 503 or 429 with a Retry-After: wait {@code
   * max(next, min(retryAfter, max) + jitter)}, jitter uniform in [0, 1 s). A refused client never
   * comes back sooner than its backoff would, nor sooner than the server asked; the ask is cut to
   * the maximum, so a server cannot park a client for long; and the jitter spreads the clients told
   * the same whole second over that second.
   */
  static long retryAfterWait(long next, long retryAfter, long max, long jitter) {
    return Math.max(next, Math.min(retryAfter, max) + jitter);
  }

  /** A uniform value in [0, bound), 0 for a bound of 0 or less. */
  static long jitter(long bound) {
    return bound <= 0 ? 0 : ThreadLocalRandom.current().nextLong(bound);
  }

  private static long saturatedNanos(Duration d) {
    try {
      return d.toNanos();
    } catch (ArithmeticException e) {
      return Long.MAX_VALUE;
    }
  }
}
