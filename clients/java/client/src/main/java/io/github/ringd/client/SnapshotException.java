package io.github.ringd.client;

/**
 * A ring version refused: its placement did not hash to its fingerprint, or the placement core or
 * the decoder refused its contents. The client keeps routing on the version it held. The cause is a
 * {@code FingerprintMismatchException}, another {@code PlacementException}, or a {@link
 * MalformedException}.
 */
public final class SnapshotException extends RingdException {
  private static final long serialVersionUID = 1L;

  private final String ring;
  private final long version;

  /** Version of ring (0 when the event did not say) was refused for cause. */
  public SnapshotException(String ring, long version, Throwable cause) {
    super("ring " + ring + " v" + version + " refused: " + cause.getMessage(), cause);
    this.ring = ring;
    this.version = version;
  }

  /** The ring. */
  public String ring() {
    return ring;
  }

  /** The refused version, 0 when the event did not say. */
  public long version() {
    return version;
  }
}
