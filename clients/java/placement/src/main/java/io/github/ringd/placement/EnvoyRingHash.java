package io.github.ringd.placement;

import java.util.Arrays;
import java.util.List;

/**
 * envoy_ring_hash (spec 5.10): the ring Envoy's RING_HASH load balancer and gRPC's ring_hash build
 * from the endpoints ringd's xDS server sends, entry for entry. Its layout is a {@link Circle} of
 * 64-bit XXH64 positions, whose body and lookups are ring's (5.10.3, 6.1, 9.1).
 */
final class EnvoyRingHash {
  private EnvoyRingHash() {}

  /**
   * The ring of the active nodes (checked by {@link EnvoyEndpoints#check}): the endpoints in label
   * byte order (gRPC sorts them so, and ringd's xDS server sends them so, since Envoy keeps the
   * order it is sent) with their EDS weights.
   */
  static Circle build(List<Node> active, int minimum, int maximum) {
    long[] weights = EnvoyEndpoints.weights(active);
    Integer[] order = new Integer[active.size()];
    for (int i = 0; i < order.length; i++) {
      order[i] = i;
    }
    // Labels are distinct (EndpointKeyTaken), so this order is total.
    Arrays.sort(
        order, (a, b) -> Strings.compareBytes(active.get(a).label(), active.get(b).label()));
    byte[][] labels = new byte[order.length][];
    long[] inOrder = new long[order.length];
    for (int e = 0; e < order.length; e++) {
      labels[e] = Strings.utf8(active.get(order[e]).label());
      inOrder[e] = weights[order[e]];
    }
    PointList entries = entries(labels, inOrder, minimum, maximum);
    PointList points = new PointList(entries.size());
    for (int k = 0; k < entries.size(); k++) {
      points.add(entries.pos(k), order[entries.node(k)]);
    }
    return new Circle(new Continuum(points, 64));
  }

  /**
   * The ring of endpoints (hash key, EDS weight) in the order the proxy takes them: endpoint e's
   * entry i at XXH64(key_e ‖ "_" ‖ decimal(i), 0), each entry's node being e, sorted by position,
   * stably: equal positions (two strings with one 64-bit XXH64, never seen) keep generation order.
   * Envoy's std::sort and gRPC's sort.Slice are not stable and leave such a tie in no defined
   * order.
   */
  static PointList entries(byte[][] keys, long[] weights, int minimum, int maximum) {
    if (keys.length == 0) {
      return new PointList(0);
    }
    int[] counts = EnvoyEndpoints.entryCounts(weights, minimum, maximum);
    int total = 0;
    for (int k : counts) {
      total += k;
    }
    PointList points = new PointList(total);
    for (int e = 0; e < keys.length; e++) {
      byte[] buf = Arrays.copyOf(keys[e], keys[e].length + 12);
      buf[keys[e].length] = '_';
      int prefix = keys[e].length + 1;
      for (int i = 0; i < counts[e]; i++) {
        String d = Integer.toString(i);
        for (int c = 0; c < d.length(); c++) {
          buf[prefix + c] = (byte) d.charAt(c);
        }
        points.add(Hashes.xxh64(buf, 0, prefix + d.length(), 0), e);
      }
    }
    // Nodes ascend in generation order, so the order of (position, node) is the stable order by
    // position.
    points.sortByPositionThenNode();
    return points;
  }

  /**
   * Reads an envoy_ring_hash body (9.1): ring's entry list, sorted by position. Equal positions are
   * in label order, which the encoding cannot show without the labels: the fingerprint vouches for
   * it.
   */
  static Circle decode(ByteReader r, int n) {
    PointList points = Continuum.decodePoints(r, n, 64);
    for (int j = 1; j < points.size(); j++) {
      if (Long.compareUnsigned(points.pos(j - 1), points.pos(j)) > 0) {
        throw Decoder.bad("the entries are not sorted by position");
      }
    }
    return new Circle(new Continuum(points, 64));
  }
}
