package io.github.ringd.placement;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Lookups must not allocate: clients call owner() on every request. The thread's allocated bytes
 * are read before and after many lookups, once the lookups are warm.
 */
class AllocationTest {
  private static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

  private static final byte[][] KEYS = {
    "user:1234".getBytes(StandardCharsets.UTF_8),
    new byte[0],
    "session/7f3c9a2e-5b1d-4c8e-9f00-0123456789ab".getBytes(StandardCharsets.UTF_8),
    "clé-ünïcødé-🙂".getBytes(StandardCharsets.UTF_8),
  };

  private static final String[] TEXT_KEYS = {
    "user:1234", "", "session/7f3c9a2e-5b1d-4c8e-9f00-0123456789ab", "clé-ünïcødé-🙂"
  };

  private static final int LOOKUPS = 20_000;

  private static long lookups(Placement p) {
    int s = 0;
    for (int i = 0; i < LOOKUPS; i++) {
      byte[] key = KEYS[i & 3];
      String owner = p.owner(key);
      String text = p.owner(TEXT_KEYS[i & 3]);
      s += (owner == null ? 0 : owner.length()) + (text == null ? 0 : text.length());
      s += p.ownerIndex(key) + (int) p.keyHash(key);
    }
    return s;
  }

  /** The bytes the current thread allocates while running lookups on p, past warm-up. */
  private static long allocatedBy(Placement p) {
    // Each round's results are compared, which also keeps the lookups from being optimized away.
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
    return best;
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "ring-weighted",
        "ring-zoned",
        "ring-no-active",
        "ketama-weighted",
        "ketama-no-active",
        "maglev-weighted",
        "maglev-ramped",
        "jump-md5-holes",
        "jump-colliding",
        "maglev-murmur3-table-size",
        "rendezvous-sha256",
        "jump-weighted",
        "rendezvous-weighted",
        "rendezvous-ramped",
        "rendezvous-single",
        "table-weighted",
        "nginx-weighted",
        "haproxy-weighted",
        "twemproxy-hash-tag",
        "envoy_ring_hash-weighted",
        "envoy_ring_hash-no-active",
        "envoy_maglev-weighted",
        "envoy_maglev-no-active"
      })
  void lookupsDoNotAllocate(String name) {
    assertTrue(THREADS.isThreadAllocatedMemorySupported(), "allocation counting");
    Placement p = VectorFiles.build(VectorFiles.read(name + ".json"));
    assertEquals(0, allocatedBy(p), name + ": bytes allocated by " + LOOKUPS + " lookups");
  }

  @Test
  void theCounterSeesAnAllocation() {
    // The measurement itself must be able to fail.
    long before = THREADS.getCurrentThreadAllocatedBytes();
    List<byte[]> kept = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      kept.add(new byte[1024]);
    }
    long after = THREADS.getCurrentThreadAllocatedBytes();
    assertEquals(100, kept.size());
    assertTrue(after - before >= 100 * 1024, "counted " + (after - before) + " bytes");
  }

  /** A placement is read-only once built: lookups from several threads share it. */
  @Test
  void concurrentLookups() throws Exception {
    for (String name :
        new String[] {"ring-zoned", "rendezvous-ramped", "jump-md5-holes", "maglev-zoned"}) {
      Placement p = VectorFiles.build(VectorFiles.read(name + ".json"));
      List<String> want = p.preferenceList("k".getBytes(StandardCharsets.UTF_8), 3);
      ExecutorService pool = Executors.newFixedThreadPool(4);
      try {
        List<Future<List<String>>> results = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
          results.add(
              pool.submit(
                  () -> {
                    List<String> got = null;
                    for (int i = 0; i < 200; i++) {
                      p.owner("k");
                      p.ownership();
                      got = p.preferenceList("k".getBytes(StandardCharsets.UTF_8), 3);
                    }
                    return got;
                  }));
        }
        for (Future<List<String>> f : results) {
          assertEquals(want, f.get(), name);
        }
      } finally {
        pool.shutdown();
      }
    }
  }
}
