package io.github.ringd.placement;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntPredicate;

/**
 * A stored partition table (spec 5.6): P rows of r distinct node indices, primary first, r =
 * min(replication_factor, active nodes). A key's partition is the top log2 P bits of its 64-bit
 * hash. A client never computes a table: it restores the server's (5.6.3), from the vector files'
 * rows of ids, from an encoding's body, or from the previous version and its moves (9.4).
 */
final class TableLayout implements Layout {
  private final int nodes; // active nodes, which set the index width
  private final int partitions;
  private final int replicas;
  private final int shift;
  private final int[] cells; // partitions × replicas, row by row

  private TableLayout(int nodes, int partitions, int replicas, int[] cells) {
    this.nodes = nodes;
    this.partitions = partitions;
    this.replicas = replicas;
    // A key's partition is the top b bits of its hash, b = log2 P.
    this.shift = 64 - Integer.numberOfTrailingZeros(partitions);
    this.cells = cells;
  }

  /** Bytes per node index: u16 up to 65,535 nodes, else u32 (9.1). */
  static int indexWidth(int nodes) {
    return nodes <= 0xffff ? 2 : 4;
  }

  /**
   * A table of the cells after steps 4 and 5 of 5.6.3: every index below n, no row holding a node
   * twice. partitions must be a power of two.
   */
  static TableLayout of(int n, int partitions, int replicas, int[] cells) {
    for (int p = 0; p < partitions; p++) {
      int row = p * replicas;
      for (int k = 0; k < replicas; k++) {
        int c = cells[row + k];
        if (c < 0 || c >= n) {
          throw invalid(
              "partition " + p + " names node " + Integer.toUnsignedString(c) + " of " + n);
        }
        for (int j = 0; j < k; j++) {
          if (cells[row + j] == c) {
            throw invalid("partition " + p + " names a node twice");
          }
        }
      }
    }
    return new TableLayout(n, partitions, replicas, cells);
  }

  /** The table of a ring with no active node: P empty rows. */
  static TableLayout empty(int partitions) {
    return new TableLayout(0, partitions, 0, new int[0]);
  }

  private static PlacementException invalid(String message) {
    return new PlacementException(PlacementException.Reason.INVALID_TABLE, message);
  }

  /**
   * Restores a table body (9.1) for the config and n active nodes only as 5.6.3 says: the
   * configured partition count, r = min(replicationFactor, n) replicas, exactly P × r indices of
   * the right width, each below n, no node twice in a row (InvalidTable otherwise).
   */
  static TableLayout fromBody(int n, int partitions, int replicationFactor, byte[] body) {
    if (body.length < 5) {
      throw invalid("the table body ends early");
    }
    long p = ByteReader.le32(body, 0);
    int r = body[4] & 0xff;
    if (p != partitions) {
      throw invalid("the table has " + p + " partitions, the config " + partitions);
    }
    int want = Math.min(replicationFactor, n);
    if (r != want) {
      throw invalid("the table has " + r + " replicas per partition, not " + want);
    }
    int width = indexWidth(n);
    long size = p * r * width;
    if (body.length - 5L != size) {
      throw invalid("the table's cells are " + (body.length - 5) + " bytes, not " + size);
    }
    int[] cells = new int[(int) (p * r)];
    for (int i = 0; i < cells.length; i++) {
      int at = 5 + width * i;
      cells[i] =
          width == 2
              ? (body[at] & 0xff) | (body[at + 1] & 0xff) << 8
              : (int) ByteReader.le32(body, at);
    }
    return of(n, partitions, r, cells);
  }

  /** Restores a table given as rows of node ids, primary first (the vector files' table). */
  static TableLayout fromRows(
      List<Node> active, int partitions, int replicationFactor, List<List<String>> rows) {
    Map<String, Integer> index = new HashMap<>();
    for (int i = 0; i < active.size(); i++) {
      index.put(active.get(i).id(), i);
    }
    int r = Math.min(replicationFactor, active.size());
    if (rows.size() != partitions) {
      throw invalid(rows.size() + " rows for " + partitions + " partitions");
    }
    int[] cells = new int[partitions * r];
    int c = 0;
    for (int p = 0; p < partitions; p++) {
      List<String> row = rows.get(p);
      if (row.size() != r) {
        throw invalid("partition " + p + " holds " + row.size() + " replicas, not " + r);
      }
      for (String id : row) {
        Integer i = index.get(id);
        if (i == null) {
          throw invalid(
              "partition " + p + " names " + Strings.excerpt(id) + ", not an active node");
        }
        cells[c++] = i;
      }
    }
    return of(active.size(), partitions, r, cells);
  }

  /**
   * Reads a table body of an encoding (9.2): its own partition count, which must be one 2.1 allows,
   * and r = min(replication_factor, nodes) from the header.
   */
  static TableLayout decode(ByteReader r, int n, int replicationFactor) {
    byte[] body = r.rest();
    if (body.length < 4 || !RingConfig.validPartitions(ByteReader.le32(body, 0))) {
      throw Decoder.bad("a table body without a valid partition count");
    }
    // The decoder reports fromBody's InvalidTable as InvalidEncoding.
    return fromBody(n, (int) ByteReader.le32(body, 0), replicationFactor, body);
  }

  /**
   * The layout of a table placement: its stored table as rows (the vector files') or as a body (an
   * encoding's), or with no active node the P empty rows the config implies. A client never
   * computes a table (5.6.1), so anything else is TableRequired.
   */
  static TableLayout build(RingConfig c, List<Node> active, Stored stored) {
    List<List<String>> rows = stored.tableRows();
    byte[] body = stored.tableBodyUnsafe();
    if (rows != null) {
      return fromRows(active, c.partitions(), c.replicationFactor(), rows);
    }
    if (body != null) {
      return fromBody(active.size(), c.partitions(), c.replicationFactor(), body);
    }
    if (active.isEmpty()) {
      return empty(c.partitions());
    }
    throw new PlacementException(
        PlacementException.Reason.TABLE_REQUIRED, "a table placement needs its stored table");
  }

  /** The rows as node ids, primary first. */
  @Override
  public List<List<String>> tableRows(List<Node> active) {
    List<List<String>> out = new java.util.ArrayList<>(partitions);
    for (int p = 0; p < partitions; p++) {
      String[] row = new String[replicas];
      for (int s = 0; s < replicas; s++) {
        row[s] = active.get(cells[p * replicas + s]).id();
      }
      out.add(List.of(row));
    }
    return out;
  }

  int partitions() {
    return partitions;
  }

  int replicas() {
    return replicas;
  }

  /** The node index in partition p's slot (0 = primary). */
  int cell(int p, int slot) {
    return cells[p * replicas + slot];
  }

  @Override
  public int ownerIndex(long h) {
    if (replicas == 0) {
      return -1;
    }
    return cells[(int) (h >>> shift) * replicas];
  }

  /** Visits the key's row, then the following rows, wrapping, each once (6.1). */
  @Override
  public void walk(long h, IntPredicate visit) {
    if (replicas == 0) {
      return;
    }
    int first = (int) (h >>> shift);
    for (int k = 0; k < partitions; k++) {
      int row = ((first + k) & (partitions - 1)) * replicas;
      for (int s = 0; s < replicas; s++) {
        if (!visit.test(cells[row + s])) {
          return;
        }
      }
    }
  }

  /** Counts the partitions each node is primary for; the total is P (7). */
  @Override
  public Units units(int n) {
    Units u = new Units(n);
    if (replicas > 0) {
      for (int p = 0; p < partitions; p++) {
        u.add(cells[p * replicas], 1);
      }
    }
    u.addTotal(partitions);
    return u;
  }

  /** Counts the cells, primary or not, holding each node (7). */
  @Override
  public int[] replicaCounts(int n) {
    int[] held = new int[n];
    for (int c : cells) {
      held[c]++;
    }
    return held;
  }

  /**
   * The u32 partition count, the u8 replica count, then the cells row by row, u16 or u32 by node
   * count (9.1).
   */
  @Override
  public void appendBody(ByteSink out) {
    boolean wide = indexWidth(nodes) == 4;
    out.reserve(5 + cells.length * (wide ? 4 : 2));
    out.u32(partitions);
    out.u8(replicas);
    for (int c : cells) {
      if (wide) {
        out.u32(c);
      } else {
        out.u16(c);
      }
    }
  }

  @Override
  public String basis() {
    return "partitions";
  }
}
