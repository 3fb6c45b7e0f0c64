package io.github.ringd.client;

import org.jspecify.annotations.Nullable;

/**
 * A failure of the ringd client: the base of every exception it throws or reports in {@link
 * Status#lastError()}. Unchecked: a following client keeps routing on the version it holds, so most
 * failures are reported rather than thrown.
 */
public class RingdException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** A failure described by message, caused by cause (may be null). */
  public RingdException(String message, @Nullable Throwable cause) {
    super(message, cause);
  }

  /** A failure described by message. */
  public RingdException(String message) {
    super(message);
  }
}
