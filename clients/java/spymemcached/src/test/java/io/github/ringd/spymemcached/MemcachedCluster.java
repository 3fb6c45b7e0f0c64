package io.github.ringd.spymemcached;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.fail;

import io.github.ringd.client.RingClient;
import io.github.ringd.testkit.Daemon;
import io.github.ringd.testkit.RingHandle;
import io.github.ringd.testkit.Ringd;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import net.spy.memcached.MemcachedClient;
import org.jspecify.annotations.Nullable;

/**
 * A real ringd with one ring, the memcacheds its nodes name (node id = {@code mc-N}, address = that
 * memcached's host:port) and a ring client following it; closes all of it.
 */
final class MemcachedCluster implements AutoCloseable {
  final Ringd ringd;
  final RingHandle ring;
  final Map<String, Daemon> servers = new LinkedHashMap<>();
  final RingClient client;

  /** The nodes of the ring now, by id: their address, null for none. */
  final Map<String, @Nullable String> addresses = new HashMap<>();

  MemcachedCluster(Map<String, ?> config, int servers) {
    this.ringd = Ringd.start();
    this.ring = ringd.ring("cache");
    ring.create(config);
    for (int i = 0; i < servers; i++) {
      this.servers.put("mc-" + i, Daemon.memcached());
    }
    this.client =
        RingClient.builder(List.of(ringd.url()), "cache")
            .clientId("spymemcached-test")
            .backoff(Duration.ofMillis(20), Duration.ofMillis(200))
            .build();
  }

  /** The upsert of node id at its memcached, with weight and state ("active", "draining"). */
  Map<String, Object> node(String id, int weight, String state) {
    Map<String, Object> n = new LinkedHashMap<>();
    n.put("id", id);
    n.put("address", servers.get(id).address());
    n.put("weight", weight);
    n.put("state", state);
    return RingHandle.upsert(n);
  }

  /** Applies ops and records the addresses they give; returns the new version. */
  long change(List<Map<String, Object>> ops) {
    long v = ring.change(ops);
    for (Map<String, Object> op : ops) {
      if ("remove".equals(op.get("op"))) {
        addresses.remove((String) op.get("id"));
      } else {
        @SuppressWarnings("unchecked") // RingHandle.upsert nests the node as a map
        Map<String, Object> n = (Map<String, Object>) op.get("node");
        addresses.put((String) n.get("id"), (String) n.get("address"));
      }
    }
    return v;
  }

  /** Version v's keys, {@code v<v>:user:<i>}. */
  static List<String> keys(long v, int n) {
    List<String> keys = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      keys.add("v" + v + ":user:" + i);
    }
    return keys;
  }

  /** ringd's owner (POST …/lookup at v) of each key. */
  List<@Nullable String> owners(long v, List<String> keys) {
    List<byte[]> bytes = new ArrayList<>(keys.size());
    for (String k : keys) {
      bytes.add(k.getBytes(StandardCharsets.UTF_8));
    }
    return ring.lookup(v, bytes);
  }

  /**
   * Where each key is: every memcached is asked for every key on a connection of its own (a plain
   * spymemcached client of one server), and a key found on two fails the test. Each value must be
   * the key itself.
   */
  Map<String, String> whereIs(List<String> keys) {
    Map<String, String> where = new HashMap<>();
    for (Daemon d : servers.values()) {
      MemcachedClient one;
      try {
        one = new MemcachedClient(new InetSocketAddress(d.host(), d.port()));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      try {
        for (int start = 0; start < keys.size(); start += 1000) {
          Map<String, Object> got =
              one.getBulk(keys.subList(start, Math.min(start + 1000, keys.size())));
          for (Map.Entry<String, Object> e : got.entrySet()) {
            String other = where.put(e.getKey(), d.address());
            if (other != null) {
              fail(e.getKey() + " is on " + other + " and on " + d.address());
            }
            assertEquals(e.getKey(), e.getValue(), "the value of " + e.getKey());
          }
        }
      } finally {
        one.shutdown();
      }
    }
    return where;
  }

  /**
   * Requires each key on the memcached of its ringd owner and on no other, except keys whose owner
   * has no address (listed in refused), which must be on none.
   */
  void assertOnOwners(long v, List<String> keys, List<@Nullable String> owners) {
    Map<String, String> where = whereIs(keys);
    int held = 0;
    for (int i = 0; i < keys.size(); i++) {
      String owner = owners.get(i);
      String want = owner == null ? null : addresses.get(owner);
      String k = keys.get(i);
      if (want == null) {
        assertNull(where.get(k), "version " + v + ": " + k + " of " + owner + " was written");
      } else {
        held++;
        assertEquals(
            want, where.get(k), "version " + v + ": " + k + ", ringd's owner " + owner + " is at");
      }
    }
    assertEquals(held, where.size(), "version " + v + ": keys on the servers");
  }

  @Override
  public void close() {
    client.close();
    for (Daemon d : servers.values()) {
      d.close();
    }
    ringd.close();
  }
}
