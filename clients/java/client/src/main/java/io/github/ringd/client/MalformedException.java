package io.github.ringd.client;

import org.jspecify.annotations.Nullable;

/** A body or event that is not what the API documents. */
public final class MalformedException extends RingdException {
  private static final long serialVersionUID = 1L;

  private final String what;

  /** What was being read (a URL, an event type) and why it could not be. */
  public MalformedException(String what, String why, @Nullable Throwable cause) {
    super("unexpected response from ringd: " + what + ": " + why, cause);
    this.what = what;
  }

  /** What was being read: a URL, or an event type. */
  public String what() {
    return what;
  }
}
