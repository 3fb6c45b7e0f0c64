package io.github.ringd.placement;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Thin mode (9.2): a placement from a canonical encoding alone. Malformed input is a {@link
 * PlacementException}, never another exception.
 */
final class Decoder {
  private Decoder() {}

  /** An encoding refusal. */
  static PlacementException bad(String message) {
    return new PlacementException(PlacementException.Reason.INVALID_ENCODING, message);
  }

  /** What 9.1's header holds. */
  static final class Header {
    final Algorithm algorithm;
    final HashFunction hash;
    final boolean zoneAware;
    final int replicationFactor;
    final boolean ramped;
    final List<Node> nodes;

    Header(Algorithm a, HashFunction h, boolean zoneAware, int rf, boolean ramped, List<Node> n) {
      this.algorithm = a;
      this.hash = h;
      this.zoneAware = zoneAware;
      this.replicationFactor = rf;
      this.ramped = ramped;
      this.nodes = n;
    }
  }

  static Placement decode(byte[] data, String expectedFingerprint) {
    String actual = Encoding.fingerprint(data);
    if (!actual.equals(expectedFingerprint)) {
      throw new FingerprintMismatchException(expectedFingerprint, actual);
    }
    ByteReader r = new ByteReader(data);
    Header h = decodeHeader(r);
    Layout layout;
    try {
      layout = decodeBody(h, r);
    } catch (PlacementException e) {
      // A body that restores to no layout is a bad encoding, whatever the restoring code calls it.
      throw e.reason() == PlacementException.Reason.INVALID_ENCODING ? e : bad(e.getMessage());
    }
    if (r.failed() || r.remaining() != 0) {
      throw bad("the body is cut short or followed by " + r.remaining() + " bytes");
    }
    KeyHash keys = new KeyHash(h.algorithm, h.hash, layout.avalanche(), layout.hashTag());
    Placement p =
        new Placement(
            h.algorithm, h.hash, h.zoneAware, h.replicationFactor, h.nodes, h.ramped, keys, layout);
    // Decoding is only right if it loses nothing: the bytes must come back.
    if (!Arrays.equals(p.encode(), data)) {
      throw bad("the encoding is not canonical");
    }
    return p;
  }

  /**
   * Parses 9.1's header and node records, refusing what no placement encodes (9.2): other magic or
   * version bytes, unknown codes, flags other than bit 0, records that break 2.2 or the id order.
   */
  static Header decodeHeader(ByteReader r) {
    if (!Arrays.equals(r.take(Encoding.MAGIC.length), Encoding.MAGIC) || r.failed()) {
      throw bad("not a ringd placement encoding of format version 1");
    }
    int ac = r.u8();
    int hc = r.u8();
    int zoneAware = r.u8();
    int flags = r.u8();
    long rf = r.u32();
    long count = r.u32();
    if (r.failed()) {
      throw bad("the header ends early");
    }
    Algorithm a = Algorithm.ofCode(ac);
    HashFunction h = HashFunction.ofCode(hc);
    if (a == null || h == null || !a.accepts(h)) {
      throw bad("algorithm code " + ac + " with hash code " + hc);
    }
    if (zoneAware > 1 || (flags & ~Encoding.FLAG_RAMPED) != 0) {
      throw bad("zone_aware byte " + zoneAware + " or flags " + flags);
    }
    if (rf < 1 || rf > RingConfig.MAX_REPLICATION) {
      throw bad("replication factor " + rf);
    }
    boolean ramped = (flags & Encoding.FLAG_RAMPED) != 0;
    // Each record takes at least 6 bytes: no count can make us allocate more than the input
    // justifies.
    if (count > r.remaining() / 6) {
      throw bad(count + " node records in " + r.remaining() + " bytes");
    }
    List<Node> nodes = new ArrayList<>((int) count);
    boolean anyRamp = false;
    for (int i = 0; i < count; i++) {
      String id = ascii(r.take(r.u8()));
      String zone = ascii(r.take(r.u8()));
      long weight = r.u32();
      long ramp = Node.FULL_RAMP;
      if (ramped) {
        ramp = r.u32();
        anyRamp = anyRamp || ramp != Node.FULL_RAMP;
      }
      String address = null;
      if (a.placesByAddress()) {
        byte[] raw = r.take(r.u8());
        address = raw.length == 0 ? null : utf8(raw, id);
      }
      if (r.failed()) {
        throw bad("node record " + i + " is cut short");
      }
      if (weight > Node.MAX_WEIGHT || ramp > Node.FULL_RAMP) {
        throw bad("node record " + i + ": weight " + weight + ", ramp " + ramp);
      }
      Node n =
          new Node(
              id,
              null,
              (int) weight,
              zone.isEmpty() ? null : zone,
              NodeState.ACTIVE,
              (int) ramp,
              address);
      try {
        n.validate();
      } catch (PlacementException e) {
        throw bad("node record " + i + ": " + e.getMessage());
      }
      if (a.placesByAddress() && address == null) {
        throw bad("node " + id + " has no address, which " + a + " places by");
      }
      if ((n.zone() != null) != (zoneAware == 1)) {
        throw bad("node " + id + ": a zone must be written exactly when zone_aware is 1");
      }
      if (i > 0 && nodes.get(i - 1).id().compareTo(id) >= 0) {
        throw bad("node records are not in strictly ascending id order");
      }
      nodes.add(n);
    }
    if (anyRamp != ramped) {
      throw bad("the ramped flag does not match the records' ramps");
    }
    if (ramped && !a.takesRamps()) {
      throw bad(a + " cannot be ramped");
    }
    return new Header(a, h, zoneAware == 1, (int) rf, ramped, List.copyOf(nodes));
  }

  /** Bytes as ASCII; a byte above 0x7F becomes a character no id or zone takes. */
  private static String ascii(byte[] b) {
    char[] c = new char[b.length];
    for (int i = 0; i < b.length; i++) {
      c[i] = (char) (b[i] & 0xff);
    }
    return new String(c);
  }

  private static String utf8(byte[] b, String id) {
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(b))
          .toString();
    } catch (CharacterCodingException e) {
      throw bad("node " + id + " has an address that is not UTF-8");
    }
  }

  /**
   * Reads the algorithm's body. Checks that the re-encoding would not catch (an order a lookup
   * relies on, indices a lookup follows) are made here; the rest falls to the re-encoding.
   */
  private static Layout decodeBody(Header h, ByteReader r) {
    int n = h.nodes.size();
    return switch (h.algorithm) {
      case RING -> decodeCircle(r, n, 64);
      case KETAMA -> decodeCircle(r, n, 32);
      case MAGLEV -> MaglevLayout.decode(h.algorithm, n, r);
      case JUMP -> JumpLayout.decode(h.nodes, r);
      case RENDEZVOUS -> Rendezvous.decode(h.nodes, h.ramped, r);
      case NGINX -> NginxLayout.decode(r, n);
      case HAPROXY -> HaproxyLayout.decode(r, h.nodes);
      case TWEMPROXY -> TwemproxyLayout.decode(r, h.nodes);
      case ENVOY_RING_HASH -> EnvoyRingHash.decode(r, n);
      case ENVOY_MAGLEV -> MaglevLayout.decode(h.algorithm, n, r);
      case TABLE -> TableLayout.decode(r, n, h.replicationFactor);
    };
  }

  /**
   * Reads ring's or ketama's point list, which must be sorted by position, then node index (5.1).
   */
  static Circle decodeCircle(ByteReader r, int n, int bits) {
    PointList points = Continuum.decodePoints(r, n, bits);
    for (int j = 1; j < points.size(); j++) {
      if (points.compare(j - 1, j) > 0) {
        throw bad("the points are not in canonical order");
      }
    }
    return new Circle(new Continuum(points, bits));
  }
}
