package io.github.ringd.client;

import io.github.ringd.placement.Node;
import io.github.ringd.placement.Placement;
import java.math.BigInteger;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToLongFunction;
import org.jspecify.annotations.Nullable;

/**
 * Picks, for requests any replica can serve, the first node on a key's preference list whose
 * in-flight count is below {@code ceil(factor × (total in flight + 1) / active nodes)}: consistent
 * hashing with bounded loads (Mirrokni, Thorup and Zadimoghaddam), the rule of HAProxy's
 * hash-balance-factor. The loads are the caller's own, so two clients may pick differently for one
 * hot key while the placement, and every client's owner, stay identical: never use it to decide
 * where data is written. Immutable.
 */
public final class BoundedLoad {
  private static final BigInteger MILLION = BigInteger.valueOf(1_000_000);
  private static final BigInteger MAX_U64 = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);

  private final double factor;

  private BoundedLoad(double factor) {
    this.factor = factor;
  }

  /**
   * A balance factor: a finite number of at least 1 (1 is perfect balance, at the price of moving
   * many requests off their owner; 1.25 caps every node at 25 % above the average).
   *
   * @throws IllegalArgumentException otherwise
   */
  public static BoundedLoad of(double factor) {
    if (Double.isNaN(factor) || Double.isInfinite(factor) || factor < 1) {
      throw new IllegalArgumentException(
          "balance factor " + factor + ": use a number of at least 1, e.g. 1.25");
    }
    return new BoundedLoad(factor);
  }

  /** The balance factor. */
  public double factor() {
    return factor;
  }

  /**
   * The most requests a node may already have in flight and still take one more: {@code ceil(factor
   * × (inFlight + 1) / nodes)}, with inFlight (read as unsigned) the total over the active nodes.
   * Computed in integers after scaling the factor to millionths, as the Rust and Go clients do, so
   * every platform agrees. Saturates at 2^64 − 1, returned as -1 (unsigned).
   */
  public long bound(long inFlight, int nodes) {
    if (nodes <= 0) {
      return 0;
    }
    BigInteger num =
        BigInteger.valueOf(Math.round(factor * 1e6))
            .multiply(new BigInteger(Long.toUnsignedString(inFlight)).add(BigInteger.ONE));
    BigInteger den = MILLION.multiply(BigInteger.valueOf(nodes));
    BigInteger[] qr = num.divideAndRemainder(den);
    BigInteger q = qr[1].signum() != 0 ? qr[0].add(BigInteger.ONE) : qr[0];
    return q.compareTo(MAX_U64) > 0 ? -1L : q.longValue();
  }

  /**
   * The node to send a request for key to under p; load is asked once per active node for its
   * in-flight count. Null only when no node is active.
   */
  public @Nullable String pick(Placement p, byte[] key, ToLongFunction<String> load) {
    List<Node> nodes = p.nodes();
    if (nodes.isEmpty()) {
      return null;
    }
    Map<String, Long> loads = new HashMap<>();
    long total = 0;
    for (Node n : nodes) {
      long l = load.applyAsLong(n.id());
      loads.put(n.id(), l);
      total += l;
    }
    long bound = bound(total, nodes.size());
    // Walk the preference list in growing prefixes: a hot key's owner is usually under the
    // bound, and the whole list walks the whole ring.
    int checked = 0;
    int r = Math.min(nodes.size(), 4);
    while (true) {
      List<String> list = p.preferenceList(key, r);
      for (int i = Math.min(checked, list.size()); i < list.size(); i++) {
        if (Long.compareUnsigned(loads.getOrDefault(list.get(i), 0L), bound) < 0) {
          return list.get(i);
        }
      }
      if (r == nodes.size() || list.isEmpty()) {
        // Only reachable if load answered inconsistently.
        return list.isEmpty() ? null : list.get(0);
      }
      checked = list.size();
      r = Math.min(r * 4, nodes.size());
    }
  }
}
