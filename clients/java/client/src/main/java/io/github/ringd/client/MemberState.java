package io.github.ringd.client;

/** Where a {@link Member} stands with its lease. */
public enum MemberState {
  /** Not registered yet: the first registration is under way, or waits to be tried again. */
  JOINING,
  /** Holds a fresh lease (first, or after a loss). */
  REGISTERED,
  /** Holds a lease it has renewed since registering. */
  RENEWING,
  /** The lease is gone (refused on renewal, or no server answered before its deadline). */
  LOST,
  /** Released on leave or close; final. */
  LEFT,
  /**
   * Stopped on a refusal retrying cannot fix (a wrong token, a missing ring, a record ringd
   * refuses); final, see {@link MemberStatus#lastError()}.
   */
  FAILED;

  /** Whether the member holds a lease it believes live. */
  public boolean holdsLease() {
    return this == REGISTERED || this == RENEWING;
  }

  /** Whether nothing will change any more (left or failed). */
  public boolean isFinal() {
    return this == LEFT || this == FAILED;
  }
}
