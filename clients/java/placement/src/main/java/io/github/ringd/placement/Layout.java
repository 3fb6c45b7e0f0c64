package io.github.ringd.placement;

import java.util.List;
import java.util.function.IntPredicate;
import org.jspecify.annotations.Nullable;

/**
 * What every algorithm's materialized layout answers (spec 1, step 3). A layout is immutable and
 * indexes the active nodes by their index (2.3: position in id order).
 *
 * <ul>
 *   <li>{@link #ownerIndex(long)}: the index of the node owning key hash h (section 4's hash in the
 *       algorithm's space: 64 bits, or 32 zero-extended), or -1 when no node is active (or, under
 *       ketama, none holds a point). Every lookup calls it: it must not allocate, box or call a
 *       lambda.
 *   <li>{@link #walk(long, IntPredicate)}: visits the successor order of 6.1 for key hash h, node
 *       indices with repetitions, until visit returns false or the order ends. Preference lists
 *       (6.2) are selected from it.
 *   <li>{@link #units(int)}: each node's ownership units and their total (7), before the "no active
 *       node gives total 0" rule.
 *   <li>{@link #appendBody(ByteSink)}: appends the algorithm's body of the canonical encoding
 *       (9.1), everything after the node records.
 *   <li>{@link #basis()}: names the ownership basis as the JSON writes it (7), such as "arcs".
 *   <li>{@link #avalanche()} and {@link #hashTag()}: the key-hash parameters a body carries
 *       (haproxy's avalanche byte, twemproxy's tag), so that a decoded placement hashes keys as its
 *       encoding says; other layouts keep the defaults.
 *   <li>{@link #replicaCounts(int)}: table's cells per node for the ownership report; other layouts
 *       keep the default (null).
 * </ul>
 */
interface Layout {
  int ownerIndex(long h);

  void walk(long h, IntPredicate visit);

  Units units(int nodes);

  void appendBody(ByteSink out);

  String basis();

  default boolean avalanche() {
    return false;
  }

  default @Nullable String hashTag() {
    return null;
  }

  /**
   * Under table, the number of table cells (primary or not) holding each node, for the ownership
   * report (7); null for every other layout.
   */
  default int @Nullable [] replicaCounts(int nodes) {
    return null;
  }

  /**
   * For inspection: the point list of a circle (ring, ketama, nginx, twemproxy, envoy_ring_hash
   * entries), or HAProxy's own points (not their boundaries); null for other layouts.
   */
  default @Nullable PointList inspectPoints() {
    return null;
  }

  /** For inspection: haproxy's server ids by node index; null for other layouts. */
  default int @Nullable [] serverIds() {
    return null;
  }

  /** For inspection: table's rows of node ids, primary first; null for other layouts. */
  default @Nullable List<List<String>> tableRows(List<Node> active) {
    return null;
  }
}
