package io.github.ringd.placement;

import java.util.function.IntPredicate;

/**
 * A sorted point list on a circle of 2^bits positions (5.1), shared by ring, ketama, nginx,
 * twemproxy, envoy_ring_hash and haproxy's boundaries. The successor of a key hash h is the first
 * point at or after h, wrapping to the first point; its node owns the key.
 *
 * <p>A bucket table over the top bits of a position answers most lookups in one read: a bucket
 * without a point names the owner of all its positions, and a bucket with one point says where the
 * point splits it, the owner after the split being the next bucket's first owner. Only buckets
 * holding two or more points are scanned. A binary search over the points costs a cache miss on
 * most of its steps; on a 1,000-node ring it took about twice this table's time.
 */
final class Continuum {
  private static final int KIND_SHIFT = 30;
  private static final int PAYLOAD_MASK = (1 << KIND_SHIFT) - 1;
  private static final int KIND_MASK = ~PAYLOAD_MASK;

  /** Two or more points before the bucket's last position: scan from the payload's index. */
  private static final int KIND_MANY = 0;

  /** One point before the bucket's last position, its offset (top 30 bits) the payload. */
  private static final int KIND_ONE = 1 << KIND_SHIFT;

  /** No point before the bucket's last position, so the entry owns the whole bucket. */
  private static final int KIND_NONE = 2 << KIND_SHIFT;

  /** Position then node index per point, in the algorithm's order. */
  private final long[] points;

  private final int size;

  /**
   * Per bucket, the word (kind and payload) in the high half and the entry in the low half: the
   * owner of the first point at or after the bucket's start, wrapping. Null with no point, or too
   * many for a payload to index (binary search then).
   */
  private final long @org.jspecify.annotations.Nullable [] buckets;

  private final int shift; // position bits dropped to get a bucket number
  private final int drop; // offset bits dropped to fit a split in 30 bits
  private final int bits;

  /** A continuum of points already in the algorithm's order; bits is 64 or 32. */
  Continuum(PointList inOrder, int bits) {
    PointList p = inOrder.trimmed();
    this.points = p.raw();
    this.size = p.size();
    this.bits = bits;
    if (size == 0 || size > PAYLOAD_MASK) {
      buckets = null;
      shift = 0;
      drop = 0;
      return;
    }
    // Two to four buckets per point, so that about one bucket in thirty holds two points or more,
    // capped at 2^20 buckets (8 MiB); tables within 2^16 buckets (inside a core's L2) get up to
    // eight times as many.
    int base = Math.min(Math.max(32 - Integer.numberOfLeadingZeros(size), 1), 20);
    int width = Math.min(Math.min(Math.max(base + 1, Math.min(base + 2, 16)), 20), bits);
    shift = bits - width;
    drop = shift > KIND_SHIFT ? shift - KIND_SHIFT : 0;
    buckets = fill(width);
  }

  /** A continuum of points sorted by position, then node index (5.1). */
  static Continuum sorted(PointList points, int bits) {
    points.sortByPositionThenNode();
    return new Continuum(points, bits);
  }

  private long[] fill(int width) {
    long[] table = new long[1 << width];
    long mask = (1L << shift) - 1;
    int b = 0;
    for (int i = 0; i < size; ) {
      // Buckets before point i's own have no point: it owns them.
      int home = (int) (pos(i) >>> shift);
      for (; b < home; b++) {
        table[b] = bucket(KIND_NONE, node(i));
      }
      // Points i..k-1 are in the bucket; those before its last position split it, one on the last
      // position owns it all.
      int k = i;
      int split = 0;
      long last = pos(i) | mask;
      for (; k < size && (pos(k) >>> shift) == home; k++) {
        if (Long.compareUnsigned(pos(k), last) < 0) {
          split++;
        }
      }
      if (split == 0) {
        table[home] = bucket(KIND_NONE, node(i));
      } else if (split == 1 && k - i == 1) {
        // The next point is at or after the next bucket's start.
        int off = (int) ((pos(i) & mask) >>> drop);
        table[home] = bucket(KIND_ONE | off, node(i));
      } else {
        table[home] = bucket(KIND_MANY | i, node(i));
      }
      b = home + 1;
      i = k;
    }
    for (; b < table.length; b++) {
      table[b] = bucket(KIND_NONE, node(0)); // wraps to the first point
    }
    return table;
  }

  private static long bucket(int word, int entry) {
    return ((long) word << 32) | (entry & 0xffffffffL);
  }

  int size() {
    return size;
  }

  /** How many buckets of each kind (none, one, many) the table holds; zeros without a table. */
  int[] bucketKinds() {
    int[] kinds = new int[3];
    if (buckets != null) {
      for (long e : buckets) {
        int kind = (int) (e >>> 32) & KIND_MASK;
        kinds[kind == KIND_NONE ? 0 : kind == KIND_ONE ? 1 : 2]++;
      }
    }
    return kinds;
  }

  int bits() {
    return bits;
  }

  long pos(int i) {
    return points[2 * i];
  }

  int node(int i) {
    return (int) points[2 * i + 1];
  }

  /** A copy of the points, in order. */
  PointList pointList() {
    PointList out = new PointList(size);
    for (int i = 0; i < size; i++) {
      out.add(pos(i), node(i));
    }
    return out;
  }

  /**
   * The index of the first point at or after h, wrapping to 0 (5.1). The circle must have a point.
   */
  int successor(long h) {
    if (buckets != null) {
      long e = buckets[(int) (h >>> shift)];
      int word = (int) (e >>> 32);
      if ((word & KIND_MASK) == KIND_MANY) {
        int i = word & PAYLOAD_MASK;
        while (i < size && Long.compareUnsigned(points[2 * i], h) < 0) {
          i++;
        }
        return i == size ? 0 : i;
      }
    }
    int lo = 0;
    int hi = size;
    while (lo < hi) {
      int m = (lo + hi) >>> 1;
      if (Long.compareUnsigned(points[2 * m], h) < 0) {
        lo = m + 1;
      } else {
        hi = m;
      }
    }
    return lo == size ? 0 : lo;
  }

  /** The node owning key hash h, -1 without points. Allocates nothing. */
  int ownerIndex(long h) {
    long[] table = buckets;
    if (table == null) {
      return size == 0 ? -1 : node(successor(h));
    }
    int b = (int) (h >>> shift);
    long e = table[b];
    int word = (int) (e >>> 32);
    int kind = word & KIND_MASK;
    if (kind == KIND_NONE) {
      return (int) e;
    }
    if (kind == KIND_ONE) {
      long off = (h & ((1L << shift) - 1)) >>> drop;
      long split = word & PAYLOAD_MASK;
      if (off < split || (off == split && drop == 0)) {
        return (int) e;
      }
      if (off > split) {
        return (int) table[(b + 1) & (table.length - 1)];
      }
      // The same top bits as the point: only its position tells.
      return node(successor(h));
    }
    int i = word & PAYLOAD_MASK;
    while (i < size && Long.compareUnsigned(points[2 * i], h) < 0) {
      i++;
    }
    return i == size ? node(0) : node(i);
  }

  /** Visits the owners of the points from successor(h) up, wrapping, each point once (6.1). */
  void walk(long h, IntPredicate visit) {
    if (size == 0) {
      return;
    }
    int s = successor(h);
    for (int i = s; i < size; i++) {
      if (!visit.test(node(i))) {
        return;
      }
    }
    for (int i = 0; i < s; i++) {
      if (!visit.test(node(i))) {
        return;
      }
    }
  }

  /**
   * The arcs of 7: point j owns (p[j-1], p[j]], and point 0 also [0, p[0]] and the wrap past the
   * last point; the total is 2^bits.
   */
  Units units(int nodes) {
    Units u = new Units(nodes);
    u.setTotalPowerOfTwo(bits);
    if (size == 0) {
      return u;
    }
    long last = bits == 64 ? -1L : (1L << bits) - 1; // the circle's largest position
    u.add(node(0), pos(0));
    u.add(node(0), 1); // [0, p0]: p0 + 1 positions
    for (int j = 1; j < size; j++) {
      u.add(node(j), pos(j) - pos(j - 1));
    }
    u.add(node(0), last - pos(size - 1));
    return u;
  }

  /**
   * Appends a u32 point count, then (position, node index) pairs: u64 positions on a 64-bit circle,
   * u32 on a 32-bit one (9.1).
   */
  void appendPoints(ByteSink out) {
    out.reserve(4 + size * (4 + bits / 8));
    out.u32(size);
    for (int i = 0; i < size; i++) {
      if (bits == 64) {
        out.u64(pos(i));
      } else {
        out.u32(pos(i));
      }
      out.u32(node(i));
    }
  }

  /**
   * Reads a u32 count and that many (position, node index) pairs, positions of bits bits; a node
   * index must be below nodes. The order is left to the caller to check.
   */
  static PointList decodePoints(ByteReader r, int nodes, int bits) {
    long count = r.u32();
    long pairSize = 4L + bits / 8;
    if (count * pairSize > r.remaining()) {
      throw Decoder.bad(count + " points in " + r.remaining() + " bytes");
    }
    PointList points = new PointList((int) count);
    for (long j = 0; j < count; j++) {
      long pos = bits == 64 ? r.u64() : r.u32();
      long node = r.u32();
      if (node >= nodes) {
        throw Decoder.bad("a point names node " + node + " of " + nodes);
      }
      points.add(pos, (int) node);
    }
    return points;
  }
}
