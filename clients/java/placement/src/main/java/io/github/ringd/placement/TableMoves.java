package io.github.ringd.placement;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A table snapshot's {@code table_moves} (spec 9.4): the slots that changed since version v − 1, a
 * u32 count, then per move a u32 partition, a u8 slot and the node's index among v's active nodes
 * (u16, or u32 above 65,535 nodes). A client holding version v − 1 applies them instead of
 * downloading v's table; the fingerprint then checks the result.
 */
final class TableMoves {
  private TableMoves() {}

  private static PlacementException invalid(String message) {
    return new PlacementException(PlacementException.Reason.INVALID_TABLE, message);
  }

  /**
   * Version v's rows from version v − 1's placement and v's moves: {@link #apply(List, TableLayout,
   * List, int, int, byte[])} on the previous placement's table.
   *
   * @throws PlacementException of reason InvalidTable when previous is not a table placement or the
   *     moves do not fit it
   */
  static List<List<String>> apply(
      Placement previous, List<Node> active, int partitions, int replicationFactor, byte[] moves) {
    if (!(previous.layout() instanceof TableLayout)) {
      throw invalid("the previous placement is not a table");
    }
    return apply(
        previous.nodes(),
        (TableLayout) previous.layout(),
        active,
        partitions,
        replicationFactor,
        moves);
  }

  /**
   * Applies moves to the previous table's rows, as ids (node indices shift when nodes come and go),
   * following 9.4's steps, and returns the new rows of node ids for the new active nodes, which
   * {@link TableLayout#fromRows} then checks (a node not active in v, a node twice in a row).
   *
   * @param prevNodes version v − 1's active nodes, by index
   * @param prev version v − 1's table
   * @param active version v's active nodes, by index
   * @throws PlacementException of reason InvalidTable on any refusal
   */
  static List<List<String>> apply(
      List<Node> prevNodes,
      TableLayout prev,
      List<Node> active,
      int partitions,
      int replicationFactor,
      byte[] moves) {
    int n = active.size();
    int r = Math.min(replicationFactor, n);
    int width = TableLayout.indexWidth(n);
    // Step 1: the partition count, the length, the node indices.
    if (prev.partitions() != partitions) {
      throw invalid(
          "moves cannot change the partition count ("
              + prev.partitions()
              + " to "
              + partitions
              + ")");
    }
    if (moves.length < 4) {
      throw invalid("the moves end early");
    }
    long count = ByteReader.le32(moves, 0);
    long size = 5L + width;
    if (moves.length != 4 + count * size) {
      throw invalid(count + " moves need " + (4 + count * size) + " bytes, not " + moves.length);
    }
    // Step 2: the previous rows as ids, cut or padded with empty slots (null) to r.
    @Nullable String[][] rows = new String[partitions][];
    for (int p = 0; p < partitions; p++) {
      rows[p] = new String[r];
      for (int slot = 0; slot < r; slot++) {
        rows[p][slot] = old(prevNodes, prev, p, slot);
      }
    }
    // Step 3: each move, into a slot that still holds what it held.
    for (long k = 0; k < count; k++) {
      int m = (int) (4 + k * size);
      long part = ByteReader.le32(moves, m);
      int slot = moves[m + 4] & 0xff;
      long to =
          width == 2
              ? (moves[m + 5] & 0xff) | (moves[m + 6] & 0xff) << 8
              : ByteReader.le32(moves, m + 5);
      if (to >= n) {
        throw invalid("a move names node " + to + " of " + n);
      }
      if (part >= partitions || slot >= r) {
        throw invalid("a move to partition " + part + " slot " + slot + " is outside the table");
      }
      int p = (int) part;
      @Nullable String held = old(prevNodes, prev, p, slot);
      if (!java.util.Objects.equals(rows[p][slot], held)) {
        throw invalid("partition " + p + " slot " + slot + " changed twice");
      }
      rows[p][slot] = active.get((int) to).id();
    }
    // Step 4: no empty slot; fromRows refuses inactive nodes and nodes twice in a row.
    List<List<String>> out = new ArrayList<>(partitions);
    for (int p = 0; p < partitions; p++) {
      for (int slot = 0; slot < r; slot++) {
        if (rows[p][slot] == null) {
          throw invalid("the moves leave partition " + p + " slot " + slot + " empty");
        }
      }
      out.add(Arrays.asList(rows[p]));
    }
    return out;
  }

  /** The id the previous table held in partition p's slot, null past its replicas. */
  private static @Nullable String old(List<Node> prevNodes, TableLayout prev, int p, int slot) {
    return slot < prev.replicas() ? prevNodes.get(prev.cell(p, slot)).id() : null;
  }
}
