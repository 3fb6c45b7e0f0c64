package io.github.ringd.placement;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The proxy, Envoy and table lookups allocate nothing once warm, under every hash they take: the
 * current thread's allocated bytes (com.sun.management.ThreadMXBean) are read around many lookups.
 */
class ProxyAllocationTest {
  private static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

  private static final int LOOKUPS = 20_000;

  /** Keys of several lengths (blocks and tails of every hash), one tagged, non-ASCII and empty. */
  private static final String[] TEXT = {
    "user:{42}:cart",
    "",
    "k",
    "session/7f3c9a2e-5b1d-4c8e-9f00-0123456789ab",
    "é-ü-🙂",
    "abcdefghijklm"
  };

  private static final byte[][] KEYS = new byte[TEXT.length][];

  static {
    for (int i = 0; i < TEXT.length; i++) {
      KEYS[i] = TEXT[i].getBytes(StandardCharsets.UTF_8);
    }
  }

  /** Every proxy ring under every hash it takes, and the vector files of the other layouts. */
  static List<String> placements() {
    List<String> out = new ArrayList<>();
    for (HashFunction h : Algorithm.HAPROXY.acceptedHashes()) {
      out.add("haproxy:" + h.wireName() + ":avalanche");
      out.add("haproxy:" + h.wireName() + ":plain");
    }
    for (HashFunction h : Algorithm.TWEMPROXY.acceptedHashes()) {
      out.add("twemproxy:" + h.wireName() + ":{}");
      out.add("twemproxy:" + h.wireName() + ":none");
    }
    out.addAll(
        List.of(
            "nginx-forty",
            "nginx-colliding",
            "nginx-no-active",
            "haproxy-removals",
            "twemproxy-names",
            "twemproxy-no-active",
            "envoy_ring_hash-forty",
            "envoy_ring_hash-nodes-1000",
            "envoy_maglev-forty",
            "envoy_maglev-ramped",
            "table-zoned",
            "table-murmur3-partitions",
            "table-no-active"));
    return out;
  }

  private static Placement placement(String spec) {
    String[] parts = spec.split(":", -1);
    if (parts.length == 1) {
      return VectorFiles.build(VectorFiles.read(spec + ".json"));
    }
    List<Node> nodes = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      nodes.add(Node.of("s-" + i).withWeight(1 + i % 5).withAddress("10.0.0." + i + ":11211"));
    }
    Algorithm a = Algorithm.parse(parts[0]);
    RingConfig.Builder c = RingConfig.builder(a).hash(HashFunction.parse(parts[1]));
    if (a == Algorithm.HAPROXY) {
      c.avalanche(parts[2].equals("avalanche"));
    } else if (!parts[2].equals("none")) {
      c.hashTag(parts[2]);
    }
    return Placement.build(c.build(), nodes);
  }

  private static long lookups(Placement p) {
    long s = 0;
    for (int i = 0; i < LOOKUPS; i++) {
      int k = i % KEYS.length;
      String owner = p.owner(KEYS[k]);
      String text = p.owner(TEXT[k]);
      s += (owner == null ? 0 : owner.length()) + (text == null ? 0 : 31 * text.length());
      s += p.ownerIndex(KEYS[k]) + p.keyHash(KEYS[k]);
    }
    return s;
  }

  @ParameterizedTest
  @MethodSource("placements")
  void lookupsDoNotAllocate(String spec) {
    assertTrue(THREADS.isThreadAllocatedMemorySupported(), "allocation counting");
    Placement p = placement(spec);
    // Byte and text keys hash alike, so both lookups name one owner.
    for (int k = 0; k < KEYS.length; k++) {
      assertEquals(p.owner(KEYS[k]), p.owner(TEXT[k]), spec + ", key " + TEXT[k]);
    }
    long want = lookups(p);
    for (int warm = 0; warm < 10; warm++) {
      assertEquals(want, lookups(p), "lookups are deterministic");
    }
    long best = Long.MAX_VALUE;
    // The smallest of a few rounds: a round can catch the JIT replacing code under it.
    for (int round = 0; round < 5 && best != 0; round++) {
      long before = THREADS.getCurrentThreadAllocatedBytes();
      long calibrate = THREADS.getCurrentThreadAllocatedBytes();
      long got = lookups(p);
      long after = THREADS.getCurrentThreadAllocatedBytes();
      assertEquals(want, got, "lookups are deterministic");
      best = Math.min(best, after - calibrate - (calibrate - before));
    }
    assertEquals(0, best, spec + ": bytes allocated by " + 4 * LOOKUPS + " lookups");
  }
}
