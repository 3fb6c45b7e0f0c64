package io.github.ringd.placement;

import static io.github.ringd.placement.ProxyFixtures.refusal;
import static io.github.ringd.placement.ProxyFixtures.utf8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * HAProxy's {@code hash-type consistent} (spec 5.8): points, the nearest-point rule, server ids.
 */
class HaproxyLayoutTest {
  private static final RingConfig HAPROXY = RingConfig.defaults(Algorithm.HAPROXY);

  @Test
  void pointKeys() {
    // 5.8.1: id 1, k = 0 → full_hash(4096) = 0x49c2008b; weight 1 gives 16 points.
    Placement p = Placement.build(HAPROXY, List.of(Node.of("a")));
    assertEquals(16, p.points().size());
    assertTrue(p.points().contains(new Point(0x49c2008bL, "a")));
    assertEquals(Map.of("a", 1L), p.serverIds());
    // The default key hash is sdbm with avalanche (3.6).
    assertEquals(0x7ae088a6L, p.keyHash(utf8("hello")));
    Placement plain =
        Placement.build(HAPROXY.toBuilder().avalanche(false).build(), List.of(Node.of("a")));
    assertEquals(0x28d19932L, plain.keyHash(utf8("hello")));
    Placement wt6 =
        Placement.build(
            HAPROXY.toBuilder().hash(HashFunction.WT6).avalanche(false).build(),
            List.of(Node.of("a")));
    assertEquals(0xd2e6e6b7L, wt6.keyHash(utf8("hello")));
  }

  /**
   * The index of the point nearest h by brute force: the smaller circular distance, the point
   * before h on a tie.
   */
  private static int nearest(List<Point> points, long h) {
    int best = -1;
    long bestDistance = Long.MAX_VALUE;
    for (int j = 0; j < points.size(); j++) {
      long dp = (h - points.get(j).position()) & 0xffffffffL; // the point is dp before h
      long dn = (points.get(j).position() - h) & 0xffffffffL; // or dn after it
      // Doubled, with the one after h a half unit further: a tie goes to the point before.
      long d = Math.min(2 * dp, 2 * dn + 1);
      if (d < bestDistance) {
        bestDistance = d;
        best = j;
      }
    }
    return best;
  }

  @Test
  void ownerIsTheNearestPoint() {
    SplittableRandom rng = new SplittableRandom(58);
    for (int c = 0; c < 40; c++) {
      List<Node> nodes = new ArrayList<>();
      int count = 1 + rng.nextInt(6);
      for (int i = 0; i < count; i++) {
        nodes.add(Node.of("s-" + i).withWeight(1 + rng.nextInt(4)));
      }
      Placement p = Placement.build(HAPROXY, nodes);
      List<Point> points = p.points();
      Layout l = p.layout();
      List<Long> probes = new ArrayList<>();
      for (int i = 0; i < 300; i++) {
        probes.add(rng.nextLong() & 0xffffffffL);
      }
      for (int j = 0; j < points.size(); j++) {
        long a = points.get(j).position();
        long b = points.get((j + 1) % points.size()).position();
        long mid = (a + (((b - a - 1) & 0xffffffffL) + 1) / 2) & 0xffffffffL;
        for (long d = -1; d <= 1; d++) {
          probes.add((a + d) & 0xffffffffL);
          probes.add((mid + d) & 0xffffffffL);
        }
      }
      for (long h : probes) {
        assertEquals(
            points.get(nearest(points, h)).id(),
            p.nodeId(l.ownerIndex(h)),
            "seed 58, case " + c + ", hash " + h);
      }
    }
  }

  @Test
  void preferenceListWalksOnFromTheChosenPoint() {
    Placement p =
        Placement.build(HAPROXY, List.of(Node.of("a"), Node.of("b"), Node.of("c"), Node.of("d")));
    List<Point> points = p.points();
    for (byte[] k : ProxyFixtures.keys(200)) {
      long h = p.keyHash(k);
      int chosen = nearest(points, h);
      List<String> want = new ArrayList<>();
      for (int s = 0; s < points.size() && want.size() < 3; s++) {
        String id = points.get((chosen + s) % points.size()).id();
        if (!want.contains(id)) {
          want.add(id);
        }
      }
      assertEquals(want, p.preferenceList(k, 3));
    }
  }

  @Test
  void serverIds() {
    List<Node> nodes = List.of(Node.of("a"), Node.of("b"));
    Map<String, Map<String, Integer>> bad = new LinkedHashMap<>();
    bad.put("missing", Map.of("a", 1));
    bad.put("shared", Map.of("a", 1, "b", 1));
    bad.put("zero", Map.of("a", 0, "b", 1));
    bad.put("too big", Map.of("a", 1, "b", HaproxyLayout.MAX_SERVER_ID + 1));
    bad.forEach(
        (name, ids) -> {
          PlacementException e =
              assertThrows(
                  PlacementException.class,
                  () -> Placement.build(HAPROXY, nodes, Stored.NONE.withServerIds(ids)),
                  name);
          assertEquals(PlacementException.Reason.INVALID_SERVER_IDS, e.reason(), name);
        });
    // Without stored ids every node, in any state, is numbered from 1 in id order.
    Map<String, Integer> initial =
        HaproxyLayout.initialServerIds(
            List.of(Node.of("c"), Node.of("a").withState(NodeState.DRAINING), Node.of("b")));
    assertEquals(Map.of("a", 1, "b", 2, "c", 3), initial);
    Placement p =
        Placement.build(
            HAPROXY,
            List.of(Node.of("c"), Node.of("a").withState(NodeState.DRAINING), Node.of("b")));
    assertEquals(Map.of("b", 2L, "c", 3L), p.serverIds());
    // A node's points depend only on its own id and weight: the same id, the same points.
    Map<String, Integer> ids = new HashMap<>();
    ids.put("x", 7);
    Placement x = Placement.build(HAPROXY, List.of(Node.of("x")), Stored.NONE.withServerIds(ids));
    Placement y =
        Placement.build(
            HAPROXY,
            List.of(Node.of("y").withHashKey("x")),
            Stored.NONE.withServerIds(Map.of("y", 7)));
    assertEquals(
        x.points().stream().map(Point::position).toList(),
        y.points().stream().map(Point::position).toList());
  }

  @Test
  void weightsUpTo256() {
    assertEquals(
        PlacementException.Reason.WEIGHT_TOO_HIGH_FOR_PROXY,
        refusal(HAPROXY, List.of(Node.of("a").withWeight(257))).reason());
    assertEquals(
        "WeightTooHighForProxy: node a has weight 257; haproxy takes 1..=256",
        refusal(HAPROXY, List.of(Node.of("b"), Node.of("a").withWeight(257))).getMessage());
    assertEquals(
        4096, Placement.build(HAPROXY, List.of(Node.of("a").withWeight(256))).points().size());
    assertEquals(
        PlacementException.Reason.RAMP_NOT_SUPPORTED,
        refusal(HAPROXY, List.of(Node.of("a").withRamp(5))).reason());
  }

  private static String sha256(byte[] b) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
  }

  @Test
  void decodeKeepsTheAvalancheByteAndIds() throws Exception {
    for (String name : List.of("haproxy-removals", "haproxy-djb2", "haproxy-wt6-avalanche")) {
      Placement p = VectorFiles.build(VectorFiles.read(name + ".json"));
      Placement q = Placement.decode(p.encode(), p.fingerprint());
      assertEquals(p.serverIds(), q.serverIds(), name);
      for (byte[] k : ProxyFixtures.keys(200)) {
        assertEquals(p.keyHash(k), q.keyHash(k), name);
        assertEquals(p.owner(k), q.owner(k), name);
      }
    }
    // The avalanche byte is 0 or 1; the points must be what the ids give.
    Placement p = Placement.build(HAPROXY, List.of(Node.of("a"), Node.of("b")));
    byte[] enc = p.encode();
    int body = enc.length - (1 + 8 + 4 + 8 * 32);
    assertEquals(1, enc[body]);
    byte[] two = enc.clone();
    two[body] = 2;
    byte[] otherId = enc.clone();
    otherId[body + 1] = 9;
    byte[] sameIds = enc.clone();
    sameIds[body + 5] = 1;
    for (byte[] b : List.of(two, otherId, sameIds)) {
      String fp = sha256(b);
      PlacementException e = assertThrows(PlacementException.class, () -> Placement.decode(b, fp));
      assertEquals(PlacementException.Reason.INVALID_ENCODING, e.reason());
    }
    assertArrayEquals(new int[] {1, 2}, p.layout().serverIds());
  }
}
