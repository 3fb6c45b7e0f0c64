package io.github.ringd.placement;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntPredicate;

/**
 * Jump consistent hash over a persisted bucket order (5.4), held as runs: run r starts at bucket
 * starts[r] and belongs to owners[r], a node index or {@link #HOLE}.
 */
final class JumpLayout implements Layout {
  /** A hole's node number in the encoding (9.1). */
  static final int HOLE = -1;

  /** Added to a key hash that lands on a hole before fmix64 re-hashes it (5.4.2). */
  private static final long REHASH = 0x9E3779B97F4A7C15L;

  private final int[] starts;
  private final int[] owners;
  private final int length;

  private JumpLayout(int[] starts, int[] owners, int length) {
    this.starts = starts;
    this.owners = owners;
    this.length = length;
  }

  /**
   * Lamping and Veach's jump consistent hash (5.4.1): the bucket in 0..n−1 that key falls in. The
   * operands of the division are exact binary64 values, the division and the multiplication single
   * binary64 operations, and the conversion truncates toward zero, as the reference does.
   */
  static int jumpHash(long key, int n) {
    long b = -1;
    long j = 0;
    while (j < n) {
      b = j;
      key = key * 2862933555777941757L + 1;
      j = (long) ((double) (b + 1) * ((double) (1L << 31) / (double) ((key >>> 33) + 1)));
    }
    return (int) b;
  }

  /**
   * Accepts a persisted order only if every id in it is an active node, each active node holds
   * exactly weight buckets and the last bucket is not a hole (5.4.4).
   */
  static JumpLayout restore(List<Node> active, List<BucketRun> runs) {
    Map<String, Integer> index = new HashMap<>();
    for (int i = 0; i < active.size(); i++) {
      index.put(active.get(i).id(), i);
    }
    long[] held = new long[active.size()];
    List<Integer> starts = new ArrayList<>();
    List<Integer> owners = new ArrayList<>();
    long total = 0;
    boolean lastHole = false;
    for (BucketRun r : runs) {
      if (r.count() < 0) {
        throw new PlacementException(
            PlacementException.Reason.INVALID_BUCKET_ORDER, "a run of " + r.count() + " buckets");
      }
      if (r.count() == 0) {
        continue;
      }
      long start = total;
      total += r.count();
      if (total > RingConfig.MAX_POINTS) {
        throw new PlacementException(
            PlacementException.Reason.TOO_MANY_POINTS,
            "more than " + RingConfig.MAX_POINTS + " buckets");
      }
      int owner = HOLE;
      if (r.id() != null) {
        Integer i = index.get(r.id());
        if (i == null) {
          throw new PlacementException(
              PlacementException.Reason.INVALID_BUCKET_ORDER,
              Strings.excerpt(r.id()) + " holds a bucket but is not an active node");
        }
        held[i] += r.count();
        owner = i;
      }
      lastHole = owner == HOLE;
      if (owners.isEmpty() || owners.get(owners.size() - 1) != owner) {
        starts.add((int) start);
        owners.add(owner);
      }
    }
    for (int i = 0; i < active.size(); i++) {
      if (held[i] != active.get(i).weight()) {
        throw new PlacementException(
            PlacementException.Reason.INVALID_BUCKET_ORDER,
            active.get(i).id()
                + " has weight "
                + active.get(i).weight()
                + " but holds "
                + held[i]
                + " buckets");
      }
    }
    if (lastHole) {
      throw new PlacementException(
          PlacementException.Reason.INVALID_BUCKET_ORDER, "the last bucket is a hole");
    }
    return new JumpLayout(toArray(starts), toArray(owners), (int) total);
  }

  private static int[] toArray(List<Integer> list) {
    int[] a = new int[list.size()];
    for (int i = 0; i < a.length; i++) {
      a[i] = list.get(i);
    }
    return a;
  }

  /**
   * The order of a placement built from scratch: the active nodes in id order, each with weight
   * consecutive buckets (5.4.3).
   */
  static List<BucketRun> initialRuns(List<Node> active) {
    List<BucketRun> runs = new ArrayList<>(active.size());
    for (Node n : active) {
      runs.add(new BucketRun(n.id(), n.weight()));
    }
    return runs;
  }

  /**
   * Reads a jump body (9.1): the bucket count, then one u32 per bucket, a node index or 0xFFFFFFFF
   * for a hole; restored as an order would be.
   */
  static JumpLayout decode(List<Node> nodes, ByteReader r) {
    long count = r.u32();
    if (count * 4 > r.remaining()) {
      throw Decoder.bad(count + " buckets in " + r.remaining() + " bytes");
    }
    List<BucketRun> runs = new ArrayList<>();
    String id = null;
    int run = 0;
    for (long k = 0; k < count; k++) {
      long b = r.u32();
      String owner = null;
      if (b != 0xFFFFFFFFL) {
        if (b >= nodes.size()) {
          throw Decoder.bad("a bucket names node " + b + " of " + nodes.size());
        }
        owner = nodes.get((int) b).id();
      }
      if (run > 0 && java.util.Objects.equals(owner, id)) {
        run++;
      } else {
        if (run > 0) {
          runs.add(new BucketRun(id, run));
        }
        id = owner;
        run = 1;
      }
    }
    if (run > 0) {
      runs.add(new BucketRun(id, run));
    }
    return restore(nodes, runs);
  }

  /** The run holding the live bucket key hash h lands on: jump, and re-hash past holes (5.4.2). */
  private int lookup(long h) {
    while (true) {
      int b = jumpHash(h, length);
      // The last run starting at or before b (starts[0] is 0).
      int lo = 0;
      int hi = starts.length;
      while (lo < hi) {
        int m = (lo + hi) >>> 1;
        if (starts[m] <= b) {
          lo = m + 1;
        } else {
          hi = m;
        }
      }
      int r = lo - 1;
      if (owners[r] != HOLE) {
        return r;
      }
      h = Hashes.fmix64(h + REHASH);
    }
  }

  @Override
  public int ownerIndex(long h) {
    if (length == 0) {
      return -1;
    }
    return owners[lookup(h)];
  }

  /**
   * Visits the owners of the runs from the key's run on, wrapping, holes skipped: one step per run
   * rather than per bucket, which gives the same preference lists (6.1, informative).
   */
  @Override
  public void walk(long h, IntPredicate visit) {
    if (length == 0) {
      return;
    }
    int r = lookup(h);
    for (int k = 0; k < owners.length; k++) {
      int o = owners[(r + k) % owners.length];
      if (o != HOLE && !visit.test(o)) {
        return;
      }
    }
  }

  private int runLength(int r) {
    return (r + 1 < starts.length ? starts[r + 1] : length) - starts[r];
  }

  /** Counts each node's buckets (its weight); the total is the live buckets (7). */
  @Override
  public Units units(int nodes) {
    Units u = new Units(nodes);
    for (int r = 0; r < owners.length; r++) {
      if (owners[r] != HOLE) {
        u.add(owners[r], runLength(r));
        u.addTotal(runLength(r));
      }
    }
    return u;
  }

  @Override
  public void appendBody(ByteSink out) {
    out.reserve(4 + 4 * length);
    out.u32(length);
    for (int r = 0; r < owners.length; r++) {
      for (int k = runLength(r); k > 0; k--) {
        out.u32(owners[r] & 0xffffffffL);
      }
    }
  }

  @Override
  public String basis() {
    return "buckets";
  }

  /** The order as runs of node ids (null for holes). */
  List<BucketRun> runs(List<Node> active) {
    List<BucketRun> out = new ArrayList<>(owners.length);
    for (int r = 0; r < owners.length; r++) {
      out.add(new BucketRun(owners[r] == HOLE ? null : active.get(owners[r]).id(), runLength(r)));
    }
    return out;
  }
}
