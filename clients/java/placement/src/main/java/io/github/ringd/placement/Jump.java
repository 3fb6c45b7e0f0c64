package io.github.ringd.placement;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/** jump's public pieces (5.4): the jump function and how a bucket order evolves. */
public final class Jump {
  private Jump() {}

  /**
   * The jump consistent hash function of spec 5.4.1: the bucket in 0..buckets−1 that key falls in.
   *
   * @param key a u64 key hash
   * @param buckets at least 1
   */
  public static int hash(long key, int buckets) {
    if (buckets < 1) {
      throw new IllegalArgumentException("jump needs at least one bucket, not " + buckets);
    }
    return JumpLayout.jumpHash(key, buckets);
  }

  /**
   * The jump bucket order after a change of the node set (5.4.3), derived from the previous order;
   * an empty previous order gives the initial one. Clients take orders from snapshots; this is what
   * the server does, for tools and tests. nodes may include draining and joining nodes (they want
   * no bucket).
   *
   * <p>It works on runs, as the reference does: pass 1 keeps the first min(run length, want − held)
   * buckets of each run and turns the rest into holes; pass 2 merges the hole runs, in ascending
   * order, with each active node's missing buckets, in id order, then appends what is left;
   * trailing holes are trimmed.
   */
  public static List<BucketRun> nextBucketOrder(List<BucketRun> previous, List<Node> nodes) {
    List<Node> active = new ArrayList<>();
    for (Node n : nodes) {
      if (n.state() == NodeState.ACTIVE) {
        active.add(n);
      }
    }
    active.sort(NodeSet.BY_ID);
    Map<String, Integer> want = new HashMap<>();
    for (Node n : active) {
      want.put(n.id(), n.weight());
    }
    Map<String, Integer> held = new HashMap<>();
    List<BucketRun> order = new ArrayList<>();
    // Pass 1: keep each node's lowest-numbered buckets.
    for (BucketRun r : previous) {
      int keep = 0;
      if (r.id() != null) {
        int h = held.getOrDefault(r.id(), 0);
        keep = Math.max(0, Math.min(r.count(), want.getOrDefault(r.id(), 0) - h));
        held.put(r.id(), h + keep);
      }
      push(order, r.id(), keep);
      push(order, null, r.count() - keep);
    }
    // Pass 2: hand out missing buckets, lowest hole first, then append.
    List<BucketRun> missing = new ArrayList<>();
    for (Node n : active) {
      int m = n.weight() - held.getOrDefault(n.id(), 0);
      if (m > 0) {
        missing.add(new BucketRun(n.id(), m));
      }
    }
    List<BucketRun> pass1 = order;
    order = new ArrayList<>();
    int next = 0; // the first missing run not yet handed out
    for (BucketRun r : pass1) {
      int count = r.count();
      while (r.id() == null && count > 0 && next < missing.size()) {
        BucketRun m = missing.get(next);
        int take = Math.min(count, m.count());
        push(order, m.id(), take);
        count -= take;
        if (m.count() == take) {
          next++;
        } else {
          missing.set(next, new BucketRun(m.id(), m.count() - take));
        }
      }
      push(order, r.id(), count);
    }
    for (int k = next; k < missing.size(); k++) {
      push(order, missing.get(k).id(), missing.get(k).count());
    }
    while (!order.isEmpty() && order.get(order.size() - 1).id() == null) {
      order.remove(order.size() - 1);
    }
    return List.copyOf(order);
  }

  private static void push(List<BucketRun> order, String id, int count) {
    if (count <= 0) {
      return;
    }
    int k = order.size() - 1;
    if (k >= 0 && Objects.equals(order.get(k).id(), id)) {
      order.set(k, new BucketRun(id, order.get(k).count() + count));
      return;
    }
    order.add(new BucketRun(id, count));
  }
}
