package io.github.ringd.placement;

import java.util.Arrays;
import java.util.List;
import java.util.function.IntPredicate;

/**
 * Weighted highest random weight in exact integer arithmetic (5.5): no platform logarithm, so every
 * language agrees.
 */
final class Rendezvous implements Layout {
  private final long[] nodeHashes; // H(hash, label) by node index
  private final long[] weights; // weights, or weight × ramp in a ramped set

  /** All weights are equal, so the order is by draw alone (5.5's shortcut), skipping L. */
  private final boolean uniform;

  private Rendezvous(long[] nodeHashes, long[] weights) {
    this.nodeHashes = nodeHashes;
    this.weights = weights;
    boolean u = true;
    for (long w : weights) {
      u = u && w == weights[0];
    }
    this.uniform = u;
  }

  static Rendezvous build(List<Node> active, HashFunction h, long[] weights) {
    long[] hashes = new long[active.size()];
    for (int i = 0; i < hashes.length; i++) {
      hashes[i] = Hashes.hash64(h, Strings.utf8(active.get(i).label()));
    }
    return new Rendezvous(hashes, weights);
  }

  /** Reads each node's label hash in index order (9.1); the weights come from the header. */
  static Rendezvous decode(List<Node> nodes, boolean ramped, ByteReader r) {
    long[] hashes = new long[nodes.size()];
    for (int i = 0; i < hashes.length && !r.failed(); i++) {
      hashes[i] = r.u64();
    }
    return new Rendezvous(hashes, Placement.weights(nodes, ramped));
  }

  /** The high 64 bits of the unsigned 128-bit product a × b. */
  static long unsignedMultiplyHigh(long a, long b) {
    return Math.multiplyHigh(a, b) + ((a >> 63) & b) + ((b >> 63) & a);
  }

  /**
   * L(x) = ⌊2^32 · log2 x⌋ for x = v + 1, 1 ≤ x ≤ 2^64, by repeated squaring of the mantissa in
   * 1.63 fixed point (5.5). Taking v rather than x keeps x = 2^64 representable.
   */
  static long log2Q32(long v) {
    if (v == -1L) {
      return 64L << 32; // x = 2^64
    }
    long x = v + 1;
    long e = 63L - Long.numberOfLeadingZeros(x);
    long m = x << (63 - e); // in [2^63, 2^64)
    long frac = 0;
    for (int i = 0; i < 32; i++) {
      long hi = unsignedMultiplyHigh(m, m);
      long lo = m * m;
      // (m × m) >> 63 is hi × 2 + (lo >> 63), below 2^65: at or above 2^64 exactly when hi's top
      // bit is set, and then halving it leaves hi.
      frac <<= 1;
      if (hi < 0) {
        m = hi;
        frac |= 1;
      } else {
        m = hi << 1 | lo >>> 63;
      }
    }
    return e << 32 | frac;
  }

  /** 64·2^32 − L(draw + 1), in 0..=2^38. */
  static long cost(long draw) {
    return (64L << 32) - log2Q32(draw);
  }

  /**
   * Whether node a ranks before node b (5.5): the smaller cost/weight, as exact 128-bit cross
   * products (both operands are below 2^63, so the signed high product is the unsigned one); then
   * the larger draw; then the lower index.
   */
  private static boolean before(
      long costA, long weightA, long drawA, int a, long costB, long weightB, long drawB, int b) {
    long ah = Math.multiplyHigh(costA, weightB);
    long al = costA * weightB;
    long bh = Math.multiplyHigh(costB, weightA);
    long bl = costB * weightA;
    if (ah != bh || al != bl) {
      return ah < bh || (ah == bh && Long.compareUnsigned(al, bl) < 0);
    }
    if (drawA != drawB) {
      return Long.compareUnsigned(drawA, drawB) > 0;
    }
    return a < b;
  }

  @Override
  public int ownerIndex(long h) {
    long[] nh = nodeHashes;
    if (nh.length == 0) {
      return -1;
    }
    if (uniform) {
      // The largest draw; the first of equal draws, the lowest index.
      int best = 0;
      long bestDraw = Hashes.fmix64(h ^ nh[0]);
      for (int i = 1; i < nh.length; i++) {
        long d = Hashes.fmix64(h ^ nh[i]);
        if (Long.compareUnsigned(d, bestDraw) > 0) {
          best = i;
          bestDraw = d;
        }
      }
      return best;
    }
    int best = 0;
    long bestDraw = Hashes.fmix64(h ^ nh[0]);
    long bestCost = cost(bestDraw);
    for (int i = 1; i < nh.length; i++) {
      long d = Hashes.fmix64(h ^ nh[i]);
      long c = cost(d);
      if (before(c, weights[i], d, i, bestCost, weights[best], bestDraw, best)) {
        best = i;
        bestDraw = d;
        bestCost = c;
      }
    }
    return best;
  }

  /** Visits every node in the order of 5.5, best first. */
  @Override
  public void walk(long h, IntPredicate visit) {
    int n = nodeHashes.length;
    long[] draw = new long[n];
    long[] cost = new long[n];
    Integer[] order = new Integer[n];
    for (int i = 0; i < n; i++) {
      draw[i] = Hashes.fmix64(h ^ nodeHashes[i]);
      cost[i] = uniform ? 0 : cost(draw[i]);
      order[i] = i;
    }
    Arrays.sort(
        order,
        (a, b) -> {
          if (before(cost[a], weights[a], draw[a], a, cost[b], weights[b], draw[b], b)) {
            return -1;
          }
          return before(cost[b], weights[b], draw[b], b, cost[a], weights[a], draw[a], a) ? 1 : 0;
        });
    for (int i : order) {
      if (!visit.test(i)) {
        return;
      }
    }
  }

  /** The weights (scaled in a ramped set); the total their sum (7). */
  @Override
  public Units units(int nodes) {
    Units u = new Units(nodes);
    for (int i = 0; i < weights.length; i++) {
      u.add(i, weights[i]);
      u.addTotal(weights[i]);
    }
    return u;
  }

  /** Each node's label hash in index order; no count (9.1). */
  @Override
  public void appendBody(ByteSink out) {
    out.reserve(8 * nodeHashes.length);
    for (long nh : nodeHashes) {
      out.u64(nh);
    }
  }

  @Override
  public String basis() {
    return "weights";
  }
}
