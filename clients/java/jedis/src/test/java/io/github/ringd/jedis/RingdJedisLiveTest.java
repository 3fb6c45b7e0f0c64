package io.github.ringd.jedis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.github.ringd.client.RingClient;
import io.github.ringd.testkit.Daemon;
import io.github.ringd.testkit.RingHandle;
import io.github.ringd.testkit.Ringd;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.resps.ScanResult;

/**
 * {@link RingdJedis} over a real ringd and five real redis-servers: 20,000 keys (one in ten with a
 * hash tag) written through the router at each version, each found on the server of ringd's owner
 * of its placed part at that version, and on no other.
 */
class RingdJedisLiveTest {
  private static final int KEYS = 20_000;
  private static final Duration WAIT = Duration.ofSeconds(20);
  private static final Duration RETIRE = Duration.ofMillis(300);

  private Ringd ringd;
  private RingHandle ring;
  private final Map<String, Daemon> servers = new LinkedHashMap<>();
  private final Map<String, @Nullable String> addresses = new HashMap<>();
  private RingClient client;
  private RingdJedis router;

  @BeforeEach
  void start() {
    ringd = Ringd.start();
    ring = ringd.ring("cache");
    ring.create(Map.of("algorithm", "maglev"));
    for (int i = 0; i < 5; i++) {
      servers.put("redis-" + i, Daemon.redis());
    }
    client =
        RingClient.builder(List.of(ringd.url()), "cache")
            .clientId("jedis-test")
            .backoff(Duration.ofMillis(20), Duration.ofMillis(200))
            .build();
    router = RingdJedis.builder(client).hashTags(true).retireAfter(RETIRE).build();
  }

  @AfterEach
  void stop() {
    if (router != null) {
      router.close();
    }
    if (client != null) {
      client.close();
    }
    servers.values().forEach(Daemon::close);
    if (ringd != null) {
      ringd.close();
    }
  }

  private Map<String, Object> node(String id, int weight, String state) {
    Map<String, Object> n = new LinkedHashMap<>();
    n.put("id", id);
    n.put("address", servers.get(id).address());
    n.put("weight", weight);
    n.put("state", state);
    return RingHandle.upsert(n);
  }

  /** Applies ops, records their addresses, and waits until the router routes on the version. */
  @SafeVarargs
  @SuppressWarnings("varargs") // ops is only read, never stored or written
  private long change(Map<String, Object>... ops) {
    long v = ring.change(List.of(ops));
    for (Map<String, Object> op : ops) {
      if ("remove".equals(op.get("op"))) {
        addresses.remove((String) op.get("id"));
      } else {
        @SuppressWarnings("unchecked") // RingHandle.upsert nests the node as a map
        Map<String, Object> n = (Map<String, Object>) op.get("node");
        addresses.put((String) n.get("id"), (String) n.get("address"));
      }
    }
    assertTrue(router.awaitVersion(v, WAIT), "version " + v + " not applied");
    assertEquals(v, router.version());
    return v;
  }

  @Test
  void everyKeyIsOnRingdsOwnerAcrossVersions() throws Exception {
    assertThrows(NoRouteException.class, () -> router.client("k"), "no node yet");
    long v = change(node("redis-0", 1, "active"), node("redis-1", 1, "active"));
    check(v);
    check(change(node("redis-2", 1, "active"), node("redis-3", 1, "active")));
    check(change(node("redis-4", 3, "active")));
    RedisClient of1 = router.clients().get("redis-1");
    check(change(node("redis-1", 1, "draining")));
    assertFalse(of1.getPool().isClosed(), "kept open for the callers holding it");
    check(change(node("redis-0", 4, "active")));
    Thread.sleep(RETIRE.toMillis() + 500);
    assertTrue(of1.getPool().isClosed(), "closed once retired");
    check(
        change(
            RingHandle.remove("redis-1"),
            node("redis-2", 1, "draining"),
            node("redis-3", 2, "active"),
            RingHandle.upsert(Map.of("id", "nowhere", "weight", 2))));
    assertEquals(List.of("nowhere"), router.unroutable());
    RedisClient of3 = router.clients().get("redis-3");
    check(change(node("redis-1", 1, "active"), RingHandle.remove("nowhere")));
    assertEquals(List.of(), router.unroutable());
    assertSame(of3, router.clients().get("redis-3"), "an address that stays keeps its client");
    assertEquals(
        List.of("redis-0", "redis-1", "redis-3", "redis-4"),
        new ArrayList<>(router.clients().keySet()),
        "the active nodes with an address, by id");
  }

  /** Version v's keys: {@code v<v>:user:<i>}, every tenth {@code v<v>:{tag-<i/10>}:cart}. */
  private static List<String> keys(long v) {
    List<String> keys = new ArrayList<>(KEYS);
    for (int i = 0; i < KEYS; i++) {
      keys.add(i % 10 == 9 ? "v" + v + ":{tag-" + i / 10 + "}:cart" : "v" + v + ":user:" + i);
    }
    return keys;
  }

  /** The part ringd places: the hash tag of a tagged key, else the key. */
  private static String placed(String key) {
    int open = key.indexOf('{');
    return open < 0 ? key : key.substring(open + 1, key.indexOf('}'));
  }

  /**
   * Writes version v's keys through the router, pipelined per server; reads every server's keys of
   * v back with SCAN; requires each key on ringd's owner of its placed part and on no other; keys
   * whose owner has no address are refused and written nowhere.
   */
  private void check(long v) {
    List<String> keys = keys(v);
    List<byte[]> placedBytes = new ArrayList<>(KEYS);
    for (String k : keys) {
      placedBytes.add(placed(k).getBytes(StandardCharsets.UTF_8));
    }
    List<@Nullable String> owners = ring.lookup(v, placedBytes);
    IdentityHashMap<RedisClient, List<String>> byClient = new IdentityHashMap<>();
    int refused = 0;
    for (int i = 0; i < KEYS; i++) {
      String k = keys.get(i);
      String owner = owners.get(i);
      assertEquals(owner, router.owner(k), k);
      if (addresses.get(owner) == null) {
        NoRouteException e = assertThrows(NoRouteException.class, () -> router.client(k), k);
        assertEquals(owner, e.node());
        assertEquals(v, e.version());
        refused++;
        continue;
      }
      assertSame(router.client(k), router.client(k.getBytes(StandardCharsets.UTF_8)), k);
      byClient.computeIfAbsent(router.client(k), c -> new ArrayList<>()).add(k);
    }
    assertEquals(addresses.containsKey("nowhere"), refused > 0, "version " + v + " refused");
    for (Map.Entry<RedisClient, List<String>> e : byClient.entrySet()) {
      try (Pipeline p = e.getKey().pipelined()) {
        for (String k : e.getValue()) {
          p.set(k, k);
        }
        p.sync();
      }
    }
    Map<String, String> where = new HashMap<>();
    for (Daemon d : servers.values()) {
      try (Jedis one = new Jedis(d.host(), d.port())) {
        String cursor = ScanParams.SCAN_POINTER_START;
        ScanParams match = new ScanParams().match("v" + v + ":*").count(1000);
        do {
          ScanResult<String> page = one.scan(cursor, match);
          for (String k : page.getResult()) {
            String other = where.put(k, d.address());
            if (other != null) {
              fail("version " + v + ": " + k + " is on " + other + " and on " + d.address());
            }
          }
          cursor = page.getCursor();
        } while (!cursor.equals(ScanParams.SCAN_POINTER_START));
      }
    }
    int held = 0;
    for (int i = 0; i < KEYS; i++) {
      String want = addresses.get(owners.get(i));
      String k = keys.get(i);
      if (want == null) {
        assertNull(where.get(k), "version " + v + ": " + k + " was written");
      } else {
        held++;
        assertEquals(want, where.get(k), "version " + v + ": " + k + ", owner " + owners.get(i));
      }
    }
    assertEquals(held, where.size(), "version " + v + ": keys on the servers");
  }
}
