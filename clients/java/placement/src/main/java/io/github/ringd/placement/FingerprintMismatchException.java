package io.github.ringd.placement;

/**
 * A placement rebuilt from a snapshot or an encoding did not hash to the fingerprint it was sent
 * with. Never route on such a placement.
 */
public final class FingerprintMismatchException extends PlacementException {
  private static final long serialVersionUID = 1L;

  private final String expected;
  private final String actual;

  FingerprintMismatchException(String expected, String actual) {
    super(
        Reason.FINGERPRINT_MISMATCH,
        "expected fingerprint " + Strings.excerpt(expected) + ", computed " + actual);
    this.expected = expected;
    this.actual = actual;
  }

  /** The advertised fingerprint. */
  public String expected() {
    return expected;
  }

  /** The fingerprint computed here. */
  public String actual() {
    return actual;
  }
}
