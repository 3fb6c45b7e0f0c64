package io.github.ringd.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.ringd.client.WatchMode;
import io.github.ringd.placement.Algorithm;
import io.github.ringd.placement.Placement;
import io.github.ringd.testkit.Ringd;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.ToIntFunction;
import org.junit.jupiter.api.Test;

/**
 * Builds every benchmark's state as JMH would, at the smallest node count, and runs each benchmark
 * method over the whole key set, so that a change that breaks a contender fails here rather than in
 * a long JMH run.
 */
class BenchmarkSmokeTest {
  private static final int NODES = 10;
  private static final int KEYS = 1024;

  private final OwnerLookup bench = new OwnerLookup();

  /** Sets the shared parameters and runs the trial set-up. */
  private static <S extends OwnerLookup.Keys> S ready(S state) {
    state.nodes = NODES;
    state.keys = KEYS;
    state.setUp();
    return state;
  }

  /**
   * Runs one benchmark call per key and requires a node id every time, every node owning some key
   * (1,024 keys over 10 nodes of one weight leave none empty unless the contender is broken), and
   * the calls cycling through the key set in order.
   */
  private static <S extends OwnerLookup.Keys> Map<String, Integer> counts(
      S state, ToIntFunction<S> index, Function<S, String> call) {
    Set<String> ids = Set.of(Fixtures.nodeIds(NODES));
    Map<String, Integer> counts = new HashMap<>();
    for (int i = 0; i < KEYS; i++) {
      String owner = call.apply(state);
      assertTrue(ids.contains(owner), () -> "not a node id: " + owner);
      counts.merge(owner, 1, Integer::sum);
    }
    assertEquals(NODES, counts.size(), () -> "owners " + counts);
    assertEquals(0, index.applyAsInt(state), "a full cycle comes back to the first key");
    return counts;
  }

  @Test
  void everyRingdAlgorithmNamesThePlacementsOwner() {
    for (String algorithm : List.of("ring", "table", "ketama", "maglev", "jump", "rendezvous")) {
      OwnerLookup.Ringd s = new OwnerLookup.Ringd();
      s.algorithm = algorithm;
      ready(s);
      Placement p = s.placement;
      assertEquals(algorithm, p.algorithm().wireName());
      assertEquals(NODES, p.nodes().size());
      for (int i = 0; i < KEYS; i++) {
        int owner = p.ownerIndex(s.keyBytes[i]);
        assertEquals(p.nodeId(owner), bench.ringd(s), algorithm + ", key " + i);
      }
      counts(s, OwnerLookup.Keys::nextIndex, bench::ringd);
    }
  }

  @Test
  void everyLibraryNamesANodeForEveryKey() {
    counts(
        ready(new OwnerLookup.SpymemcachedKetama()),
        OwnerLookup.Keys::nextIndex,
        bench::spymemcachedKetama);
    counts(ready(new OwnerLookup.Guava()), OwnerLookup.Keys::nextIndex, bench::guavaConsistentHash);
    for (String hasher : List.of("jumpBack", "jump", "weightedSampling")) {
      OwnerLookup.Hash4j s = new OwnerLookup.Hash4j();
      s.hasher = hasher;
      counts(ready(s), OwnerLookup.Keys::nextIndex, bench::hash4j);
    }
    counts(
        ready(new OwnerLookup.Hash4jAnchor()),
        OwnerLookup.Keys::nextIndex,
        bench::hash4jJumpBackAnchor);
  }

  /** The owner of every key, through the benchmark method, at {@code nodes} nodes. */
  private static <S extends OwnerLookup.Keys> String[] owners(
      Supplier<S> make, int nodes, Function<S, String> call) {
    S state = make.get();
    state.nodes = nodes;
    state.keys = KEYS;
    state.setUp();
    String[] out = new String[KEYS];
    for (int i = 0; i < KEYS; i++) {
      out[i] = call.apply(state);
    }
    return out;
  }

  /**
   * Adding an eleventh node to ten moves keys only to the new node, for every contender that
   * promises it: the structures are built as consistent hashing, not by accident modulo n.
   */
  @Test
  void addingANodeMovesKeysOnlyToIt() {
    Map<String, Function<Integer, String[]>> contenders = new LinkedHashMap<>();
    for (String algorithm : List.of("ring", "ketama", "jump", "rendezvous")) {
      contenders.put(
          "ringd " + algorithm,
          n ->
              owners(
                  () -> {
                    OwnerLookup.Ringd s = new OwnerLookup.Ringd();
                    s.algorithm = algorithm;
                    return s;
                  },
                  n,
                  bench::ringd));
    }
    contenders.put(
        "spymemcached",
        n -> owners(OwnerLookup.SpymemcachedKetama::new, n, bench::spymemcachedKetama));
    contenders.put("guava", n -> owners(OwnerLookup.Guava::new, n, bench::guavaConsistentHash));
    for (String hasher : List.of("jumpBack", "jump", "weightedSampling")) {
      contenders.put(
          "hash4j " + hasher,
          n ->
              owners(
                  () -> {
                    OwnerLookup.Hash4j s = new OwnerLookup.Hash4j();
                    s.hasher = hasher;
                    return s;
                  },
                  n,
                  bench::hash4j));
    }
    contenders.put(
        "hash4j jumpBackAnchor",
        n -> owners(OwnerLookup.Hash4jAnchor::new, n, bench::hash4jJumpBackAnchor));
    String added = Fixtures.nodeId(NODES);
    for (Map.Entry<String, Function<Integer, String[]>> c : contenders.entrySet()) {
      String[] before = c.getValue().apply(NODES);
      String[] after = c.getValue().apply(NODES + 1);
      int moved = 0;
      for (int i = 0; i < KEYS; i++) {
        if (!before[i].equals(after[i])) {
          moved++;
          assertEquals(added, after[i], c.getKey() + ": key " + i + " moved from " + before[i]);
        }
      }
      // About 1/11 of the keys: 93 of 1,024 on average.
      int m = moved;
      assertTrue(m > 40 && m < 160, () -> c.getKey() + " moved " + m + " of " + KEYS);
    }
  }

  @Test
  void keysAreFixedPrintableAndOfTheirLength() {
    byte[][] keys = Fixtures.keys(4);
    assertEquals(4, keys.length);
    for (byte[] k : keys) {
      assertEquals(Fixtures.KEY_LENGTH, k.length);
      for (byte b : k) {
        assertTrue(b > ' ' && b < 0x7f, "printable ASCII");
      }
    }
    assertEquals(
        List.of(Fixtures.strings(keys)), List.of(Fixtures.strings(Fixtures.keys(4))), "same seed");
    assertThrows(IllegalArgumentException.class, () -> Fixtures.checkPowerOfTwo(1000));
  }

  @Test
  void memoryFootprintMeasuresEveryContender() {
    Map<String, Long> sizes = MemoryFootprint.measure(NODES);
    assertEquals(12, sizes.size(), () -> "contenders " + sizes.keySet());
    long ids = sizes.get("Guava Hashing.consistentHash");
    for (Map.Entry<String, Long> e : sizes.entrySet()) {
      // Every structure holds at least the ten node ids it answers with.
      assertTrue(e.getValue() >= ids, () -> e + " is smaller than the node ids alone, " + ids);
    }
    // 160 points a node: spymemcached's TreeMap holds 1,600 entries of 40 bytes or more.
    assertTrue(sizes.get("spymemcached KetamaNodeLocator") > 1600 * 40, () -> "" + sizes);
  }

  @Test
  void theHashFloorIsTheHashRingdPlacesBy() {
    OwnerLookup.HashOnly s = ready(new OwnerLookup.HashOnly());
    Placement ring = Contenders.ringd(Algorithm.RING, NODES);
    for (int i = 0; i < KEYS; i++) {
      byte[] key = s.keyBytes[i];
      assertEquals(
          ring.keyHash(key), bench.xxh3Only(s), () -> "key " + HexFormat.of().formatHex(key));
    }
  }

  /** The propagation tool at a small size against a live ringd: every change timed, none missed. */
  @Test
  void propagationTimesEveryChange() {
    Ringd.binary();
    try (Ringd server = Ringd.start()) {
      List<Propagation.Result> results = Propagation.measure(server, 5, 2);
      assertEquals(
          List.of(WatchMode.SSE, WatchMode.LONG_POLL),
          results.stream().map(Propagation.Result::mode).toList());
      for (Propagation.Result r : results) {
        assertEquals(0, r.missed(), r.row());
        assertEquals(5, r.sorted().size(), r.row());
        for (int i = 1; i < r.sorted().size(); i++) {
          assertTrue(r.sorted().get(i - 1) <= r.sorted().get(i), r.row());
        }
        assertTrue(
            r.row().startsWith(r.mode() == WatchMode.SSE ? "| SSE | 5 |" : "| long-poll | 5 |"),
            r.row());
      }
    }
  }
}
