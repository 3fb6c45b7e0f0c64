package io.github.ringd.placement;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/** Nodes, configs and keys shared by the tests of the proxy, Envoy and table algorithms. */
final class ProxyFixtures {
  private ProxyFixtures() {}

  static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** An active node of the given weight with an address. */
  static Node endpoint(String id, int weight, String address) {
    return Node.of(id).withWeight(weight).withAddress(address);
  }

  /** Nodes keyed as Envoy's test hosts 127.0.0.1:port, of weight 1, with ids h-port. */
  static List<Node> envoyHosts(int from, int to) {
    List<Node> nodes = new ArrayList<>();
    for (int p = from; p < to; p++) {
      String a = "127.0.0.1:" + p;
      nodes.add(endpoint("h-" + p, 1, a).withHashKey(a));
    }
    return nodes;
  }

  static RingConfig envoyRingConfig(int minimum, int maximum) {
    return RingConfig.builder(Algorithm.ENVOY_RING_HASH)
        .minimumRingSize(minimum)
        .maximumRingSize(maximum)
        .build();
  }

  static RingConfig envoyMaglevConfig(int m) {
    return RingConfig.builder(Algorithm.ENVOY_MAGLEV).tableSize(m).build();
  }

  /** The refusal of building config over nodes, failing the test when the build succeeds. */
  static PlacementException refusal(RingConfig config, List<Node> nodes) {
    try {
      Placement p = Placement.build(config, nodes);
      throw new AssertionError("built " + p);
    } catch (PlacementException e) {
      return e;
    }
  }

  /** Generated keys key-0, key-1, …, as the property tests use. */
  static List<byte[]> keys(int n) {
    List<byte[]> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(utf8("key-" + i));
    }
    return out;
  }

  /** The placement's ownership units as decimal strings, in id order. */
  static List<String> units(Placement p) {
    return p.ownership().nodes().stream()
        .map(n -> n.units().toString())
        .collect(Collectors.toList());
  }

  /** The placement's maglev table as one string of single-letter ids. */
  static String joined(List<String> ids) {
    return String.join("", ids);
  }
}
