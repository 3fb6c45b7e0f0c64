package io.github.ringd.placement;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Checks of the vector files that are not placement vectors: the shared twemproxy hashes and the
 * results published by the original implementations (spec 12), which ringd reproduces.
 */
final class ReferenceChecks {
  private ReferenceChecks() {}

  private static final List<HashFunction> TWEMPROXY = Algorithm.TWEMPROXY.acceptedHashes();

  static void twemproxyHashes(JsonNode file) {
    VectorFiles.onlyFields(file, Set.of("description", "keys_hex", "hashes"), "twemproxy hashes");
    JsonNode hashes = file.get("hashes");
    hashes
        .fieldNames()
        .forEachRemaining(
            name ->
                assertTrue(
                    TWEMPROXY.contains(HashFunction.parse(name)), name + " is not twemproxy's"));
    JsonNode keys = file.get("keys_hex");
    for (HashFunction h : TWEMPROXY) {
      JsonNode want = hashes.get(h.wireName());
      assertTrue(want != null && want.size() == keys.size(), h + ": a value per key");
      for (int i = 0; i < keys.size(); i++) {
        byte[] key = HexFormat.of().parseHex(keys.get(i).asText());
        long got = Integer.toUnsignedLong(ProxyKeyHash.hash32(h, key, 0, key.length));
        assertEquals(want.get(i).asLong(), got, h + "(" + keys.get(i).asText() + ")");
      }
    }
  }

  static void libketama(JsonNode file) {
    JsonNode cases = file.get("cases");
    assertEquals(6, cases.size(), "cases (the Rust test expects 6)");
    for (JsonNode c : cases) {
      String name = c.get("name").asText();
      List<Node> nodes = new ArrayList<>();
      long total = 0;
      for (JsonNode s : c.get("servers")) {
        nodes.add(Node.of(s.get("addr").asText()).withWeight(s.get("memory").asInt()));
        total += s.get("memory").asLong();
      }
      Placement p = Placement.build(RingConfig.defaults(Algorithm.KETAMA), nodes);
      List<Point> points = p.points();
      Map<String, Integer> perNode = new HashMap<>();
      for (Point pt : points) {
        perNode.merge(pt.id(), 1, Integer::sum);
      }
      JsonNode servers = c.get("servers");
      for (int i = 0; i < servers.size(); i++) {
        JsonNode s = servers.get(i);
        assertEquals(
            c.get("ks_per_server").get(i).asInt(),
            Ketama.digestCount(s.get("memory").asLong(), total, servers.size()),
            name + " digests of " + s.get("addr").asText());
        assertEquals(
            c.get("points_per_server").get(i).asInt(),
            perNode.get(s.get("addr").asText()),
            name + " points of " + s.get("addr").asText());
      }
      assertEquals(c.get("numpoints").asInt(), points.size(), name);
      assertEquals(c.get("last_point").asLong(), points.get(points.size() - 1).position(), name);
      JsonNode first = c.get("first_points");
      for (int i = 0; i < first.size(); i++) {
        assertEquals(
            new Point(first.get(i).get("point").asLong(), first.get(i).get("addr").asText()),
            points.get(i),
            name + " point " + i);
      }
      for (JsonNode col : c.get("collisions")) {
        // Tied points in libketama's (stable qsort) order, after the given predecessor; a probe
        // hashing into that arc lands on the first.
        long at = col.get("point").asLong();
        List<String> tied = new ArrayList<>();
        int firstTied = -1;
        for (int i = 0; i < points.size(); i++) {
          if (points.get(i).position() == at) {
            firstTied = firstTied < 0 ? i : firstTied;
            tied.add(points.get(i).id());
          }
        }
        List<String> want = new ArrayList<>();
        col.get("addrs_in_sorted_order").forEach(a -> want.add(a.asText()));
        assertEquals(want, tied, name + " tie at " + at);
        assertTrue(firstTied >= 1, name + " tie has a predecessor");
        long predecessor = col.get("predecessor_point").asLong();
        assertEquals(predecessor, points.get(firstTied - 1).position(), name);
        long h = p.keyHash(VectorFiles.utf8(col.get("probe_key").asText()));
        assertTrue(h > predecessor && h <= at, name + " probe inside the arc");
        assertEquals(col.get("probe_addr").asText(), p.owner(col.get("probe_key").asText()));
      }
      Set<String> looked = new java.util.HashSet<>();
      for (JsonNode l : c.get("lookups")) {
        String key = l.get("key").asText();
        looked.add(key);
        assertEquals(l.get("hash").asLong(), p.keyHash(VectorFiles.utf8(key)), name + " " + key);
        assertEquals(l.get("addr").asText(), p.owner(key), name + " " + key);
      }
      long last = c.get("last_point").asLong();
      for (JsonNode k : c.get("wrap_keys")) {
        // Past the last point: wraps to the owner of the first.
        String key = k.asText();
        assertTrue(looked.contains(key), name + " wrap key looked up");
        assertTrue(p.keyHash(VectorFiles.utf8(key)) > last, name + " wrap key past the last point");
        assertEquals(points.get(0).id(), p.owner(key), name + " wrap key " + key);
      }
      for (JsonNode k : c.get("probe_keys")) {
        assertTrue(looked.contains(k.asText()), name + " probe key looked up");
      }
    }
  }

  static void envoyMaglev(JsonNode file) {
    JsonNode cases = file.get("cases");
    assertEquals(6, cases.size(), "cases (the Rust test expects 6)");
    for (JsonNode c : cases) {
      String name = c.get("name").asText();
      RingConfig config =
          RingConfig.builder(Algorithm.MAGLEV).tableSize(c.get("table_size").asInt()).build();
      List<Node> nodes = new ArrayList<>();
      JsonNode hosts = c.get("hosts");
      hosts.forEach(
          h -> nodes.add(Node.of(h.get("hashed").asText()).withWeight(h.get("weight").asInt())));
      Placement p = Placement.build(config, nodes);
      // Envoy's indices are positions in hosts as listed: map them to ids.
      List<String> want = new ArrayList<>();
      c.get("expected_table").forEach(i -> want.add(hosts.get(i.asInt()).get("hashed").asText()));
      assertEquals(want, p.maglevTable(), name);
    }
  }

  static void jump(JsonNode file) {
    JsonNode cases = file.get("cases");
    assertTrue(cases.size() >= 100, "the Rust test expects at least 100 cases");
    boolean found = false;
    for (JsonNode c : cases) {
      long key = Long.parseUnsignedLong(c.get("key").asText()); // a u64 as a decimal string
      int buckets = c.get("buckets").asInt();
      int expected = c.get("expected").asInt();
      assertEquals(expected, Jump.hash(key, buckets), "jump(" + key + ", " + buckets + ")");
      found = found || (key == 256 && buckets == 1024 && expected == 520);
    }
    assertTrue(found, "jump(256, 1024) = 520 is missing");
  }
}
