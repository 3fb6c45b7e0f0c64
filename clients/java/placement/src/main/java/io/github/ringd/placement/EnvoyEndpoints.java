package io.github.ringd.placement;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * What envoy_ring_hash and envoy_maglev share (spec 5.10.1, 5.10.4, 5.11): their nodes are xDS
 * endpoints, with an IP address Envoy writes back as given, a distinct label and address, and an
 * EDS weight, a share of 2^31.
 */
final class EnvoyEndpoints {
  private EnvoyEndpoints() {}

  /**
   * The sum of the EDS weights ringd gives the endpoints. gRPC first turns each weight into a
   * 31-bit fixed-point fraction of its locality's sum, Envoy divides the weights by their sum in
   * binary64; the two agree exactly only when the sum is a power of two at most 2^31 in one
   * locality.
   */
  static final long WEIGHT_TOTAL = 1L << 31;

  /**
   * Why address cannot be an xDS endpoint's, or null (5.10.4): an IP address and a port 1..=65,535,
   * written as Envoy writes it back (IPv4 dotted decimal without leading zeros, IPv6 in brackets in
   * RFC 5952 form, IPv4-mapped as [::ffff:1.2.3.4]), with no IPv6 zone, since EDS resolves no host
   * names. An address is canonical when it reads back as written.
   */
  static @Nullable String addressProblem(String address) {
    SocketAddress parsed = SocketAddress.parse(address);
    if (parsed == null) {
      return "an xDS endpoint needs an IP address and a port, as `10.0.0.1:8080` or"
          + " `[2001:db8::1]:8080` (EDS does not resolve host names)";
    }
    if (parsed.port == 0) {
      return "the port must be from 1 to 65535";
    }
    if (parsed.zoned) {
      return "an xDS endpoint's address takes no IPv6 zone";
    }
    if (!parsed.canonical().equals(address)) {
      return "write the address as Envoy writes it back: IPv4 without leading zeros, IPv6 in"
          + " brackets in its shortest lowercase form (RFC 5952)";
    }
    return null;
  }

  /**
   * Check 3a for envoy_ring_hash and envoy_maglev, after every active node was found to have an
   * address: every node's address (every, in id order, any state, so that a node no proxy could be
   * given is refused when it is written, not when it is activated), then among the active nodes
   * distinct labels (EndpointKeyTaken: the first shared label in byte order, its first two nodes by
   * id), distinct addresses (DuplicateAddress: gRPC keys its endpoints by address) and a share of
   * 2^31 for each (WeightShareTooSmall).
   */
  static void check(List<Node> everyInIdOrder, List<Node> active) {
    for (Node n : everyInIdOrder) {
      String a = n.address();
      if (a == null) {
        continue;
      }
      String p = addressProblem(a);
      if (p != null) {
        throw new PlacementException(
            PlacementException.Reason.ADDRESS_NOT_SERVER,
            "node " + n.id() + " at \"" + Strings.excerpt(a) + "\": " + p);
      }
    }
    // active is in id order and List.sort is stable: equal labels stay in id order.
    List<Node> byLabel = new ArrayList<>(active);
    byLabel.sort(Comparator.comparing(Node::label, Strings::compareBytes));
    for (int i = 1; i < byLabel.size(); i++) {
      Node a = byLabel.get(i - 1);
      Node b = byLabel.get(i);
      if (a.label().equals(b.label())) {
        // Ids are unique, so one of the two has a hash_key.
        throw new PlacementException(
            PlacementException.Reason.ENDPOINT_KEY_TAKEN,
            "nodes "
                + a.id()
                + " and "
                + b.id()
                + " would both be hashed as \""
                + Strings.excerpt(a.label())
                + "\" by Envoy and gRPC (an endpoint is hashed by its hash_key, else its id):"
                + " give one a distinct hash_key");
      }
    }
    NginxLayout.checkDistinctAddresses(active, ", and gRPC keys endpoints by address");
    weights(active);
  }

  /**
   * The EDS weights ringd gives the active nodes, by index (5.10.1): 2^31 shared out in proportion
   * to each scaled weight s = weight × ramp by largest remainders, e = ⌊s × 2^31 / S⌋ in exact
   * integers, one more each to the largest remainders, equal remainders in label byte order. A node
   * whose weight comes to 0 cannot be an endpoint (EDS weights start at 1): WeightShareTooSmall
   * names the first in id order. Empty with no node.
   */
  static long[] weights(List<Node> active) {
    int n = active.size();
    long total = 0;
    for (Node node : active) {
      total += node.scaledWeight();
    }
    long[] weights = new long[n];
    if (total == 0) {
      return weights;
    }
    long[] remainders = new long[n];
    long given = 0;
    BigInteger sum = BigInteger.valueOf(total);
    for (int i = 0; i < n; i++) {
      // s × 2^31 reaches 2^67: past a long, so the quotient and remainder are exact big integers
      // (a build computes them once per node).
      BigInteger[] qr =
          BigInteger.valueOf(active.get(i).scaledWeight()).shiftLeft(31).divideAndRemainder(sum);
      weights[i] = qr[0].longValueExact();
      remainders[i] = qr[1].longValueExact();
      given += weights[i];
    }
    List<Integer> order = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      order.add(i);
    }
    order.sort(
        (a, b) -> {
          int c = Long.compare(remainders[b], remainders[a]);
          return c != 0 ? c : Strings.compareBytes(active.get(a).label(), active.get(b).label());
        });
    // Fewer than one unit per node is left over.
    for (int k = 0; k < WEIGHT_TOTAL - given; k++) {
      weights[order.get(k)]++;
    }
    for (int i = 0; i < n; i++) {
      if (weights[i] == 0) {
        throw new PlacementException(
            PlacementException.Reason.WEIGHT_SHARE_TOO_SMALL,
            "node "
                + active.get(i).id()
                + " has "
                + active.get(i).scaledWeight()
                + " of the "
                + total
                + " total weight (weight × ramp), less than one part in 2^31, the smallest share"
                + " an xDS endpoint can have: raise its weight or ramp, or lower the others'");
      }
    }
    return weights;
  }

  /**
   * How many ring entries each endpoint gets, the endpoints in the order the proxy takes them with
   * their EDS weights (5.10.2): Envoy's RingHashLoadBalancer::Ring and grpc-go's newRing step for
   * step, in binary64 with every operation rounded on its own. Java never fuses {@code target +
   * scale * x} into one multiply-add (only Math.fma does), which would end a loop one entry sooner
   * or later than Envoy's and gRPC's separate roundings.
   */
  static int[] entryCounts(long[] weights, int minimum, int maximum) {
    long sum = 0;
    for (long w : weights) {
      sum += w;
    }
    double[] normalized = new double[weights.length];
    double lightest = 1.0;
    for (int j = 0; j < weights.length; j++) {
      normalized[j] = (double) weights[j] / (double) sum;
      lightest = Math.min(lightest, normalized[j]);
    }
    double scale = Math.min(Math.ceil(lightest * minimum) / lightest, (double) maximum);
    int[] counts = new int[weights.length];
    double target = 0;
    double current = 0;
    for (int j = 0; j < weights.length; j++) {
      target += scale * normalized[j];
      while (current < target) {
        counts[j]++;
        current++;
      }
    }
    return counts;
  }

  /**
   * The number of entries the active nodes (checked) place, for the point cap (2.4 check 5),
   * counted as the Rust core counts it: over the weights in index order.
   */
  static long entryTotal(List<Node> active, int minimum, int maximum) {
    if (active.isEmpty()) {
      return 0;
    }
    long total = 0;
    for (int k : entryCounts(weights(active), minimum, maximum)) {
      total += k;
    }
    return total;
  }
}
