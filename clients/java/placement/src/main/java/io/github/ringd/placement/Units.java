package io.github.ringd.placement;

import java.math.BigInteger;

/**
 * Each node's ownership units and their total (spec 7), as unsigned 128-bit counts: a ring node can
 * own all 2^64 positions. Counts are two longs each (high, low) so that summing the arcs of a large
 * ring stays cheap; ownership converts them to BigInteger.
 */
final class Units {
  private final long[] hi;
  private final long[] lo;
  private long totalHi;
  private long totalLo;

  Units(int nodes) {
    hi = new long[nodes];
    lo = new long[nodes];
  }

  /** Adds v, unsigned, to node's units. */
  void add(int node, long v) {
    long s = lo[node] + v;
    if (Long.compareUnsigned(s, lo[node]) < 0) {
      hi[node]++;
    }
    lo[node] = s;
  }

  /** Adds v, unsigned, to the total. */
  void addTotal(long v) {
    long s = totalLo + v;
    if (Long.compareUnsigned(s, totalLo) < 0) {
      totalHi++;
    }
    totalLo = s;
  }

  /** Sets the total to 2^bits. */
  void setTotalPowerOfTwo(int bits) {
    if (bits == 64) {
      totalHi = 1;
      totalLo = 0;
    } else {
      totalHi = 0;
      totalLo = 1L << bits;
    }
  }

  int nodes() {
    return lo.length;
  }

  BigInteger of(int node) {
    return big(hi[node], lo[node]);
  }

  BigInteger total() {
    return big(totalHi, totalLo);
  }

  private static BigInteger big(long hi, long lo) {
    BigInteger low = new BigInteger(Long.toUnsignedString(lo));
    return hi == 0 ? low : BigInteger.valueOf(hi).shiftLeft(64).add(low);
  }
}
