package io.github.ringd.placement;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Gives a table snapshot its table, which the snapshot does not carry (9.4). Other algorithms
 * ignore it.
 */
public final class TableSource {
  private static final TableSource NONE = new TableSource(null, null);

  private final byte @Nullable [] encoding;
  private final @Nullable Placement previous;

  private TableSource(byte @Nullable [] encoding, @Nullable Placement previous) {
    this.encoding = encoding;
    this.previous = previous;
  }

  /** No table: enough for every algorithm but table, and for a table ring with no active node. */
  public static TableSource none() {
    return NONE;
  }

  /**
   * The body of {@code GET …/snapshots/{v}/table}: the canonical encoding of this version, whose
   * table is restored; the fingerprint check then covers the whole encoding.
   */
  public static TableSource encoding(byte[] body) {
    return new TableSource(body.clone(), null);
  }

  /**
   * The verified placement of version v − 1, to which the snapshot's table_moves are applied. On
   * {@link PlacementException.Reason#INVALID_TABLE} or a fingerprint mismatch, download the table.
   */
  public static TableSource previous(Placement p) {
    return new TableSource(null, Objects.requireNonNull(p, "previous placement"));
  }

  byte @Nullable [] encodingUnsafe() {
    return encoding;
  }

  @Nullable Placement previousPlacement() {
    return previous;
  }
}
