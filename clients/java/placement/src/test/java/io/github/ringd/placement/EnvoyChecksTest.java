package io.github.ringd.placement;

import static io.github.ringd.placement.ProxyFixtures.endpoint;
import static io.github.ringd.placement.ProxyFixtures.keys;
import static io.github.ringd.placement.ProxyFixtures.refusal;
import static io.github.ringd.placement.ProxyFixtures.utf8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * envoy_ring_hash (spec 5.10.4 and 9.1): the addresses an xDS endpoint can have, the order of the
 * checks, and decoding an encoding.
 */
class EnvoyChecksTest {
  /**
   * An address is an xDS endpoint's when it reads back as Rust's SocketAddr writes it (which is
   * Envoy's spelling). The verdicts are Rust's, from parsing each and comparing its Display.
   */
  @Test
  void addresses() {
    Map<String, Boolean> verdicts = new LinkedHashMap<>();
    for (String ok :
        List.of(
            "10.0.0.1:8080",
            "1.2.3.4:65535",
            "[2001:db8::1]:8080",
            "[::1]:80",
            "[::]:80",
            "[::ffff:1.2.3.4]:80",
            "[::ffff:0.0.0.0]:80",
            "[::ffff:255.255.255.255]:1",
            "[::102:304]:80",
            "[1:0:0:1::1]:80",
            "[1::]:80",
            "[::2:0:0]:80",
            "[0:0:1::]:80",
            "[0:1:2:3:4:5:6:7]:80",
            "[2001:db8:0:1:1:1:1:1]:80")) {
      verdicts.put(ok, true);
    }
    for (String bad :
        List.of(
            "[::ffff:102:304]:80", // Rust writes ::ffff:1.2.3.4
            "[::1.2.3.4]:80", // Rust writes ::102:304
            "[::0.0.0.1]:80",
            "[::ffff:0:0]:80",
            "[1:0:0:1:0:0:0:1]:80", // the longer run of zeros is compressed
            "[1::1:0:0:0:1]:80",
            "[2001:db8::1:1:1:1:1]:80", // a single zero is not
            "[0:0:0:0:0:0:0:1]:80",
            "[1:0::]:80",
            "[::0:1:2:3:4:5:6]:80",
            "[2001:DB8::1]:80", // lowercase
            "[fe80::1%1]:80", // no zone
            "[fe80::1%eth0]:80",
            "[::ffff:1.2.3.4%1]:80",
            "010.0.0.1:80",
            "1.2.3.4:080",
            "1.2.3.4:0",
            "1.2.3.4:65536",
            "1.2.3.4",
            "[1.2.3.4]:80",
            "2001:db8::1:80",
            "cache.local:11211", // EDS resolves no host names
            "localhost:80",
            "[1:2:3:4:5:6:7:8:9]:80",
            "[1:2:3:4:5:6:7]:80",
            "[1::2::3]:80",
            "[12345::]:80",
            "[::1]",
            "[::1]80",
            "1.2.3.4.5:80",
            "256.0.0.1:80")) {
      verdicts.put(bad, false);
    }
    verdicts.forEach(
        (address, ok) ->
            assertEquals(
                ok,
                EnvoyEndpoints.addressProblem(address) == null,
                address + ": " + EnvoyEndpoints.addressProblem(address)));
    assertEquals("the port must be from 1 to 65535", EnvoyEndpoints.addressProblem("1.2.3.4:0"));
    assertEquals(
        "an xDS endpoint's address takes no IPv6 zone",
        EnvoyEndpoints.addressProblem("[fe80::1%1]:80"));
  }

  private static Node drained(Node n) {
    return n.withState(NodeState.DRAINING);
  }

  @Test
  void checksInOrder() {
    RingConfig envoy = RingConfig.defaults(Algorithm.ENVOY_RING_HASH);
    Node a = endpoint("a", 1, "10.0.0.1:80");
    Node b = endpoint("b", 1, "10.0.0.2:80");
    Node tiny = endpoint("t", 1, "10.0.0.9:80").withRamp(1);
    // With two nodes of weight 1,000,000 the total is above 2^32, and tiny's share of 2^31 comes
    // to 0.
    Node heavy = endpoint("z", 1_000_000, "10.0.0.8:80");
    Node heavy2 = endpoint("y", 1_000_000, "10.0.0.7:80");
    Map<String, Map.Entry<List<Node>, PlacementException.Reason>> cases = new LinkedHashMap<>();
    // Check 3a: missing addresses first, then every node's address.
    cases.put(
        "missing before a draining node's bad address",
        Map.entry(
            List.of(drained(endpoint("a", 1, "h:80")), Node.of("b")),
            PlacementException.Reason.MISSING_ADDRESS));
    cases.put(
        "a draining node's address",
        Map.entry(
            List.of(a, drained(endpoint("c", 1, "cache:80"))),
            PlacementException.Reason.ADDRESS_NOT_SERVER));
    cases.put(
        "a bad address before a shared label",
        Map.entry(
            List.of(a, endpoint("c", 1, "[::1.2.3.4]:80").withHashKey("a")),
            PlacementException.Reason.ADDRESS_NOT_SERVER));
    cases.put(
        "a shared label before a shared address",
        Map.entry(
            List.of(a, endpoint("c", 1, "10.0.0.1:80").withHashKey("a")),
            PlacementException.Reason.ENDPOINT_KEY_TAKEN));
    cases.put(
        "a shared address before a share too small",
        Map.entry(
            List.of(a, endpoint("c", 1, "10.0.0.1:80"), tiny, heavy, heavy2),
            PlacementException.Reason.DUPLICATE_ADDRESS));
    cases.put(
        "a share too small",
        Map.entry(
            List.of(a, tiny, heavy, heavy2), PlacementException.Reason.WEIGHT_SHARE_TOO_SMALL));
    cases.forEach(
        (name, c) -> assertEquals(c.getValue(), refusal(envoy, c.getKey()).reason(), name));
    // The messages name the nodes: the first shared label's first two nodes by id.
    assertEquals(
        "EndpointKeyTaken: nodes a and c would both be hashed as \"a\" by Envoy and gRPC (an"
            + " endpoint is hashed by its hash_key, else its id): give one a distinct hash_key",
        refusal(envoy, List.of(endpoint("c", 1, "10.0.0.3:80").withHashKey("a"), a)).getMessage());
    assertEquals(
        "DuplicateAddress: nodes a and c share the address \"10.0.0.1:80\", and gRPC keys"
            + " endpoints by address",
        refusal(envoy, List.of(endpoint("c", 1, "10.0.0.1:80"), b, a)).getMessage());
    // Only active nodes must differ: a draining node may keep the label and the address of the
    // node replacing it, and needs no address.
    Node replacement = endpoint("replacement", 1, "10.0.0.1:80").withHashKey("a");
    Placement p =
        Placement.build(envoy, List.of(drained(a), replacement, b, drained(Node.of("gone"))));
    Placement q = Placement.build(envoy, List.of(a, b));
    for (byte[] k : keys(200)) {
      assertEquals(
          "a".equals(q.owner(k)),
          "replacement".equals(p.owner(k)),
          "key " + new String(k, java.nio.charset.StandardCharsets.UTF_8));
    }
    // Ramps are taken (2.4 check 4 does not name envoy_ring_hash).
    assertNotNull(Placement.build(envoy, List.of(a, b.withRamp(19_661))));
  }

  private static String sha256(byte[] b) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
  }

  /** Decodes b against its own fingerprint, so only the decoder's own checks can refuse it. */
  private static Placement decodeOwn(byte[] b) throws Exception {
    return Placement.decode(b, sha256(b));
  }

  private static void assertInvalidEncoding(String name, byte[] b) throws Exception {
    String fp = sha256(b);
    PlacementException e =
        assertThrows(PlacementException.class, () -> Placement.decode(b, fp), name);
    assertEquals(PlacementException.Reason.INVALID_ENCODING, e.reason(), name + ": " + e);
  }

  /** The i-th of the last four 12-byte entries of an encoding, as its offset. */
  private static int entry(byte[] b, int i) {
    return b.length - (4 - i) * 12;
  }

  /**
   * A thin client reads the ring from the encoding alone, which carries no label and no address,
   * and refuses entries out of position order or a hash envoy_ring_hash does not take.
   */
  @Test
  void decode() throws Exception {
    Placement p = VectorFiles.build(VectorFiles.read("envoy_ring_hash-two-hosts.json"));
    byte[] good = p.encode();
    Placement q = decodeOwn(good);
    assertEquals(p.points(), q.points());
    assertNull(q.nodes().get(0).address());
    assertEquals(Long.parseUnsignedLong("15758211584279190174"), q.keyHash(utf8("key-1")));
    Map<String, UnaryOperator<byte[]>> changes = new LinkedHashMap<>();
    changes.put(
        "entries swapped",
        b -> {
          byte[] e0 = java.util.Arrays.copyOfRange(b, entry(b, 0), entry(b, 0) + 12);
          System.arraycopy(b, entry(b, 1), b, entry(b, 0), 12);
          System.arraycopy(e0, 0, b, entry(b, 1), 12);
          return b;
        });
    changes.put(
        "an entry past the nodes",
        b -> {
          b[entry(b, 2) + 8] = 2;
          return b;
        });
    changes.put(
        "xxh3",
        b -> {
          b[9] = (byte) HashFunction.XXH3.code();
          return b;
        });
    changes.put(
        "one entry too many",
        b -> {
          b[b.length - 4 * 12 - 4] = 5;
          return b;
        });
    for (Map.Entry<String, UnaryOperator<byte[]>> c : changes.entrySet()) {
      assertInvalidEncoding(c.getKey(), c.getValue().apply(good.clone()));
    }
    // Equal positions may name their nodes in either order (label order, which the encoding
    // cannot show), where ring's must ascend by index.
    byte[] tied = good.clone();
    System.arraycopy(tied, entry(tied, 0), tied, entry(tied, 1), 8);
    tied[entry(tied, 0) + 8] = 1;
    tied[entry(tied, 1) + 8] = 0;
    Placement r = decodeOwn(tied);
    List<Point> pts = r.points();
    assertEquals(pts.get(0).position(), pts.get(1).position());
    assertEquals("e-81", pts.get(0).id());
    assertEquals("e-80", pts.get(1).id());
    assertEquals(1, r.layout().ownerIndex(pts.get(0).position()));
    byte[] asRing = tied.clone();
    asRing[8] = (byte) Algorithm.RING.code();
    asRing[9] = (byte) HashFunction.XXH3.code();
    assertInvalidEncoding("as a ring", asRing);
  }
}
