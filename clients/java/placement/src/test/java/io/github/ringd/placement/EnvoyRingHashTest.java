package io.github.ringd.placement;

import static io.github.ringd.placement.ProxyFixtures.endpoint;
import static io.github.ringd.placement.ProxyFixtures.envoyHosts;
import static io.github.ringd.placement.ProxyFixtures.envoyRingConfig;
import static io.github.ringd.placement.ProxyFixtures.refusal;
import static io.github.ringd.placement.ProxyFixtures.utf8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * envoy_ring_hash (spec 5.10): the spec's examples, Envoy's own tables (ring_hash_lb_test.cc, as
 * the Rust core's unit tests rebuild them) and Envoy's host search.
 */
class EnvoyRingHashTest {
  private static final int MAX = RingConfig.MAX_RING_SIZE;

  @Test
  void endpointWeightsShareOut2To31() {
    // 5.10.1's examples.
    assertArrayEquals(
        new long[] {715827883, 1431655765},
        EnvoyEndpoints.weights(
            List.of(endpoint("a", 1, "10.0.0.1:80"), endpoint("b", 2, "10.0.0.2:80"))));
    List<Node> abc =
        new ArrayList<>(
            List.of(
                endpoint("a", 1, "10.0.0.1:80"),
                endpoint("bb", 1, "10.0.0.2:80"),
                endpoint("ccc", 1, "10.0.0.3:80")));
    assertArrayEquals(new long[] {715827883, 715827883, 715827882}, EnvoyEndpoints.weights(abc));
    // Equal remainders go in label order, not id order: with the labels reversed, ccc (id a) is
    // last to get one more.
    abc.set(0, abc.get(0).withHashKey("ccc"));
    abc.set(2, abc.get(2).withHashKey("a"));
    assertArrayEquals(new long[] {715827882, 715827883, 715827883}, EnvoyEndpoints.weights(abc));
    // Ramps scale the weights: weight 2 at ramp 16,384 weighs what weight 1 at ramp 32,768 does.
    List<Node> ramped =
        List.of(
            endpoint("a", 2, "10.0.0.1:80").withRamp(16_384),
            endpoint("b", 1, "10.0.0.2:80").withRamp(32_768));
    assertArrayEquals(new long[] {1 << 30, 1 << 30}, EnvoyEndpoints.weights(ramped));
    // The sum is exactly 2^31 however the weights fall.
    SplittableRandom rng = new SplittableRandom(5);
    for (int c = 0; c < 200; c++) {
      List<Node> nodes = new ArrayList<>();
      int count = 1 + rng.nextInt(40);
      for (int i = 0; i < count; i++) {
        nodes.add(
            endpoint(String.format("n-%02d", i), 1 + rng.nextInt(1000), "10.0.0." + i + ":80")
                .withRamp(1 + rng.nextInt(Node.FULL_RAMP)));
      }
      assertEquals(
          1L << 31, Arrays.stream(EnvoyEndpoints.weights(nodes)).sum(), "seed 5, case " + c);
    }
  }

  @Test
  void weightShareTooSmall() {
    // A weight 1 at ramp 1 next to one node: its remainder is the larger, and it gets the one unit
    // left over, while the total stays under 2^32.
    Node tiny = endpoint("a", 1, "10.0.0.1:80").withRamp(1);
    assertArrayEquals(
        new long[] {1, (1L << 31) - 1},
        EnvoyEndpoints.weights(List.of(tiny, endpoint("b", 65_535, "10.0.0.2:80"))));
    PlacementException e =
        org.junit.jupiter.api.Assertions.assertThrows(
            PlacementException.class,
            () -> EnvoyEndpoints.weights(List.of(tiny, endpoint("b", 65_536, "10.0.0.2:80"))));
    assertEquals(PlacementException.Reason.WEIGHT_SHARE_TOO_SMALL, e.reason());
    assertTrue(
        e.getMessage().startsWith("WeightShareTooSmall: node a has 1 of the 4294967297 total"),
        e.getMessage());
    // Build refuses it (check 3a), naming the first such node in id order.
    Node tiny2 = new Node("c", null, 1, null, NodeState.ACTIVE, 1, "10.0.0.3:80");
    PlacementException b =
        refusal(
            RingConfig.defaults(Algorithm.ENVOY_RING_HASH),
            List.of(tiny2, endpoint("b", 1_000_000, "10.0.0.2:80"), tiny));
    assertEquals(PlacementException.Reason.WEIGHT_SHARE_TOO_SMALL, b.reason());
    assertTrue(b.getMessage().startsWith("WeightShareTooSmall: node a "), b.getMessage());
  }

  @Test
  void entryCounts() {
    // 5.10.1: Envoy's Basic hosts, six of weight 1 at minimum 12, get ringd's weights 357,913,942
    // twice and 357,913,941 four times, and from those 13 entries, where Envoy builds 12 from
    // weights 1.
    List<Node> nodes = envoyHosts(90, 96);
    long[] w = EnvoyEndpoints.weights(nodes);
    assertArrayEquals(
        new long[] {357913942, 357913942, 357913941, 357913941, 357913941, 357913941}, w);
    assertArrayEquals(new int[] {3, 2, 2, 2, 2, 2}, EnvoyEndpoints.entryCounts(w, 12, MAX));
    assertArrayEquals(
        new int[] {2, 2, 2, 2, 2, 2},
        EnvoyEndpoints.entryCounts(new long[] {1, 1, 1, 1, 1, 1}, 12, MAX));
    assertEquals(13, Placement.build(envoyRingConfig(12, MAX), nodes).points().size());
    // The maximum caps the scale: 1, 1, 1 at minimum 1,024 but at most 6.
    assertArrayEquals(
        new int[] {2, 2, 2}, EnvoyEndpoints.entryCounts(new long[] {1, 1, 1}, 1024, 6));
  }

  /** entryCounts with target + scale × x fused into one multiply-add. */
  private static int[] fusedEntryCounts(long[] weights, int minimum, int maximum) {
    long sum = Arrays.stream(weights).sum();
    double lightest = 1.0;
    for (long w : weights) {
      lightest = Math.min(lightest, (double) w / sum);
    }
    double scale = Math.min(Math.ceil(lightest * minimum) / lightest, maximum);
    int[] counts = new int[weights.length];
    double target = 0;
    double current = 0;
    for (int j = 0; j < weights.length; j++) {
      target = Math.fma(scale, (double) weights[j] / sum, target);
      while (current < target) {
        counts[j]++;
        current++;
      }
    }
    return counts;
  }

  /**
   * Weights 9, 6, 8, 9, 5 at ring sizes 15 to 54 are one of the many inputs whose counts a fused
   * multiply-add changes. ringd places 6, 3, 5, 6, 3 entries, and a ring of these nodes has the
   * fingerprint ringd gave it; fused, the counts would be 6, 4, 4, 6, 3.
   */
  @Test
  void entryCountsRoundEachOperation() {
    List<Node> nodes = new ArrayList<>();
    int[] weights = {9, 6, 8, 9, 5};
    for (int i = 0; i < weights.length; i++) {
      nodes.add(endpoint("e-" + i, weights[i], "10.0.0." + (i + 1) + ":80"));
    }
    long[] w = EnvoyEndpoints.weights(nodes);
    assertArrayEquals(new long[] {522360887, 348240592, 464320789, 522360887, 290200493}, w);
    assertArrayEquals(new int[] {6, 3, 5, 6, 3}, EnvoyEndpoints.entryCounts(w, 15, 54));
    assertArrayEquals(new int[] {6, 4, 4, 6, 3}, fusedEntryCounts(w, 15, 54));
    assertEquals(
        "393a989147c5858b2bbd9aca2aa0011953981f96d02be9db538dcd1ba4a64a7b",
        Placement.build(envoyRingConfig(15, 54), nodes).fingerprint());
    // The running sums give at least the minimum of entries.
    SplittableRandom rng = new SplittableRandom(3);
    for (int c = 0; c < 500; c++) {
      long[] ws = new long[1 + rng.nextInt(8)];
      for (int i = 0; i < ws.length; i++) {
        ws[i] = 1L + rng.nextInt(1 << 28);
      }
      int minimum = 1 + rng.nextInt(100);
      int total = Arrays.stream(EnvoyEndpoints.entryCounts(ws, minimum, MAX)).sum();
      assertTrue(total >= minimum, "seed 3, case " + c + ": " + total + " < " + minimum);
    }
  }

  @Test
  void twoHostsRing() {
    // 5.10.2: Envoy's UnevenHosts, :80 and :81 at minimum 3, get 2^30 each, scale 4: two entries
    // each, Envoy's own ring.
    List<Node> nodes = envoyHosts(80, 82);
    assertArrayEquals(new long[] {1 << 30, 1 << 30}, EnvoyEndpoints.weights(nodes));
    Placement p = Placement.build(envoyRingConfig(3, RingConfig.DEFAULT_MAXIMUM_RING_SIZE), nodes);
    List<Point> want =
        List.of(
            new Point(5454692015285649509L, "h-80"),
            new Point(7859399908942313493L, "h-81"),
            new Point(Long.parseUnsignedLong("13838424394637650569"), "h-80"),
            new Point(Long.parseUnsignedLong("16064866803292627174"), "h-81"));
    assertEquals(want, p.points());
    assertEquals(
        Long.parseUnsignedLong("16117243373044804889"),
        Hashes.xxh64(utf8("127.0.0.1:90_0"), 0, 14, 0));
    // The body is ring's: the entry count, then (u64 position, u32 index).
    ByteSink body = new ByteSink(64);
    body.u32(4);
    for (Point e : want) {
      body.u64(e.position());
      body.u32(e.id().equals("h-80") ? 0 : 1);
    }
    byte[] enc = p.encode();
    byte[] tail = Arrays.copyOfRange(enc, enc.length - body.size(), enc.length);
    assertArrayEquals(body.toByteArray(), tail);
    assertEquals(10, enc[8]);
    assertEquals(18, enc[9]);
    // Lookups: the first entry at or after the key hash, wrapping.
    Layout l = p.layout();
    long[][] cases = {
      {0, 0},
      {5454692015285649509L, 0},
      {5454692015285649510L, 1},
      {Long.parseUnsignedLong("16064866803292627174"), 1},
      {Long.parseUnsignedLong("16064866803292627175"), 0},
      {-1L, 0},
    };
    for (long[] c : cases) {
      assertEquals((int) c[1], l.ownerIndex(c[0]), Long.toUnsignedString(c[0]));
    }
    assertEquals("arcs", p.ownership().basis());
    assertEquals("18446744073709551616", p.ownership().totalUnits().toString());
    // A node's address places nothing: another address, the same ring.
    List<Node> moved = new ArrayList<>(envoyHosts(80, 82));
    moved.set(0, moved.get(0).withAddress("[2001:db8::80]:8080"));
    assertEquals(
        p.fingerprint(),
        Placement.build(envoyRingConfig(3, RingConfig.DEFAULT_MAXIMUM_RING_SIZE), moved)
            .fingerprint());
  }

  private static byte[][] keys(int from, int to) {
    byte[][] out = new byte[to - from][];
    for (int p = from; p < to; p++) {
      out[p - from] = utf8("127.0.0.1:" + p);
    }
    return out;
  }

  private static String entries(PointList points) {
    StringBuilder s = new StringBuilder();
    for (int i = 0; i < points.size(); i++) {
      s.append(Long.toUnsignedString(points.pos(i))).append('/').append(points.node(i)).append(' ');
    }
    return s.toString().trim();
  }

  @Test
  void envoysOwnTables() {
    // Envoy's Basic: six hosts of weight 1, minimum 12.
    PointList basic = EnvoyRingHash.entries(keys(90, 96), new long[] {1, 1, 1, 1, 1, 1}, 12, MAX);
    assertEquals(
        "833437586790550860/4 928266305478181108/2 1033482794131418490/0 3551244743356806947/5"
            + " 3851675632748031481/3 5583722120771150861/1 6311230543546372928/1"
            + " 7700377290971790572/3 13144177310400110813/5 13444792449719432967/2"
            + " 15516499411664133160/4 16117243373044804889/0",
        entries(basic));
    // Envoy's HostWeightedTinyRing: weights 1, 2, 3 at ring sizes 6 to 6.
    PointList tiny = EnvoyRingHash.entries(keys(90, 93), new long[] {1, 2, 3}, 6, 6);
    assertEquals(
        "928266305478181108/2 4443673547860492590/2 5583722120771150861/1 6311230543546372928/1"
            + " 13444792449719432967/2 16117243373044804889/0",
        entries(tiny));
    // From ringd's weights for the Basic hosts, the ring is those endpoints' ring (13 entries),
    // node for node.
    List<Node> nodes = envoyHosts(90, 96);
    List<Point> got = Placement.build(envoyRingConfig(12, MAX), nodes).points();
    PointList fromEds = EnvoyRingHash.entries(keys(90, 96), EnvoyEndpoints.weights(nodes), 12, MAX);
    assertEquals(13, got.size());
    assertEquals(13, fromEds.size());
    for (int i = 0; i < 13; i++) {
      assertEquals(new Point(fromEds.pos(i), nodes.get(fromEds.node(i)).id()), got.get(i));
    }
  }

  /** Envoy's chooseHost: libketama's binary search, as Envoy writes it. */
  private static int envoyChooseHost(long[] positions, long h) {
    int lowp = 0;
    int highp = positions.length;
    while (true) {
      int midp = (lowp + highp) / 2;
      if (midp == positions.length) {
        return 0;
      }
      long midval = positions[midp];
      long midval1 = midp > 0 ? positions[midp - 1] : 0;
      if (Long.compareUnsigned(h, midval) <= 0 && Long.compareUnsigned(h, midval1) > 0) {
        return midp;
      }
      if (Long.compareUnsigned(midval, h) < 0) {
        lowp = midp + 1;
      } else {
        highp = midp - 1;
      }
      if (lowp > highp) {
        return 0;
      }
    }
  }

  /** gRPC's sort.Search: the first entry at or after h, wrapping. */
  private static int grpcSearch(long[] positions, long h) {
    int lo = 0;
    int hi = positions.length;
    while (lo < hi) {
      int m = (lo + hi) >>> 1;
      if (Long.compareUnsigned(positions[m], h) < 0) {
        lo = m + 1;
      } else {
        hi = m;
      }
    }
    return lo % positions.length;
  }

  /** Envoy's search, gRPC's and the placement's bucket table pick the same entry's node. */
  @Test
  void searchIsTheFirstEntryAtOrAfter() {
    for (String name :
        List.of(
            "envoy_ring_hash-forty", "envoy_ring_hash-nodes-1000", "envoy_ring_hash-two-hosts")) {
      Placement p = VectorFiles.build(VectorFiles.read(name + ".json"));
      Continuum c = ((Circle) p.layout()).continuum();
      long[] positions = new long[c.size()];
      for (int i = 0; i < positions.length; i++) {
        positions[i] = c.pos(i);
      }
      SplittableRandom rng = new SplittableRandom(9 + positions.length);
      List<Long> probes = new ArrayList<>();
      for (int i = 0; i < 20_000; i++) {
        probes.add(rng.nextLong());
      }
      for (long pos : positions) {
        probes.add(pos);
        probes.add(pos + 1);
        probes.add(pos - 1);
      }
      for (long h : probes) {
        int grpc = c.node(grpcSearch(positions, h));
        int envoy = c.node(envoyChooseHost(positions, h));
        int got = p.layout().ownerIndex(h);
        assertEquals(grpc, got, name + ", hash " + Long.toUnsignedString(h));
        assertEquals(grpc, envoy, name + ", hash " + Long.toUnsignedString(h));
      }
    }
  }
}
