package io.github.ringd.placement;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;

/**
 * Section 7's report: each active node's exact integer units out of a total, and the floats derived
 * from them. The floats follow the spec's normative recipe, so they equal the server's bit for bit:
 * each integer converted to binary64 (round to nearest) once, then one division.
 *
 * @param basis what the units count: arcs, table_entries, buckets, weights or partitions
 * @param totalUnits the units' sum (2^64 for ring); 0 with no active node
 * @param nodes the active nodes' shares, in id order
 * @param maxOverMean the largest ratio, 0 with no node
 */
public record Ownership(
    String basis, BigInteger totalUnits, List<NodeShare> nodes, double maxOverMean) {

  /** Copies the list. */
  public Ownership {
    nodes = List.copyOf(nodes);
  }

  /**
   * One node's part of an {@link Ownership}.
   *
   * @param id the node's id
   * @param units the node's exact units
   * @param share units / total, each converted to binary64 once
   * @param expectedShare the node's scaled weight over their sum, in binary64
   * @param ratio share / expectedShare
   * @param replicas under table only, the number of table cells (primary or not) holding the node;
   *     0 otherwise
   */
  public record NodeShare(
      String id,
      BigInteger units,
      double share,
      double expectedShare,
      double ratio,
      int replicas) {}

  static Ownership of(Placement p) {
    List<Node> nodes = p.nodes();
    Units u = p.layout().units(nodes.size());
    BigInteger total = nodes.isEmpty() ? BigInteger.ZERO : u.total();
    long weightTotal = 0;
    for (Node n : nodes) {
      weightTotal += n.scaledWeight();
    }
    int[] replicas = p.layout().replicaCounts(nodes.size());
    double totalF = toDouble(total);
    List<NodeShare> shares = new ArrayList<>(nodes.size());
    double maxOverMean = 0;
    for (int i = 0; i < nodes.size(); i++) {
      BigInteger units = u.of(i);
      double share = toDouble(units) / totalF;
      double expected = (double) nodes.get(i).scaledWeight() / (double) weightTotal;
      double ratio = share / expected;
      shares.add(
          new NodeShare(
              nodes.get(i).id(),
              units,
              share,
              expected,
              ratio,
              replicas == null ? 0 : replicas[i]));
      maxOverMean = Math.max(maxOverMean, ratio);
    }
    return new Ownership(p.layout().basis(), total, shares, maxOverMean);
  }

  /** x rounded to the nearest binary64, ties to even, as BigInteger.doubleValue rounds. */
  private static double toDouble(BigInteger x) {
    return x.doubleValue();
  }
}
