package io.github.ringd.placement;

import java.util.Arrays;
import java.util.List;
import java.util.function.IntPredicate;

/**
 * A Maglev lookup table filled as Envoy fills it (5.3): M slots, each a node index; empty with no
 * active node. envoy_maglev (5.11) is the same fill on its EDS weights, and shares this layout.
 */
final class MaglevLayout implements Layout {
  private static final int EMPTY = -1;

  private final int[] table;

  MaglevLayout(int[] table) {
    this.table = table;
  }

  /**
   * Fills a table of m slots (a prime, at least the node count) for the active nodes, placed by
   * their labels. weights are by node index: the raw weights, or weight × ramp in a ramped set
   * (scaling all alike changes no comparison); envoy_maglev gives its EDS weights, at most 2^31, so
   * round × weight stays below 2^55 (round ≤ m ≤ 5,000,011).
   */
  static MaglevLayout fill(List<Node> active, long[] weights, int m) {
    int n = active.size();
    if (n == 0) {
      return new MaglevLayout(new int[0]);
    }
    // Fill order: labels in byte order, ties by node index (Envoy's host order, sorted by hash
    // key).
    Integer[] order = new Integer[n];
    for (int i = 0; i < n; i++) {
      order[i] = i;
    }
    Arrays.sort(
        order, (a, b) -> Strings.compareBytes(active.get(a).label(), active.get(b).label()));
    int[] node = new int[n];
    long[] offset = new long[n];
    long[] skip = new long[n];
    long[] weight = new long[n];
    long[] next = new long[n];
    long[] target = new long[n];
    long top = 0;
    for (int k = 0; k < n; k++) {
      int i = order[k];
      byte[] label = Strings.utf8(active.get(i).label());
      node[k] = i;
      offset[k] = Long.remainderUnsigned(Hashes.xxh64(label, 0), m);
      skip[k] = Long.remainderUnsigned(Hashes.xxh64(label, 1), m - 1L) + 1;
      weight[k] = weights[i];
      top = Math.max(top, weights[i]);
    }
    int[] table = new int[m];
    Arrays.fill(table, EMPTY);
    int filled = 0;
    for (long round = 1; filled < m; round++) {
      for (int k = 0; k < n && filled < m; k++) {
        if (round * weight[k] < target[k]) {
          continue; // not this node's turn
        }
        target[k] += top;
        // offset, skip < m ≤ 2^24 and next < 2^24 keep skip × next far below 2^63.
        int c = (int) ((offset[k] + skip[k] * next[k]) % m);
        while (table[c] != EMPTY) {
          next[k]++;
          c = (int) ((offset[k] + skip[k] * next[k]) % m);
        }
        table[c] = node[k];
        next[k]++;
        filled++;
      }
    }
    return new MaglevLayout(table);
  }

  /** The table's length M, 0 with no active node. */
  int size() {
    return table.length;
  }

  /** The node index in slot i. */
  int slot(int i) {
    return table[i];
  }

  @Override
  public int ownerIndex(long h) {
    int[] t = table;
    if (t.length == 0) {
      return -1;
    }
    return t[(int) Long.remainderUnsigned(h, t.length)];
  }

  /** Visits the slots from h mod M up, wrapping, each once (6.1). */
  @Override
  public void walk(long h, IntPredicate visit) {
    if (table.length == 0) {
      return;
    }
    int s = (int) Long.remainderUnsigned(h, table.length);
    for (int i = s; i < table.length; i++) {
      if (!visit.test(table[i])) {
        return;
      }
    }
    for (int i = 0; i < s; i++) {
      if (!visit.test(table[i])) {
        return;
      }
    }
  }

  /** Counts each node's slots; the total is M (7). */
  @Override
  public Units units(int nodes) {
    Units u = new Units(nodes);
    for (int o : table) {
      u.add(o, 1);
    }
    u.addTotal(table.length);
    return u;
  }

  @Override
  public void appendBody(ByteSink out) {
    out.reserve(4 + 4 * table.length);
    out.u32(table.length);
    for (int o : table) {
      out.u32(o);
    }
  }

  @Override
  public String basis() {
    return "table_entries";
  }

  /**
   * Reads a maglev or envoy_maglev body (9.1): a u32 size M, prime, at least the node count and at
   * most the algorithm's bound (0 with no node), then M node indices.
   */
  static MaglevLayout decode(Algorithm a, int n, ByteReader r) {
    long m = r.u32();
    if (m * 4 > r.remaining()
        || (m == 0) != (n == 0)
        || (m > 0 && (m < n || m > a.maxTableSize() || !RingConfig.isPrime(m)))) {
      throw Decoder.bad("a " + a + " table of " + m + " slots for " + n + " nodes");
    }
    int[] table = new int[(int) m];
    for (int i = 0; i < table.length; i++) {
      long o = r.u32();
      if (o >= n) {
        throw Decoder.bad("slot " + i + " names node " + o + " of " + n);
      }
      table[i] = (int) o;
    }
    return new MaglevLayout(table);
  }
}
