package io.github.ringd.placement;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.TreeSet;

/** Normalization (spec 2.3) and the node-set checks of 2.4. */
final class NodeSet {
  private NodeSet() {}

  /** Node ids compare in byte order; ids are ASCII, where that is String order. */
  static final Comparator<Node> BY_ID = Comparator.comparing(Node::id);

  /**
   * Validates a node set for a config and returns its active nodes sorted by id (2.3), running
   * checks 0 and 2 to 6 of 2.4 in their order. Check 7 belongs to a server computing a table, which
   * a client never does. The config must already be valid.
   */
  static List<Node> normalize(RingConfig c, List<Node> nodes) {
    // Check 0: each node's own fields, the first bad node in input order.
    for (Node n : nodes) {
      n.validate();
    }
    List<Node> every = new ArrayList<>(nodes);
    every.sort(BY_ID); // stable
    for (int i = 1; i < every.size(); i++) {
      if (every.get(i).id().equals(every.get(i - 1).id())) {
        throw new PlacementException(
            PlacementException.Reason.DUPLICATE_NODE_ID,
            "two nodes have the id " + every.get(i).id());
      }
    }
    List<Node> active = new ArrayList<>(every.size());
    for (Node n : every) {
      if (n.state() == NodeState.ACTIVE) {
        active.add(n);
      }
    }
    if (c.zoneAware()) {
      for (Node n : active) {
        if (n.zone() == null) {
          throw new PlacementException(
              PlacementException.Reason.MISSING_ZONE,
              "zone_aware, but active node " + n.id() + " has no zone");
        }
      }
    }
    checkAddresses(c, every, active);
    if (!c.algorithm().takesRamps()) {
      for (Node n : active) {
        if (n.ramp() != Node.FULL_RAMP) {
          throw new PlacementException(
              PlacementException.Reason.RAMP_NOT_SUPPORTED,
              "node " + n.id() + " at ramp " + n.ramp() + ": " + c.algorithm() + " takes no ramp");
        }
      }
    }
    if (c.algorithm() == Algorithm.HAPROXY) {
      HaproxyLayout.checkWeights(active);
    }
    checkCaps(c, active);
    return List.copyOf(active);
  }

  /**
   * Check 3a: the algorithms that place by address, and the xDS modes, whose nodes are endpoints,
   * need one on every active node, and one their proxy takes as a server.
   */
  private static void checkAddresses(RingConfig c, List<Node> every, List<Node> active) {
    if (!c.algorithm().needsAddress()) {
      return;
    }
    for (Node n : active) {
      if (n.address() == null) {
        throw new PlacementException(
            PlacementException.Reason.MISSING_ADDRESS,
            "active node "
                + n.id()
                + " has no address, which every "
                + c.algorithm()
                + " node needs");
      }
    }
    switch (c.algorithm()) {
      case NGINX -> NginxLayout.checkAddresses(active);
      case ENVOY_RING_HASH, ENVOY_MAGLEV -> EnvoyEndpoints.check(every, active);
      default -> TwemproxyLayout.check(every, active);
    }
  }

  /** Checks 5 and 6: the point cap and the table size of maglev and envoy_maglev. */
  private static void checkCaps(RingConfig c, List<Node> active) {
    long weights = 0;
    for (Node n : active) {
      weights += n.weight();
    }
    long points =
        switch (c.algorithm()) {
          case RING -> (long) c.vnodesPerWeight() * weights; // full points, whatever the ramps
          case KETAMA -> ketamaPoints(active);
          case NGINX -> NginxLayout.POINTS_PER_WEIGHT * weights;
          case HAPROXY -> HaproxyLayout.POINTS_PER_WEIGHT * weights;
          case TWEMPROXY -> TwemproxyLayout.pointTotal(active);
          case ENVOY_RING_HASH ->
              EnvoyEndpoints.entryTotal(active, c.minimumRingSize(), c.maximumRingSize());
          case JUMP -> weights;
          default -> 0;
        };
    if (c.algorithm() == Algorithm.TABLE) {
      long cells = (long) c.partitions() * Math.min(c.replicationFactor(), active.size());
      if (cells > RingConfig.MAX_POINTS) {
        throw new PlacementException(
            PlacementException.Reason.TABLE_TOO_LARGE,
            cells + " partitions × replicas > " + RingConfig.MAX_POINTS);
      }
    }
    if (points > RingConfig.MAX_POINTS) {
      throw new PlacementException(
          PlacementException.Reason.TOO_MANY_POINTS, points + " points > " + RingConfig.MAX_POINTS);
    }
    if (c.algorithm().usesTableSize() && c.tableSize() < active.size()) {
      throw new PlacementException(
          PlacementException.Reason.TABLE_SIZE_OUT_OF_RANGE,
          "table_size " + c.tableSize() + " < " + active.size() + " active nodes");
    }
  }

  private static long ketamaPoints(List<Node> active) {
    long points = 0;
    for (int d : Ketama.digests(active)) {
      points += 4L * d;
    }
    return points;
  }

  /** Whether some active node is below full ramp (2.2). */
  static boolean isRamped(List<Node> active) {
    for (Node n : active) {
      if (n.ramp() != Node.FULL_RAMP) {
        return true;
      }
    }
    return false;
  }

  /**
   * Numbers the active nodes' zones: the distinct names sorted in byte order, a zone's number its
   * position (2.3 step 4). Nodes without a zone get -1. Returns the numbers by node index; the zone
   * count is the largest number plus one.
   */
  static int[] zoneNumbers(List<Node> active) {
    TreeSet<String> names = new TreeSet<>();
    for (Node n : active) {
      if (n.zone() != null) {
        names.add(n.zone());
      }
    }
    List<String> sorted = new ArrayList<>(names);
    int[] numbers = new int[active.size()];
    for (int i = 0; i < numbers.length; i++) {
      String z = active.get(i).zone();
      numbers[i] = z == null ? -1 : java.util.Collections.binarySearch(sorted, z);
    }
    return numbers;
  }

  static int zoneCount(List<Node> active) {
    TreeSet<String> names = new TreeSet<>();
    for (Node n : active) {
      if (n.zone() != null) {
        names.add(n.zone());
      }
    }
    return names.size();
  }
}
