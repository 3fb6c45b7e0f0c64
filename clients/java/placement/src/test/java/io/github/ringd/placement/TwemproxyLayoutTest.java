package io.github.ringd.placement;

import static io.github.ringd.placement.ProxyFixtures.endpoint;
import static io.github.ringd.placement.ProxyFixtures.refusal;
import static io.github.ringd.placement.ProxyFixtures.utf8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** nutcracker's {@code distribution: ketama} (spec 5.9): counts, names, the hash tag, decoding. */
class TwemproxyLayoutTest {
  private static final RingConfig TWEMPROXY = RingConfig.defaults(Algorithm.TWEMPROXY);

  private static List<Node> weighted(int... weights) {
    List<Node> nodes = new ArrayList<>();
    for (int i = 0; i < weights.length; i++) {
      nodes.add(endpoint("n-" + i, weights[i], "10.0.0." + i + ":11211"));
    }
    return nodes;
  }

  @Test
  void pointCounts() {
    // 5.9.1's examples: (1, 1, 1) → 160; (1, 3, 3) → 160; (2, 3, 2) → 212; (1, 3, 2) → 104.
    assertArrayEquals(new int[] {160}, TwemproxyLayout.pointCounts(weighted(1)));
    assertArrayEquals(new int[] {160, 160, 160}, TwemproxyLayout.pointCounts(weighted(1, 1, 1)));
    assertArrayEquals(new int[] {212, 104}, TwemproxyLayout.pointCounts(weighted(2, 1)));
    // 25 servers of weight 1: 156 each, where ketama gives 160.
    int[] ones = new int[25];
    java.util.Arrays.fill(ones, 1);
    int[] counts = TwemproxyLayout.pointCounts(weighted(ones));
    assertEquals(156, counts[0]);
    assertEquals(156 * 25, TwemproxyLayout.pointTotal(weighted(ones)));
    assertEquals(212 + 104, Placement.build(TWEMPROXY, weighted(2, 1)).points().size());
  }

  @Test
  void serverNames() {
    assertEquals("h", TwemproxyLayout.serverName(endpoint("a", 1, "h:11211")));
    assertEquals("h:11212", TwemproxyLayout.serverName(endpoint("a", 1, "h:11212")));
    assertEquals("s-05", TwemproxyLayout.serverName(endpoint("a", 1, "h:1").withHashKey("s-05")));
    assertNull(TwemproxyLayout.serverName(Node.of("a")));
    assertEquals("s-05", TwemproxyLayout.serverName(Node.of("a").withHashKey("s-05")));
    // Server order: shorter names first, then bytes.
    List<String> names = new ArrayList<>(List.of("bb", "a", "ab", "b", "aaa"));
    Collections.sort(names, TwemproxyLayout::compareServerNames);
    assertEquals(List.of("a", "b", "ab", "bb", "aaa"), names);
    // Points are MD5(name ‖ "-" ‖ k)'s four words, as ketama's.
    Placement p = Placement.build(TWEMPROXY, List.of(endpoint("a", 1, "h:11211")));
    byte[] d = new byte[16];
    byte[] in = utf8("h-0");
    Hashes.md5(in, 0, in.length, d);
    for (int w = 0; w < 4; w++) {
      assertTrue(p.points().contains(new Point(ByteReader.le32(d, 4 * w), "a")), "word " + w);
    }
  }

  @Test
  void checksInOrder() {
    Map<String, Map.Entry<List<Node>, PlacementException.Reason>> cases = new LinkedHashMap<>();
    cases.put(
        "no address", Map.entry(List.of(Node.of("a")), PlacementException.Reason.MISSING_ADDRESS));
    cases.put(
        "port 01",
        Map.entry(List.of(endpoint("a", 1, "h:01")), PlacementException.Reason.ADDRESS_NOT_SERVER));
    cases.put(
        "port 65536",
        Map.entry(
            List.of(endpoint("a", 1, "h:65536")), PlacementException.Reason.ADDRESS_NOT_SERVER));
    cases.put(
        "IPv6",
        Map.entry(
            List.of(endpoint("a", 1, "[::1]:80")), PlacementException.Reason.ADDRESS_NOT_SERVER));
    cases.put(
        "name",
        Map.entry(
            List.of(endpoint("a", 1, "h:1").withHashKey("a#b")),
            PlacementException.Reason.INVALID_SERVER_NAME));
    cases.put(
        "a draining node's address",
        Map.entry(
            List.of(endpoint("a", 1, "h:1"), endpoint("b", 1, "h:0").withState(NodeState.DRAINING)),
            PlacementException.Reason.ADDRESS_NOT_SERVER));
    cases.put(
        "a draining node's name",
        Map.entry(
            List.of(
                endpoint("a", 1, "h:1"),
                Node.of("b").withHashKey("x y").withState(NodeState.DRAINING)),
            PlacementException.Reason.INVALID_SERVER_NAME));
    cases.put(
        "taken",
        Map.entry(
            List.of(endpoint("a", 1, "h:11211"), endpoint("b", 1, "x:1").withHashKey("h")),
            PlacementException.Reason.SERVER_NAME_TAKEN));
    cases.put(
        "a ramp",
        Map.entry(
            List.of(endpoint("a", 1, "h:1").withRamp(9)),
            PlacementException.Reason.RAMP_NOT_SUPPORTED));
    cases.forEach(
        (name, c) -> assertEquals(c.getValue(), refusal(TWEMPROXY, c.getKey()).reason(), name));
    assertEquals(
        "ServerNameTaken: a and b would both be the twemproxy server \"h\": give one a distinct"
            + " hash_key",
        refusal(
                TWEMPROXY,
                List.of(endpoint("a", 1, "h:11211"), endpoint("b", 1, "x:1").withHashKey("h")))
            .getMessage());
    assertEquals(
        "ServerNameTaken: a and b would both be the twemproxy server \"h:2\": give one a distinct"
            + " address",
        refusal(TWEMPROXY, List.of(endpoint("b", 1, "h:2"), endpoint("a", 1, "h:2"))).getMessage());
    // A draining node may hold the name of the node replacing it.
    Placement.build(
        TWEMPROXY,
        List.of(
            endpoint("old", 1, "h:11211").withState(NodeState.DRAINING),
            endpoint("new", 1, "k:1").withHashKey("h")));
  }

  @Test
  void hashTag() {
    byte[] braces = utf8("{}");
    Map<String, String> cases = new LinkedHashMap<>();
    cases.put("user:{42}:cart", "42");
    cases.put("a{b{c}d}", "b{c");
    cases.put("a}b{c}", "c");
    cases.put("a{}b", "a{}b");
    cases.put("a{b", "a{b");
    cases.put("ab", "ab");
    cases.forEach(
        (key, tagged) -> {
          byte[] t = utf8(tagged);
          byte[] k = utf8(key);
          long want = ProxyKeyHash.hash32(HashFunction.FNV1A_64, t, 0, t.length) & 0xffffffffL;
          assertEquals(
              want, ProxyKeyHash.twemproxy(HashFunction.FNV1A_64, braces, k, 0, k.length), key);
        });
    // An empty key hashes to 0: nutcracker does not hash it.
    assertEquals(0, ProxyKeyHash.twemproxy(HashFunction.MURMUR, null, new byte[0], 0, 0));
    // The vector's tag y1: key-0 hashes whole.
    Placement p = VectorFiles.build(VectorFiles.read("twemproxy-hash-tag.json"));
    assertEquals("y1", p.hashTag());
    assertEquals(2515697753L, p.keyHash(utf8("key-0")));
    byte[] tagged = utf8("ay42144");
    assertEquals(p.keyHash(utf8("42")), p.keyHash(tagged));
  }

  private static String sha256(byte[] b) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
  }

  @Test
  void decodeCarriesTheTag() throws Exception {
    Placement p = VectorFiles.build(VectorFiles.read("twemproxy-hash-tag.json"));
    byte[] enc = p.encode();
    Placement q = Placement.decode(enc, p.fingerprint());
    assertEquals("y1", q.hashTag());
    for (byte[] k : ProxyFixtures.keys(100)) {
      assertEquals(p.keyHash(k), q.keyHash(k));
      assertEquals(p.owner(k), q.owner(k));
    }
    // The tag's length byte sits after the header (20 bytes and the node records).
    int at = indexOf(enc, "y1".getBytes(StandardCharsets.US_ASCII)) - 1;
    assertEquals(2, enc[at]);
    byte[] length1 = enc.clone();
    length1[at] = 1;
    byte[] quote = enc.clone();
    quote[at + 2] = '"';
    byte[] unsorted = enc.clone();
    int first = at + 3 + 4;
    System.arraycopy(enc, first + 8, unsorted, first, 4);
    System.arraycopy(enc, first, unsorted, first + 8, 4);
    for (byte[] b : List.of(length1, quote, unsorted)) {
      String fp = sha256(b);
      PlacementException e = assertThrows(PlacementException.class, () -> Placement.decode(b, fp));
      assertEquals(PlacementException.Reason.INVALID_ENCODING, e.reason());
    }
  }

  private static int indexOf(byte[] hay, byte[] needle) {
    outer:
    for (int i = 0; i + needle.length <= hay.length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (hay[i + j] != needle[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }
}
