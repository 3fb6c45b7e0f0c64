package io.github.ringd.placement;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The worked examples of docs/placement-spec.md (sections 5, 6, 9, 10). */
class SpecExamplesTest {
  static Node node(String id, int weight) {
    return Node.of(id).withWeight(weight);
  }

  /** The spec's a w1, b w1, c w2 under config c. */
  static Placement abc(RingConfig c) {
    return Placement.build(c, List.of(node("a", 1), node("b", 1), node("c", 2)));
  }

  static String list(Placement p, String key, int r) {
    return String.join(",", p.preferenceList(key.getBytes(StandardCharsets.UTF_8), r));
  }

  static List<String> units(Placement p) {
    List<String> out = new ArrayList<>();
    p.ownership().nodes().forEach(n -> out.add(n.units().toString()));
    return out;
  }

  static String hex(byte[] b) {
    return HexFormat.of().formatHex(b);
  }

  @Test
  void ringPointsAndRamps() {
    byte[] in = HexFormat.of().parseHex("060000006e6f64652d6100000000"); // le32(6) "node-a" le32(0)
    assertEquals(0xf2fffe2fa1fb92f0L, Hashes.hash64(HashFunction.XXH3, in));
    in[in.length - 4] = 1;
    assertEquals(0xddeae1a3581b2e6bL, Hashes.hash64(HashFunction.XXH3, in));
    assertEquals(97, Ring.pointCount(160, node("n", 2).withRamp(19_661)));
    assertEquals(1, Ring.pointCount(160, node("n", 1).withRamp(1)), "at least one point");
  }

  @Test
  void maglevExample() {
    Map<String, long[]> perms =
        Map.of("a", new long[] {6, 1}, "b", new long[] {4, 3}, "c", new long[] {1, 2});
    perms.forEach(
        (label, want) -> {
          byte[] b = label.getBytes(StandardCharsets.UTF_8);
          assertEquals(want[0], Long.remainderUnsigned(Hashes.xxh64(b, 0), 7), label + " offset");
          assertEquals(want[1], Long.remainderUnsigned(Hashes.xxh64(b, 1), 6) + 1, label + " skip");
        });
    Placement p = abc(RingConfig.builder(Algorithm.MAGLEV).tableSize(7).build());
    assertEquals("accbbca", String.join("", p.maglevTable()));
    assertEquals("c", p.owner("hello"));
    assertEquals("c,b,a", list(p, "hello", 3));
    assertEquals(List.of("2", "2", "3"), units(p));
  }

  @Test
  void jumpExamples() {
    assertEquals(520, Jump.hash(256, 1024));
    assertEquals(87, Jump.hash(0xdeadbeefL, 100));
    assertEquals(0, Jump.hash(0, 1));
    Placement p = abc(RingConfig.defaults(Algorithm.JUMP));
    assertEquals(
        List.of(new BucketRun("a", 1), new BucketRun("b", 1), new BucketRun("c", 2)),
        p.bucketOrder());
    assertEquals("a", p.owner("hello"));
    long rehashed = 0x9555e8555c62dcfdL; // hello's xxh3
    rehashed += 0x9E3779B97F4A7C15L; // wraps, as 5.4.2's addition does
    assertEquals(0x56f1a10a2abd675bL, Hashes.fmix64(rehashed));
    Placement q =
        Placement.build(
            RingConfig.defaults(Algorithm.JUMP),
            List.of(node("b", 1), node("c", 2)),
            Stored.NONE.withBuckets(
                List.of(new BucketRun(null, 1), new BucketRun("b", 1), new BucketRun("c", 2))));
    assertEquals("c", q.owner("hello"), "after a's removal");
    // 9.3's encodings.
    String want =
        "52494e4744504c01"
            + "04010000"
            + "03000000"
            + "03000000"
            + "016100"
            + "01000000"
            + "016200"
            + "01000000"
            + "016300"
            + "02000000"
            + "04000000"
            + "00000000"
            + "01000000"
            + "02000000"
            + "02000000";
    assertEquals(want, hex(p.encode()));
    assertEquals(
        "b40c22a1728f6070c5a60ae894827c7a3d789974aed4564bb24aed2e2d5e4795", p.fingerprint());
    assertTrue(hex(q.encode()).endsWith("04000000ffffffff000000000100000001000000"));
    assertEquals(
        "bdc6f1f9eb6cb3e8c4e18953d80e4f51d42413163dfcb803ac74b21a40e428a1", q.fingerprint());
  }

  @Test
  void rendezvousExamples() {
    assertEquals(0, Rendezvous.log2Q32(0));
    assertEquals(1L << 32, Rendezvous.log2Q32(1));
    assertEquals(0x195c01a39L, Rendezvous.log2Q32(2));
    assertEquals(0x35269e12fL, Rendezvous.log2Q32(9));
    assertEquals(0x3f00000000L, Rendezvous.log2Q32((1L << 63) - 1));
    assertEquals(0x3fffffffffL, Rendezvous.log2Q32(-2L), "L(2^64 − 1)");
    assertEquals(0x4000000000L, Rendezvous.log2Q32(-1L), "L(2^64)");
    long nhA = Hashes.hash64(HashFunction.XXH3, "a".getBytes(StandardCharsets.UTF_8));
    long nhB = Hashes.hash64(HashFunction.XXH3, "b".getBytes(StandardCharsets.UTF_8));
    assertEquals(0xe6c632b61e964e1fL, nhA);
    assertEquals(0x575a0b1c44d8843fL, nhB);
    long k = 0x9555e8555c62dcfdL;
    assertEquals(0x26084b71cf35724eL, Hashes.fmix64(k ^ nhA));
    assertEquals(0xa350d25491afd8d0L, Hashes.fmix64(k ^ nhB));
    assertEquals(11814780198L, Rendezvous.cost(0x26084b71cf35724eL));
    assertEquals(2785201421L, Rendezvous.cost(0xa350d25491afd8d0L));
    Placement two =
        Placement.build(
            RingConfig.defaults(Algorithm.RENDEZVOUS), List.of(node("a", 1), node("b", 1)));
    assertEquals("b", two.owner("hello"));
    Placement p = abc(RingConfig.defaults(Algorithm.RENDEZVOUS));
    Map.of("hello", "c,b,a", "", "a,c,b", "user:42", "c,a,b", "key-7", "a,b,c")
        .forEach((key, want) -> assertEquals(want, list(p, key, 3), key));
    assertEquals(List.of("1", "1", "2"), units(p));
    assertEquals("4", p.ownership().totalUnits().toString());
    Placement empty = Placement.build(RingConfig.defaults(Algorithm.RENDEZVOUS), List.of());
    assertEquals("52494e4744504c01050100000300000000000000", hex(empty.encode()));
    assertNull(empty.owner("x"));
    assertEquals(-1, empty.ownerIndex("x".getBytes(StandardCharsets.UTF_8)));
    assertEquals(List.of(), empty.preferenceList("x".getBytes(StandardCharsets.UTF_8), 3));
    Ownership o = empty.ownership();
    assertEquals("weights", o.basis());
    assertEquals(0, o.totalUnits().signum());
    assertEquals(0, o.nodes().size());
    assertEquals(0.0, o.maxOverMean());
  }

  @Test
  void preferenceSelectionExamples() {
    // 6.2: a(z1), d(z1), b(z2) with R = 3, two zones → [a, b, d].
    assertArrayEquals(
        new int[] {0, 1, 2}, Preference.select(walkOf(0, 2, 1), 0, 3, 3, new int[] {0, 1, 0}, 2));
    // Table rows [a,b], [c,a], [b,d] give [a,b,c,d] for R = 4.
    assertArrayEquals(
        new int[] {0, 1, 2, 3}, Preference.select(walkOf(0, 1, 2, 0, 1, 3), 0, 4, 4, null, 0));
  }

  /** A layout whose successor order is order, whatever the key. */
  private static Layout walkOf(int... order) {
    return new Layout() {
      @Override
      public int ownerIndex(long h) {
        return order[0];
      }

      @Override
      public void walk(long h, java.util.function.IntPredicate visit) {
        for (int n : order) {
          if (!visit.test(n)) {
            return;
          }
        }
      }

      @Override
      public Units units(int nodes) {
        return new Units(nodes);
      }

      @Override
      public void appendBody(ByteSink out) {}

      @Override
      public String basis() {
        return "test";
      }
    };
  }

  @Test
  void workedExampleRingWithZones() {
    RingConfig c =
        RingConfig.builder(Algorithm.RING)
            .vnodesPerWeight(2)
            .replicationFactor(2)
            .zoneAware(true)
            .build();
    Node b = node("b", 2).withZone("z2").withHashKey("b-old");
    Node a = node("a", 1).withZone("z1");
    Node cc = node("c", 1).withZone("z1").withState(NodeState.DRAINING);
    Node d = node("d", 1).withZone("z1");
    Placement p = Placement.build(c, List.of(b, a, cc, d));
    List<Point> want =
        List.of(
            new Point(0x033fb1030c27875cL, "b"),
            new Point(0x332d8fde124825dfL, "a"),
            new Point(0x8eba5b899f433b93L, "b"),
            new Point(0x93b35c5ec6ea75e5L, "d"),
            new Point(0x98123f6cec13a4c3L, "a"),
            new Point(0xa6e2e7cd96b9ab4cL, "d"),
            new Point(0xb4ce337a8a340004L, "b"),
            new Point(0xdd00318079a551cbL, "b"));
    assertEquals(want, p.points());
    Map<String, Object[]> keys =
        Map.of(
            "hello", new Object[] {0x9555e8555c62dcfdL, "a,b,d"},
            "", new Object[] {0x2d06800538d394c2L, "a,b,d"},
            "user:42", new Object[] {0x9fc1e605fa7174aaL, "d,b,a"},
            "key-7", new Object[] {0xe683dd62c3f8ac4fL, "b,a,d"});
    keys.forEach(
        (key, w) -> {
          assertEquals((long) w[0], p.keyHash(key.getBytes(StandardCharsets.UTF_8)), key);
          String l = list(p, key, 3);
          assertEquals(w[1], l, key);
          assertEquals(l.substring(0, 1), p.owner(key), key);
        });
    assertEquals(
        List.of("3768600195400060257", "13252287072643379652", "1425856805666111707"), units(p));
    assertEquals("18446744073709551616", p.ownership().totalUnits().toString());
    assertEquals(
        "b19d4a0a0eddfd52d0b31587a9fbe503d15dd1a56221bce0739a4772d583811f", p.fingerprint());
    String prefix =
        "52494e4744504c01"
            + "01010100"
            + "02000000"
            + "03000000"
            + "0161"
            + "027a31"
            + "01000000"
            + "0162"
            + "027a32"
            + "02000000"
            + "0164"
            + "027a31"
            + "01000000"
            + "08000000"
            + "5c87270c03b13f03"
            + "01000000";
    assertEquals(prefix, hex(p.encode()).substring(0, prefix.length()));
  }

  @Test
  void ketamaExample() {
    Placement p =
        Placement.build(RingConfig.defaults(Algorithm.KETAMA), List.of(node("a", 1), node("b", 1)));
    List<Point> pts = p.points();
    assertEquals(320, pts.size());
    assertEquals(
        List.of(new Point(3747649, "a"), new Point(35374473, "a"), new Point(61840307, "a")),
        pts.subList(0, 3));
    assertEquals(708854109, p.keyHash("hello".getBytes(StandardCharsets.UTF_8)));
    assertEquals("a", p.owner("hello"));
    assertEquals(3649838548L, p.keyHash(new byte[0]));
    assertEquals("b", p.owner(""));
  }
}
