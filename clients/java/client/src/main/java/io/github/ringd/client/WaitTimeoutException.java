package io.github.ringd.client;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * A wait ({@link RingClient#awaitReady}, {@link RingClient#awaitVersion}, {@link
 * Member#awaitStatus}) that timed out, or ended because the client was closed. Its cause is the
 * last failure met meanwhile (a wrong token's {@link ApiException}, an {@link
 * UnreachableException}), so the caller sees why.
 */
public final class WaitTimeoutException extends RingdException {
  private static final long serialVersionUID = 1L;

  private final boolean closed;

  WaitTimeoutException(String what, Duration waited, boolean closed, @Nullable Throwable last) {
    super(
        (closed ? what + ": closed" : what + ": timed out after " + waited)
            + (last == null ? "" : " (last error: " + last.getMessage() + ")"),
        last);
    this.closed = closed;
  }

  /** Whether the wait ended because the client or member was closed (or stopped), not by time. */
  public boolean closed() {
    return closed;
  }
}
