package io.github.ringd.client;

import static io.github.ringd.client.Live.waitVersion;
import static io.github.ringd.testkit.RingHandle.remove;
import static io.github.ringd.testkit.RingHandle.upsert;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import io.github.ringd.placement.Algorithm;
import io.github.ringd.placement.HashFunction;
import io.github.ringd.testkit.Etcd;
import io.github.ringd.testkit.RingHandle;
import io.github.ringd.testkit.Ringd;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Live agreement: on a real ringd over SQLite and over a real etcd, for every (algorithm, hash)
 * pair the server accepts, a RingClient following the ring gives the owner and 3-node preference
 * list that {@code POST …/lookup} gives with keys_b64: 100,000 keys under each algorithm's default
 * hash and 20,000 under every other hash (the hash functions themselves are checked bit for bit on
 * the shared vectors by the placement module; what the smaller count covers is each pair's lookup
 * path end to end), half of them not UTF-8. Comparisons are exact; a failure prints the first
 * differing keys.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Execution(ExecutionMode.CONCURRENT)
class AgreementTest {
  static final int KEYS_DEFAULT = 100_000;
  static final int KEYS_OTHER = 20_000;
  static final int REPLICAS = 3;

  /** The seed of the keys: a failure names keys that reproduce. */
  static final long SEED = 0x5eed;

  /**
   * The keys every ring places: the even ones UTF-8 text (ASCII, twemproxy hash-tagged, non-ASCII),
   * the odd ones random bytes with a 0xFF, which is never UTF-8.
   */
  static final List<byte[]> KEYS = keys();

  private Etcd etcd;
  private Ringd sqlite;
  private Ringd onEtcd;

  private static List<byte[]> keys() {
    SplittableRandom rnd = new SplittableRandom(SEED);
    List<byte[]> keys = new ArrayList<>(KEYS_DEFAULT);
    for (int i = 0; i < KEYS_DEFAULT; i++) {
      if (i % 2 == 1) {
        byte[] k = new byte[1 + rnd.nextInt(40)];
        for (int j = 0; j < k.length; j++) {
          k[j] = (byte) rnd.nextInt(256);
        }
        k[rnd.nextInt(k.length)] = (byte) 0xFF;
        keys.add(k);
        continue;
      }
      String text =
          switch (i % 6) {
            case 0 -> "user:" + i;
            case 2 -> "item:{" + (i / 6) + "}:cart";
            default -> "ключ-" + i + "-ü";
          };
      keys.add(text.getBytes(StandardCharsets.UTF_8));
    }
    return List.copyOf(keys);
  }

  @BeforeAll
  void startServers() {
    Ringd.binary();
    sqlite = Ringd.start();
    etcd = Etcd.start();
    onEtcd = Ringd.startOnEtcd(etcd);
  }

  @AfterAll
  void stopServers() {
    for (AutoCloseable c : new AutoCloseable[] {onEtcd, etcd, sqlite}) {
      if (c != null) {
        Inflight.quietly(c);
      }
    }
  }

  /** One ring: an (algorithm, hash) pair and the variant of its config that pair gets. */
  record Case(Algorithm alg, HashFunction hash, boolean zoneAware, int keys) {
    String name() {
      return alg.wireName().replace('_', '-')
          + "-"
          + hash.wireName().replace('_', '-')
          + (zoneAware ? "" : "-flat");
    }

    /**
     * The ring's config. The odd-numbered variant of each algorithm (zone_aware off) also turns off
     * haproxy's avalanche, gives twemproxy the hash tag {}, envoy_ring_hash ring sizes other than
     * the defaults and envoy_maglev a table of 10,007 slots, so both sides of each switch are
     * compared.
     */
    Map<String, Object> config() {
      Map<String, Object> cfg = new LinkedHashMap<>();
      cfg.put("algorithm", alg.wireName());
      cfg.put("hash", hash.wireName());
      cfg.put("zone_aware", zoneAware);
      switch (alg) {
        case TABLE -> cfg.put("partitions", 4096);
        case MAGLEV -> cfg.put("table_size", 10_007);
        case HAPROXY -> cfg.put("avalanche", zoneAware);
        case TWEMPROXY -> {
          if (!zoneAware) {
            cfg.put("hash_tag", "{}");
          }
        }
        case ENVOY_RING_HASH -> {
          if (!zoneAware) {
            cfg.put("minimum_ring_size", 2000);
            cfg.put("maximum_ring_size", 20_000);
          }
        }
        case ENVOY_MAGLEV -> {
          if (!zoneAware) {
            cfg.put("table_size", 10_007);
          }
        }
        default -> {}
      }
      return cfg;
    }

    @Override
    public String toString() {
      return name();
    }
  }

  /**
   * Every pair ringd accepts, the default hash first; an algorithm with one hash gets that pair
   * twice, zone aware and not.
   */
  static List<Case> cases() {
    List<Case> out = new ArrayList<>();
    for (Algorithm a : Algorithm.values()) {
      List<HashFunction> hashes = a.acceptedHashes();
      for (int i = 0; i < hashes.size(); i++) {
        out.add(new Case(a, hashes.get(i), i % 2 == 0, i == 0 ? KEYS_DEFAULT : KEYS_OTHER));
      }
      if (hashes.size() == 1) {
        out.add(new Case(a, hashes.get(0), false, KEYS_OTHER));
      }
    }
    return out;
  }

  static Stream<Arguments> storesAndCases() {
    return Stream.of("sqlite", "etcd")
        .flatMap(store -> cases().stream().map(c -> Arguments.of(store, c)));
  }

  /**
   * Node i of the set every ring of algorithm alg gets: three zones of equal weight, weights 1 to
   * 4, and an address each proxy mode takes; the xDS endpoints of the envoy algorithms also get
   * IPv6 addresses and an IPv4-mapped one.
   */
  static Map<String, Object> node(int i, String state, Algorithm alg) {
    String address = "10.0." + (i / 3) + "." + (10 + i) + ":11211";
    if (alg == Algorithm.ENVOY_RING_HASH || alg == Algorithm.ENVOY_MAGLEV) {
      if (i == 5) {
        address = "[::ffff:10.9.0.5]:8080";
      } else if (i % 4 == 1) {
        address = "[2001:db8::a:" + Integer.toHexString(i) + "]:8080";
      }
    }
    Map<String, Object> n = new LinkedHashMap<>();
    n.put("id", String.format("node-%02d", i));
    n.put("weight", 1 + (i / 3) % 4);
    n.put("zone", "zone-" + (char) ('a' + i % 3));
    n.put("address", address);
    n.put("state", state);
    if (i == 7) {
      n.put("hash_key", "spare-7"); // placed by its hash key, not its id
    }
    return n;
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("storesAndCases")
  void agreesWithServerLookup(String store, Case c) {
    Ringd s = store.equals("sqlite") ? sqlite : onEtcd;
    RingHandle r = s.ring(c.name());
    r.create(c.config());
    List<Map<String, Object>> ops = new ArrayList<>();
    for (int i = 0; i < 21; i++) {
      ops.add(upsert(node(i, "active", c.alg())));
    }
    r.change(ops);
    // node-21 takes node-03's zone and weight: zone weights stay equal.
    long v =
        r.change(
            remove("node-03"),
            upsert(node(21, "active", c.alg())),
            upsert(node(22, "draining", c.alg())));
    List<String> diffs = new ArrayList<>();
    try (RingClient cl = Live.fast(s.url(), c.name(), "agree-" + c.name()).ack(false).build()) {
      waitVersion(cl, v);
      for (int start = 0;
          start < c.keys() && diffs.size() < 5;
          start += RingHandle.MAX_LOOKUP_KEYS) {
        List<byte[]> batch =
            KEYS.subList(start, Math.min(start + RingHandle.MAX_LOOKUP_KEYS, c.keys()));
        List<List<String>> server = r.replicas(v, batch, REPLICAS);
        for (int j = 0; j < batch.size() && diffs.size() < 5; j++) {
          byte[] key = batch.get(j);
          List<String> want = server.get(j);
          String wantOwner = want.isEmpty() ? null : want.get(0);
          String owner = cl.owner(key);
          List<String> prefs = cl.preferenceList(key, REPLICAS);
          if (!java.util.Objects.equals(owner, wantOwner) || !prefs.equals(want)) {
            diffs.add(
                "key #"
                    + (start + j)
                    + " "
                    + HexFormat.of().formatHex(key)
                    + ": client owner "
                    + owner
                    + ", list "
                    + prefs
                    + "; server owner "
                    + wantOwner
                    + ", list "
                    + want);
          }
        }
      }
    }
    if (!diffs.isEmpty()) {
      fail(
          store
              + " "
              + c.name()
              + " v"
              + v
              + ": the client disagrees with POST …/lookup (key seed "
              + SEED
              + "); first differing keys:\n"
              + String.join("\n", diffs));
    }
  }

  /**
   * The pairs the cases leave out are the ones the server refuses, so "every valid pair" rests on
   * the server's word and not only on the placement module's list.
   */
  @Test
  void serverRefusesOtherPairs() {
    RingHandle r = sqlite.ring("refused");
    int refused = 0;
    for (Algorithm a : Algorithm.values()) {
      for (HashFunction h : HashFunction.values()) {
        if (!a.acceptedHashes().contains(h)) {
          r.call("PUT", "", Map.of("algorithm", a.wireName(), "hash", h.wireName()), 400);
          refused++;
        }
      }
    }
    assertEquals(
        Algorithm.values().length * HashFunction.values().length
            - cases().stream()
                .mapToInt(x -> x.zoneAware() || x.alg().acceptedHashes().size() > 1 ? 1 : 0)
                .sum(),
        refused);
  }

  /** The key set's promise: exactly half not UTF-8. */
  @Test
  void halfTheKeysAreNotUtf8() {
    int invalid = 0;
    for (byte[] k : KEYS) {
      try {
        StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(k));
      } catch (CharacterCodingException e) {
        invalid++;
      }
    }
    assertEquals(KEYS.size() / 2, invalid);
  }
}
