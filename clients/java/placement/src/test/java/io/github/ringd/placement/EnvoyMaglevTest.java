package io.github.ringd.placement;

import static io.github.ringd.placement.ProxyFixtures.endpoint;
import static io.github.ringd.placement.ProxyFixtures.envoyHosts;
import static io.github.ringd.placement.ProxyFixtures.envoyMaglevConfig;
import static io.github.ringd.placement.ProxyFixtures.joined;
import static io.github.ringd.placement.ProxyFixtures.keys;
import static io.github.ringd.placement.ProxyFixtures.refusal;
import static io.github.ringd.placement.ProxyFixtures.units;
import static io.github.ringd.placement.ProxyFixtures.utf8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * envoy_maglev (spec 5.11): the spec's example, Envoy's fill in binary64 against ringd's on the EDS
 * weights, the refusals of 2.4 and decoding.
 */
class EnvoyMaglevTest {
  /**
   * Envoy's OriginalMaglevTable fill as maglev_lb.cc writes it, in binary64: hosts (hash key,
   * weight) sorted by key, each weight divided by the weights' sum, a turn skipped while
   * f64(iteration) × weight < target, target += the largest normalized weight. The result is each
   * slot's index in keys.
   */
  static int[] envoyMaglevFill(String[] keys, long[] weights, int m) {
    double sum = 0;
    for (long w : weights) {
      sum += (double) w;
    }
    Integer[] order = new Integer[keys.length];
    for (int i = 0; i < order.length; i++) {
      order[i] = i;
    }
    Arrays.sort(order, (a, b) -> Strings.compareBytes(keys[a], keys[b]));
    int n = keys.length;
    long[] offset = new long[n];
    long[] skip = new long[n];
    long[] next = new long[n];
    double[] weight = new double[n];
    double[] target = new double[n];
    double top = 0;
    for (int k = 0; k < n; k++) {
      byte[] key = utf8(keys[order[k]]);
      offset[k] = Long.remainderUnsigned(Hashes.xxh64(key, 0, key.length, 0), m);
      skip[k] = Long.remainderUnsigned(Hashes.xxh64(key, 0, key.length, 1), m - 1L) + 1;
      weight[k] = weights[order[k]] / sum;
      top = Math.max(top, weight[k]);
    }
    int[] table = new int[m];
    Arrays.fill(table, -1);
    int filled = 0;
    for (long iteration = 1; filled < m; iteration++) {
      for (int k = 0; k < n && filled < m; k++) {
        if ((double) iteration * weight[k] < target[k]) {
          continue;
        }
        target[k] += top;
        int c = (int) ((offset[k] + skip[k] * next[k]) % m);
        while (table[c] >= 0) {
          next[k]++;
          c = (int) ((offset[k] + skip[k] * next[k]) % m);
        }
        table[c] = order[k];
        next[k]++;
        filled++;
      }
    }
    return table;
  }

  /** Endpoints n000, n001, … hashed as their addresses (hash_key = address). */
  private static List<Node> keyedEndpoints(String[] addresses, int[] weights) {
    List<Node> nodes = new ArrayList<>();
    for (int i = 0; i < addresses.length; i++) {
      nodes.add(
          endpoint(String.format("n%03d", i), weights[i], addresses[i]).withHashKey(addresses[i]));
    }
    return nodes;
  }

  /** A placement's table as indices in nodes. */
  private static int[] tableIndices(Placement p, List<Node> nodes) {
    Map<String, Integer> at = new HashMap<>();
    for (int i = 0; i < nodes.size(); i++) {
      at.put(nodes.get(i).id(), i);
    }
    return p.maglevTable().stream().mapToInt(at::get).toArray();
  }

  @Test
  void example() {
    // 5.11: labels 10.0.0.1:80 (a, weight 5) and 10.0.0.2:80 (b, weight 1) at M = 7.
    Node a = endpoint("a", 5, "10.0.0.1:80").withHashKey("10.0.0.1:80");
    Node b = endpoint("b", 1, "10.0.0.2:80").withHashKey("10.0.0.2:80");
    List<Node> nodes = List.of(a, b);
    assertArrayEquals(new long[] {1789569707, 357913941}, EnvoyEndpoints.weights(nodes));
    Placement p = Placement.build(envoyMaglevConfig(7), nodes);
    assertEquals("aaaabaa", joined(p.maglevTable()), "Envoy's table");
    // Envoy's own fill from the plain weights gives that table too; maglev fills on the plain
    // weights in integers and does not (5.3).
    assertArrayEquals(
        new int[] {0, 0, 0, 0, 1, 0, 0},
        envoyMaglevFill(new String[] {a.label(), b.label()}, new long[] {5, 1}, 7));
    RingConfig maglev = RingConfig.builder(Algorithm.MAGLEV).tableSize(7).build();
    assertEquals("abaabaa", joined(Placement.build(maglev, nodes).maglevTable()));
    // Lookups are table[XXH64(key, 0) mod M], ownership counts slots.
    for (byte[] k : keys(50)) {
      long h = Hashes.xxh64(k, 0, k.length, 0);
      assertEquals(h, p.keyHash(k));
      assertEquals(p.maglevTable().get((int) Long.remainderUnsigned(h, 7)), p.owner(k));
    }
    assertEquals(List.of("6", "1"), units(p));
    assertEquals("table_entries", p.ownership().basis());
  }

  @Test
  void givesEnvoysOwnTables() {
    // maglev_lb_test.cc's Basic and Weighted, through the port above.
    String[] keys = new String[6];
    for (int port = 90; port < 96; port++) {
      keys[port - 90] = "127.0.0.1:" + port;
    }
    int[] basic = {2, 4, 0, 1, 5, 0, 3};
    int[] weighted = {1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 0, 1};
    assertArrayEquals(basic, envoyMaglevFill(keys, new long[] {1, 1, 1, 1, 1, 1}, 7));
    assertArrayEquals(
        weighted, envoyMaglevFill(Arrays.copyOf(keys, 2), new long[] {1, 2}, 17), "Weighted");
    // From ringd's unequal shares of 2^31 (two of 357,913,942, four of 357,913,941), Basic's hosts
    // still get Basic's table, and Weighted's get Weighted's.
    List<Node> hosts = envoyHosts(90, 96);
    assertArrayEquals(basic, tableIndices(Placement.build(envoyMaglevConfig(7), hosts), hosts));
    List<Node> two = new ArrayList<>(envoyHosts(90, 92));
    two.set(1, two.get(1).withWeight(2));
    assertArrayEquals(weighted, tableIndices(Placement.build(envoyMaglevConfig(17), two), two));
  }

  /**
   * For random rings (1 to 12 endpoints, weights 1 to 10, some ramped), ringd's table is the one
   * Envoy fills, in binary64, from the EDS weights ringd sends.
   */
  @Test
  void isEnvoysTableFromTheEdsWeights() {
    SplittableRandom rng = new SplittableRandom(0x5eed);
    int[] primes = {7, 13, 17, 101, 257, 1009, 4099};
    for (int c = 0; c < 600; c++) {
      int count = 1 + rng.nextInt(12);
      int[] fitting = Arrays.stream(primes).filter(p -> p >= count).toArray();
      int m = fitting[rng.nextInt(fitting.length)];
      String[] addresses = new String[count];
      int[] weights = new int[count];
      for (int i = 0; i < count; i++) {
        addresses[i] = "10.0." + (c % 256) + "." + i + ":80";
        weights[i] = 1 + rng.nextInt(10);
      }
      List<Node> nodes = new ArrayList<>(keyedEndpoints(addresses, weights));
      if (c % 4 == 0) {
        int i = rng.nextInt(count);
        nodes.set(i, nodes.get(i).withRamp(1 + rng.nextInt(Node.FULL_RAMP)));
      }
      long[] eds = EnvoyEndpoints.weights(nodes);
      Placement p = Placement.build(envoyMaglevConfig(m), nodes);
      assertArrayEquals(
          envoyMaglevFill(addresses, eds, m),
          tableIndices(p, nodes),
          "seed 0x5eed, case " + c + ": weights " + Arrays.toString(weights) + " at M = " + m);
    }
  }

  @Test
  void refusals() {
    RingConfig envoy = RingConfig.defaults(Algorithm.ENVOY_MAGLEV);
    Node a = endpoint("a", 1, "10.0.0.1:80");
    Node b = endpoint("b", 1, "10.0.0.2:80");
    Node tiny = endpoint("t", 1, "10.0.0.9:80").withRamp(1);
    Map<String, Map.Entry<RingConfig, List<Node>>> cases = new LinkedHashMap<>();
    Map<String, PlacementException.Reason> want = new HashMap<>();
    cases.put("no address", Map.entry(envoy, List.of(Node.of("a"))));
    want.put("no address", PlacementException.Reason.MISSING_ADDRESS);
    cases.put("a host name", Map.entry(envoy, List.of(endpoint("a", 1, "cache.local:80"))));
    want.put("a host name", PlacementException.Reason.ADDRESS_NOT_SERVER);
    cases.put("not canonical", Map.entry(envoy, List.of(endpoint("a", 1, "[2001:DB8::1]:80"))));
    want.put("not canonical", PlacementException.Reason.ADDRESS_NOT_SERVER);
    cases.put("a shared label", Map.entry(envoy, List.of(a, b.withHashKey("a"))));
    want.put("a shared label", PlacementException.Reason.ENDPOINT_KEY_TAKEN);
    cases.put("a shared address", Map.entry(envoy, List.of(a, endpoint("c", 1, "10.0.0.1:80"))));
    want.put("a shared address", PlacementException.Reason.DUPLICATE_ADDRESS);
    cases.put(
        "a share too small",
        Map.entry(
            envoy,
            List.of(
                a,
                tiny,
                endpoint("z", 1_000_000, "10.0.0.8:80"),
                endpoint("y", 1_000_000, "10.0.0.7:80"))));
    want.put("a share too small", PlacementException.Reason.WEIGHT_SHARE_TOO_SMALL);
    cases.put(
        "fewer slots",
        Map.entry(envoyMaglevConfig(2), List.of(a, b, endpoint("c", 1, "10.0.0.3:80"))));
    want.put("fewer slots", PlacementException.Reason.TABLE_SIZE_OUT_OF_RANGE);
    cases.put("table_size 10", Map.entry(envoyMaglevConfig(10), List.of()));
    want.put("table_size 10", PlacementException.Reason.TABLE_SIZE_NOT_PRIME);
    cases.put("table_size 1", Map.entry(envoyMaglevConfig(1), List.of()));
    want.put("table_size 1", PlacementException.Reason.TABLE_SIZE_OUT_OF_RANGE);
    cases.put("table_size 5000017", Map.entry(envoyMaglevConfig(5_000_017), List.of()));
    want.put("table_size 5000017", PlacementException.Reason.TABLE_SIZE_OUT_OF_RANGE);
    // 5,000,077 is prime, and within maglev's bound.
    cases.put("table_size 5000077", Map.entry(envoyMaglevConfig(5_000_077), List.of()));
    want.put("table_size 5000077", PlacementException.Reason.TABLE_SIZE_OUT_OF_RANGE);
    cases.put("xxh3", Map.entry(envoy.toBuilder().hash(HashFunction.XXH3).build(), List.of()));
    want.put("xxh3", PlacementException.Reason.HASH_NOT_ACCEPTED);
    cases.put(
        "an address before", Map.entry(envoyMaglevConfig(10), List.of(endpoint("a", 1, "h:80"))));
    want.put("an address before", PlacementException.Reason.TABLE_SIZE_NOT_PRIME);
    cases.put(
        "a label before slots",
        Map.entry(
            envoyMaglevConfig(2), List.of(a, b.withHashKey("a"), endpoint("c", 1, "10.0.0.3:80"))));
    want.put("a label before slots", PlacementException.Reason.ENDPOINT_KEY_TAKEN);
    cases.forEach(
        (name, c) ->
            assertEquals(want.get(name), refusal(c.getKey(), c.getValue()).reason(), name));
    // maglev keeps its own bound; envoy_maglev takes Envoy's largest.
    RingConfig.builder(Algorithm.MAGLEV).tableSize(5_000_077).build().validate();
    envoyMaglevConfig(RingConfig.MAX_ENVOY_TABLE_SIZE).validate();
    // Only active nodes must differ and have an address; ramps are taken.
    Placement.build(
        envoy,
        List.of(
            a.withState(NodeState.DRAINING),
            endpoint("r", 1, "10.0.0.1:80").withHashKey("a"),
            b.withRamp(19_661),
            Node.of("gone").withState(NodeState.DRAINING)));
  }

  private static String sha256(byte[] b) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
  }

  private static Placement decodeOwn(byte[] b) throws Exception {
    return Placement.decode(b, sha256(b));
  }

  private static PlacementException.Reason decodeRefusal(byte[] b) throws Exception {
    String fp = sha256(b);
    return assertThrows(PlacementException.class, () -> Placement.decode(b, fp)).reason();
  }

  /**
   * The body is maglev's, under code 11 with xxh64; neither algorithm decodes with the other's
   * hash, and Envoy's bound on the table size holds.
   */
  @Test
  void decode() throws Exception {
    Placement p = VectorFiles.build(VectorFiles.read("envoy_maglev-five-and-one.json"));
    byte[] good = p.encode();
    assertEquals(11, good[8]);
    assertEquals(HashFunction.XXH64.code(), good[9]);
    Placement q = decodeOwn(good);
    assertEquals(Algorithm.ENVOY_MAGLEV, q.algorithm());
    assertEquals(p.maglevTable(), q.maglevTable());
    assertNull(q.nodes().get(0).address());
    byte[] asMaglev = good.clone();
    asMaglev[8] = (byte) Algorithm.MAGLEV.code();
    assertEquals(PlacementException.Reason.INVALID_ENCODING, decodeRefusal(asMaglev));
    asMaglev[9] = (byte) HashFunction.XXH3.code();
    assertEquals(p.maglevTable(), decodeOwn(asMaglev).maglevTable());
    byte[] asEnvoy = asMaglev.clone();
    asEnvoy[8] = (byte) Algorithm.ENVOY_MAGLEV.code();
    assertEquals(PlacementException.Reason.INVALID_ENCODING, decodeRefusal(asEnvoy));
    // One node in every one of 5,000,077 slots: maglev's, not Envoy's.
    final int m = 5_000_077;
    for (Algorithm alg : List.of(Algorithm.MAGLEV, Algorithm.ENVOY_MAGLEV)) {
      ByteSink big = new ByteSink(20 + 4 * m);
      Encoding.appendHeader(big, alg, alg.defaultHash(), false, 3, List.of(Node.of("a")), false);
      big.u32(m);
      big.bytes(new byte[4 * m]);
      byte[] enc = big.toByteArray();
      if (alg == Algorithm.MAGLEV) {
        assertEquals(m, decodeOwn(enc).maglevTable().size());
      } else {
        assertEquals(PlacementException.Reason.INVALID_ENCODING, decodeRefusal(enc));
      }
    }
  }
}
