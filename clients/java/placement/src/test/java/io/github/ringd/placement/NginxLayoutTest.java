package io.github.ringd.placement;

import static io.github.ringd.placement.ProxyFixtures.endpoint;
import static io.github.ringd.placement.ProxyFixtures.refusal;
import static io.github.ringd.placement.ProxyFixtures.utf8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** nginx's {@code hash $key consistent} (spec 5.7): points, addresses, equal points, decoding. */
class NginxLayoutTest {
  private static final RingConfig NGINX = RingConfig.defaults(Algorithm.NGINX);

  @Test
  void pointsChainCrc32() {
    // 5.7: 10.0.0.1:11211 at weight 1 has q_0 = 1016082558 and q_1 = 3442865372; at weight 3 it
    // has 480 points.
    Placement p = Placement.build(NGINX, List.of(endpoint("n", 3, "10.0.0.1:11211")));
    List<Point> points = p.points();
    assertEquals(480, points.size());
    assertTrue(points.contains(new Point(1016082558L, "n")), "q_0");
    assertTrue(points.contains(new Point(3442865372L, "n")), "q_1");
    // Chaining is CRC32(host ‖ 00 ‖ port ‖ LE32(previous point)), fed at once.
    byte[] q0 = utf8("10.0.0.1\00011211\0\0\0\0");
    assertEquals(1016082558, Crc32.of(q0, 0, q0.length));
    // The key hash is CRC32(key) (section 4).
    assertEquals(907060870L, p.keyHash(utf8("hello")));
    assertEquals(0L, p.keyHash(new byte[0]));
    assertEquals("arcs", p.ownership().basis());
    assertEquals("4294967296", p.ownership().totalUnits().toString());
  }

  @Test
  void equalPointsKeepTheLowestIndex() {
    // The nginx-colliding vector's pair: both addresses have a point at 326,743,374, of which only
    // the lower index's (original, before replacement) stays.
    Placement p =
        Placement.build(
            NGINX,
            List.of(
                endpoint("replacement", 1, "10.0.1.249:11211"),
                endpoint("original", 1, "10.0.1.71:11211")));
    long at = 326_743_374L;
    List<Point> tied = p.points().stream().filter(pt -> pt.position() == at).toList();
    assertEquals(List.of(new Point(at, "original")), tied);
    assertEquals(319, p.points().size(), "one of the 320 points merged");
    List<Point> points = p.points();
    for (int j = 1; j < points.size(); j++) {
      assertTrue(
          Long.compareUnsigned(points.get(j - 1).position(), points.get(j).position()) < 0,
          "points ascend strictly");
    }
  }

  @Test
  void addresses() {
    Map<String, Boolean> verdicts = new LinkedHashMap<>();
    for (String ok :
        List.of("10.0.0.1:11211", "cache-1.local:1", "h_x:65535", "[::1]:80", "[2001:DB8::1]:80")) {
      verdicts.put(ok, true);
    }
    for (String bad :
        List.of(
            "10.0.0.1",
            "10.0.0.1:",
            ":80",
            "h:0",
            "h:65536",
            "h:000080",
            "h:8a",
            "unix:80",
            "UNIX:80",
            "[::1",
            "[]:80",
            "[g::1]:80",
            "a;b:80",
            "a/b:80")) {
      verdicts.put(bad, false);
    }
    verdicts.forEach(
        (a, ok) ->
            assertEquals(
                ok,
                NginxLayout.addressProblem(a) == null,
                a + ": " + NginxLayout.addressProblem(a)));
    assertEquals("unix sockets are not supported", NginxLayout.addressProblem("unix:80"));
  }

  @Test
  void checksInOrder() {
    assertEquals(
        PlacementException.Reason.MISSING_ADDRESS, refusal(NGINX, List.of(Node.of("a"))).reason());
    assertEquals(
        PlacementException.Reason.ADDRESS_NOT_SERVER,
        refusal(NGINX, List.of(endpoint("a", 1, "unix:80"))).reason());
    assertEquals(
        PlacementException.Reason.ADDRESS_NOT_SERVER,
        refusal(NGINX, List.of(endpoint("a", 1, "h:0"))).reason());
    // The smallest shared address is named, with its first two nodes by id.
    PlacementException shared =
        refusal(
            NGINX,
            List.of(
                endpoint("d", 1, "h:2"),
                endpoint("c", 1, "h:2"),
                endpoint("b", 1, "h:1"),
                endpoint("a", 1, "h:1"),
                endpoint("e", 1, "h:1")));
    assertEquals("DuplicateAddress: nodes a and b share the address \"h:1\"", shared.getMessage());
    // A bad address is refused before a shared one; a draining node's address is not checked.
    assertEquals(
        PlacementException.Reason.ADDRESS_NOT_SERVER,
        refusal(
                NGINX,
                List.of(endpoint("a", 1, "h:1"), endpoint("b", 1, "h:1"), endpoint("c", 1, "x")))
            .reason());
    Placement.build(
        NGINX,
        List.of(endpoint("a", 1, "h:1"), endpoint("b", 1, "x").withState(NodeState.DRAINING)));
    // No ramp (check 4), and the cap of 160 × Σ weight (check 5).
    assertEquals(
        PlacementException.Reason.RAMP_NOT_SUPPORTED,
        refusal(NGINX, List.of(endpoint("a", 1, "h:1").withRamp(100))).reason());
    assertEquals(
        PlacementException.Reason.TOO_MANY_POINTS,
        refusal(NGINX, List.of(endpoint("a", 52_429, "h:1"))).reason());
  }

  private static String sha256(byte[] b) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
  }

  @Test
  void decodeNeedsStrictlyAscendingPoints() throws Exception {
    Placement p = VectorFiles.build(VectorFiles.read("nginx-weighted.json"));
    byte[] good = p.encode();
    Placement q = Placement.decode(good, p.fingerprint());
    assertEquals(p.points(), q.points());
    assertEquals(p.nodes().get(0).address(), q.nodes().get(0).address());
    for (byte[] k : ProxyFixtures.keys(100)) {
      assertEquals(p.owner(k), q.owner(k));
    }
    // Two equal positions (the first point copied onto the second) are refused, in either order.
    byte[] tied = good.clone();
    int count = (int) ByteReader.le32(good, good.length - 8 * p.points().size() - 4);
    assertEquals(p.points().size(), count);
    int first = good.length - 8 * count;
    System.arraycopy(tied, first, tied, first + 8, 4);
    String fp = sha256(tied);
    PlacementException e = assertThrows(PlacementException.class, () -> Placement.decode(tied, fp));
    assertEquals(PlacementException.Reason.INVALID_ENCODING, e.reason());
    assertNull(Placement.build(NGINX, List.of()).owner(utf8("x")));
  }
}
