package io.github.ringd.spymemcached;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.ringd.testkit.RingHandle;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import net.spy.memcached.ConnectionFactoryBuilder;
import net.spy.memcached.MemcachedClient;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * {@link RingdMemcached} over a real ringd and four real memcacheds: 20,000 keys written through
 * spymemcached at each version, each found on the memcached of ringd's owner at that version and on
 * no other.
 */
class RingdMemcachedLiveTest {
  private static final int KEYS = 20_000;
  private static final Duration WAIT = Duration.ofSeconds(20);

  /**
   * One change of the ring, what it is, and whether it changes the active nodes' addresses (and so
   * needs a new spymemcached client).
   */
  private record Step(String what, boolean newAddresses, Supplier<List<Map<String, Object>>> ops) {}

  @Test
  void everyKeyIsOnRingdsOwnerAcrossVersions() throws Exception {
    try (MemcachedCluster cl = new MemcachedCluster(Map.of("algorithm", "ketama"), 4);
        RingdMemcached cache =
            RingdMemcached.builder(cl.client)
                .connections(new ConnectionFactoryBuilder().setOpTimeout(5000))
                .retireAfter(Duration.ofMillis(500))
                .build()) {
      assertThrows(NoRouteException.class, cache::client, "before any node");
      List<Step> steps =
          List.of(
              new Step(
                  "two nodes",
                  true,
                  () -> List.of(cl.node("mc-0", 1, "active"), cl.node("mc-1", 1, "active"))),
              new Step("add mc-2 at weight 2", true, () -> List.of(cl.node("mc-2", 2, "active"))),
              new Step("add mc-3", true, () -> List.of(cl.node("mc-3", 1, "active"))),
              new Step("re-weight mc-1 to 5", false, () -> List.of(cl.node("mc-1", 5, "active"))),
              new Step("drain mc-0", true, () -> List.of(cl.node("mc-0", 1, "draining"))),
              new Step(
                  "remove mc-0 (drained: no address leaves), add a node without an address",
                  false,
                  () ->
                      List.of(
                          RingHandle.remove("mc-0"),
                          RingHandle.upsert(Map.of("id", "nowhere", "weight", 2)))),
              new Step(
                  "mc-0 back at weight 3, the node without an address gone",
                  true,
                  () -> List.of(cl.node("mc-0", 3, "active"), RingHandle.remove("nowhere"))));
      MemcachedClient previous = null;
      for (Step step : steps) {
        long v = cl.change(step.ops().get());
        assertTrue(cache.awaitVersion(v, WAIT), step.what() + ": version " + v + " not applied");
        assertEquals(v, cache.version(), step.what());
        boolean nowhere = cl.addresses.containsKey("nowhere");
        assertEquals(nowhere ? List.of("nowhere") : List.of(), cache.unroutable(), step.what());
        MemcachedClient now = cache.client();
        if (step.newAddresses()) {
          assertNotSame(previous, now, step.what() + ": new addresses, a new client");
        } else {
          assertSame(previous, now, step.what() + ": the same addresses, the same client");
        }
        previous = now;
        writeAndCheck(cl, cache, v);
      }
    }
  }

  /**
   * Writes version v's keys through the adapter, then requires each on its ringd owner; keys of the
   * node without an address must be refused with a NoRouteException naming it.
   */
  private static void writeAndCheck(MemcachedCluster cl, RingdMemcached cache, long v)
      throws InterruptedException, ExecutionException, TimeoutException {
    List<String> keys = MemcachedCluster.keys(v, KEYS);
    List<@Nullable String> owners = cl.owners(v, keys);
    MemcachedClient mc = cache.client();
    List<Future<Boolean>> writes = new ArrayList<>(keys.size());
    int refused = 0;
    for (int i = 0; i < keys.size(); i++) {
      String k = keys.get(i);
      if (cl.addresses.get(owners.get(i)) == null) {
        NoRouteException e = assertThrows(NoRouteException.class, () -> mc.set(k, 0, k), k);
        assertEquals(owners.get(i), e.node(), k);
        assertEquals(v, e.version(), k);
        refused++;
      } else {
        writes.add(mc.set(k, 0, k));
      }
    }
    for (Future<Boolean> w : writes) {
      assertTrue(w.get(10, TimeUnit.SECONDS), "a set answered not stored");
    }
    assertEquals(cl.addresses.containsKey("nowhere"), refused > 0, "version " + v + " refused");
    cl.assertOnOwners(v, keys, owners);
  }

  /**
   * The locator of a client built over every memcached follows the ring client by itself: after
   * each version its owner of each key is the memcached ringd names, and its sequence is the rest
   * of ringd's preference list.
   */
  @Test
  void aLocatorFollowsTheRingClient() throws Exception {
    try (MemcachedCluster cl = new MemcachedCluster(Map.of("algorithm", "ring"), 3)) {
      RingdConnectionFactory f =
          RingdConnectionFactory.following(cl.client, new ConnectionFactoryBuilder().build());
      List<java.net.InetSocketAddress> all = new ArrayList<>();
      for (var d : cl.servers.values()) {
        all.add(new java.net.InetSocketAddress(d.host(), d.port()));
      }
      MemcachedClient mc = new MemcachedClient(f, all);
      try {
        RingdNodeLocator locator = f.locator();
        assertThrows(NoRouteException.class, () -> locator.getPrimary("k"), "no node yet");
        long v1 = cl.change(List.of(cl.node("mc-0", 1, "active"), cl.node("mc-1", 1, "active")));
        checkLocator(cl, locator, v1);
        long v2 = cl.change(List.of(cl.node("mc-2", 3, "active"), cl.node("mc-0", 1, "draining")));
        checkLocator(cl, locator, v2);
        // Written through spymemcached with the following locator: on the owner at v2 only.
        List<String> keys = MemcachedCluster.keys(v2, 2000);
        List<Future<Boolean>> writes = new ArrayList<>();
        for (String k : keys) {
          writes.add(mc.set(k, 0, k));
        }
        for (Future<Boolean> w : writes) {
          assertTrue(w.get(10, TimeUnit.SECONDS));
        }
        cl.assertOnOwners(v2, keys, cl.owners(v2, keys));
      } finally {
        mc.shutdown();
      }
    }
  }

  private static void checkLocator(MemcachedCluster cl, RingdNodeLocator locator, long v)
      throws InterruptedException {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (locator.version() < v && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertEquals(v, locator.version(), "the locator's version");
    assertFalse(locator.getAll().isEmpty());
    List<String> keys = MemcachedCluster.keys(v, 5000);
    List<byte[]> bytes = new ArrayList<>();
    for (String k : keys) {
      bytes.add(k.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }
    List<List<String>> lists = cl.ring.replicas(v, bytes, 8);
    for (int i = 0; i < keys.size(); i++) {
      String k = keys.get(i);
      List<String> want = new ArrayList<>();
      for (String id : lists.get(i)) {
        want.add(cl.addresses.get(id));
      }
      List<String> got = new ArrayList<>();
      got.add(address(locator.getPrimary(k)));
      locator.getSequence(k).forEachRemaining(n -> got.add(address(n)));
      assertEquals(want, got, "version " + v + ": " + k + ", ringd's list " + lists.get(i));
    }
  }

  private static String address(net.spy.memcached.MemcachedNode n) {
    var a = (java.net.InetSocketAddress) n.getSocketAddress();
    return a.getHostString() + ":" + a.getPort();
  }
}
