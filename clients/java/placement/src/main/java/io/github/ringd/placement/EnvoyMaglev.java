package io.github.ringd.placement;

import java.util.List;

/**
 * envoy_maglev (spec 5.11): the table Envoy's MAGLEV load balancer (maglev_lb.cc) builds from the
 * endpoints ringd's xDS server sends, slot for slot. Envoy fills as maglev does (labels in byte
 * order, permutations from XXH64 with seeds 0 and 1, a turn in round i only while i × weight ≥
 * target), but in binary64 on the weights divided by their sum. The EDS weights add up to 2^31, so
 * each quotient e / 2^31 is exact, and so is every product and running target (all numerators below
 * 2^53): Envoy's comparisons are then the integer ones on the EDS weights, and the table is
 * maglev's fill on them. Lookups, preference lists, ownership and the encoding are maglev's; only
 * the algorithm code differs.
 */
final class EnvoyMaglev {
  private EnvoyMaglev() {}

  /**
   * Fills the table of m slots (prime, at least the node count) for the active nodes (checked by
   * {@link EnvoyEndpoints#check}, which refuses a node whose weight comes to 0), placed by their
   * labels, with their EDS weights.
   */
  static MaglevLayout build(List<Node> active, int m) {
    return MaglevLayout.fill(active, EnvoyEndpoints.weights(active), m);
  }
}
