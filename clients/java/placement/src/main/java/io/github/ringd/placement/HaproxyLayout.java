package io.github.ringd.placement;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.IntPredicate;

/**
 * HAProxy 2.6's {@code hash-type consistent} (spec 5.8). Node i with server id s and weight w has
 * the 16w points full_hash(s × 4096 + k); a key goes to the point nearest its hash, the one before
 * on a tie. That is the successor rule over each point's boundary b_j = key_j + ⌊g_j / 2⌋ (g_j the
 * gap to the next point), so lookups run on a continuum of boundaries, while HAProxy's own points
 * are kept for the encoding.
 */
final class HaproxyLayout implements Layout {
  /** BE_WEIGHT_SCALE: points per unit of weight. */
  static final int POINTS_PER_WEIGHT = 16;

  /** SRV_EWGHT_RANGE: 256 weights × 16 points. */
  private static final int ID_STRIDE = 4096;

  /** HAProxy's largest weight. */
  static final int MAX_WEIGHT = 256;

  /** The largest server id, 2^20 − 1, which keeps id × 4096 + k below 2^32 (5.8.3). */
  static final int MAX_SERVER_ID = (1 << 20) - 1;

  private final Continuum boundaries;
  private final PointList points; // (key, node index), sorted by key
  private final int[] serverIds; // by node index
  private final boolean avalanche;

  private HaproxyLayout(
      Continuum boundaries, PointList points, int[] serverIds, boolean avalanche) {
    this.boundaries = boundaries;
    this.points = points;
    this.serverIds = serverIds;
    this.avalanche = avalanche;
  }

  /**
   * Places the active nodes by their server ids (ids by node id, checked by {@link #serverIds}).
   * Since full_hash is a bijection and the arguments are distinct, no two points share a key.
   */
  static HaproxyLayout build(List<Node> active, Map<String, Integer> ids, boolean avalanche) {
    return build(active, serverIds(active, ids), avalanche);
  }

  private static HaproxyLayout build(List<Node> active, int[] serverIds, boolean avalanche) {
    int total = 0;
    for (Node n : active) {
      total += POINTS_PER_WEIGHT * n.weight();
    }
    PointList points = new PointList(total);
    for (int i = 0; i < active.size(); i++) {
      for (int k = 0; k < POINTS_PER_WEIGHT * active.get(i).weight(); k++) {
        int key = HaproxyHashes.fullHash(serverIds[i] * ID_STRIDE + k);
        points.add(key & 0xffffffffL, i);
      }
    }
    points.sortByPositionThenNode();
    PointList bounds = new PointList(points.size());
    for (int j = 0; j < points.size(); j++) {
      long next = points.pos((j + 1) % points.size());
      long gap = ((next - points.pos(j) - 1) & 0xffffffffL) + 1; // 2^32 for a lone point
      bounds.add((points.pos(j) + gap / 2) & 0xffffffffL, points.node(j));
    }
    return new HaproxyLayout(
        Continuum.sorted(bounds, 32), points.trimmed(), serverIds.clone(), avalanche);
  }

  @Override
  public int ownerIndex(long h) {
    return boundaries.ownerIndex(h);
  }

  /**
   * The owners of HAProxy's points from the chosen one up, wrapping (6.1). The chosen point's
   * boundary is the successor of h among the boundaries; boundaries are in the points' circular
   * order, only rotated where a boundary passes 2^32, so the walk goes over the boundaries.
   */
  @Override
  public void walk(long h, IntPredicate visit) {
    boundaries.walk(h, visit);
  }

  @Override
  public Units units(int nodes) {
    return boundaries.units(nodes);
  }

  @Override
  public String basis() {
    return "arcs";
  }

  @Override
  public boolean avalanche() {
    return avalanche;
  }

  /** The avalanche byte, every node's server id in index order, then HAProxy's points (9.1). */
  @Override
  public void appendBody(ByteSink out) {
    out.reserve(1 + 4 * serverIds.length + 4 + 8 * points.size());
    out.u8(avalanche ? 1 : 0);
    for (int s : serverIds) {
      out.u32(s);
    }
    out.u32(points.size());
    for (int j = 0; j < points.size(); j++) {
      out.u32(points.pos(j));
      out.u32(points.node(j));
    }
  }

  /** The server ids by node index, for inspection. */
  @Override
  public int[] serverIds() {
    return serverIds.clone();
  }

  /** HAProxy's own points (key, node index) sorted by key, not their boundaries. */
  @Override
  public PointList inspectPoints() {
    return points.trimmed();
  }

  /**
   * Check 4 for haproxy: an active node above HAProxy's largest weight (WeightTooHighForProxy, the
   * first in id order).
   */
  static void checkWeights(List<Node> active) {
    for (Node n : active) {
      if (n.weight() > MAX_WEIGHT) {
        throw new PlacementException(
            PlacementException.Reason.WEIGHT_TOO_HIGH_FOR_PROXY,
            "node " + n.id() + " has weight " + n.weight() + "; haproxy takes 1..=" + MAX_WEIGHT);
      }
    }
  }

  /**
   * Checks that every active node has a server id in 1..=MAX_SERVER_ID and that no two share one;
   * returns them in index order (InvalidServerIds otherwise).
   */
  static int[] serverIds(List<Node> active, Map<String, Integer> ids) {
    int[] out = new int[active.size()];
    Map<Integer, String> owner = new HashMap<>();
    for (int i = 0; i < active.size(); i++) {
      Node n = active.get(i);
      Integer s = ids.get(n.id());
      if (s == null) {
        throw invalid("active node " + n.id() + " has no server id");
      }
      if (s < 1 || s > MAX_SERVER_ID) {
        throw invalid(
            "node " + n.id() + " has server id " + s + ": ids run from 1 to " + MAX_SERVER_ID);
      }
      String other = owner.putIfAbsent(s, n.id());
      if (other != null) {
        throw invalid("nodes " + other + " and " + n.id() + " share server id " + s);
      }
      out[i] = s;
    }
    return out;
  }

  private static PlacementException invalid(String message) {
    return new PlacementException(PlacementException.Reason.INVALID_SERVER_IDS, message);
  }

  /**
   * Numbers every node, in any state, in id order from 1: the ids of a ring that becomes haproxy,
   * or of a placement built from a node set alone (5.8.3). Ids are ASCII, so String order is byte
   * order.
   */
  static Map<String, Integer> initialServerIds(List<Node> nodes) {
    TreeSet<String> ids = new TreeSet<>();
    for (Node n : nodes) {
      ids.add(n.id());
    }
    Map<String, Integer> out = new HashMap<>();
    int next = 1;
    for (String id : ids) {
      out.put(id, next++);
    }
    return out;
  }

  /**
   * Reads a haproxy body (9.1): the avalanche byte, a u32 server id per node, then the points,
   * which are rebuilt from the ids and weights and left for the re-encoding to compare.
   */
  static HaproxyLayout decode(ByteReader r, List<Node> nodes) {
    int avalanche = r.u8();
    Map<String, Integer> ids = new HashMap<>();
    for (int i = 0; i < nodes.size() && !r.failed(); i++) {
      long s = r.u32();
      // Out of range ids are refused below; keep them out of range as ints.
      ids.put(nodes.get(i).id(), s > MAX_SERVER_ID ? -1 : (int) s);
    }
    r.rest(); // the points: rebuilt below, compared by re-encoding
    if (r.failed() || avalanche > 1) {
      throw Decoder.bad("a haproxy body with avalanche byte " + avalanche);
    }
    // The decoder reports these refusals as InvalidEncoding.
    int[] serverIds = serverIds(nodes, ids);
    checkWeights(nodes);
    return build(nodes, serverIds, avalanche == 1);
  }
}
