package io.github.ringd.placement;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.List;

/** The canonical encoding's header (9.1) and the fingerprint (9). */
final class Encoding {
  private Encoding() {}

  /** "RINGDPL", then format version 1 (9.1). */
  static final byte[] MAGIC = "RINGDPL\u0001".getBytes(StandardCharsets.US_ASCII);

  /** flags bit 0: the set is ramped (2.2). */
  static final int FLAG_RAMPED = 0x01;

  private static final char[] HEX = "0123456789abcdef".toCharArray();

  /**
   * Appends the header of 9.1: magic, codes, zone_aware, flags, replication factor and the node
   * records in index order.
   */
  static void appendHeader(
      ByteSink out,
      Algorithm a,
      HashFunction h,
      boolean zoneAware,
      int replicationFactor,
      List<Node> active,
      boolean ramped) {
    out.bytes(MAGIC);
    out.u8(a.code());
    out.u8(h.code());
    out.u8(zoneAware ? 1 : 0);
    out.u8(ramped ? FLAG_RAMPED : 0);
    out.u32(replicationFactor);
    out.u32(active.size());
    for (Node n : active) {
      out.shortBytes(n.id().getBytes(StandardCharsets.US_ASCII));
      // A zone is written only when it can affect placement.
      String zone = zoneAware ? n.zone() : null;
      out.shortBytes(zone == null ? new byte[0] : zone.getBytes(StandardCharsets.US_ASCII));
      out.u32(n.weight());
      if (ramped) {
        out.u32(n.ramp());
      }
      if (a.placesByAddress()) {
        String address = n.address();
        out.shortBytes(address == null ? new byte[0] : Strings.utf8(address));
      }
    }
  }

  /** The header's length, where the body of an encoding of these nodes starts. */
  static int headerLength(
      Algorithm a, HashFunction h, boolean zoneAware, int rf, List<Node> active, boolean ramped) {
    ByteSink out = new ByteSink(64 + 32 * active.size());
    appendHeader(out, a, h, zoneAware, rf, active, ramped);
    return out.size();
  }

  /** SHA-256 of an encoding as 64 lowercase hex digits (9). */
  static String fingerprint(byte[] encoding) {
    byte[] sum;
    try {
      sum = MessageDigest.getInstance("SHA-256").digest(encoding);
    } catch (NoSuchAlgorithmException e) {
      // Every Java platform must provide SHA-256.
      throw new IllegalStateException(e);
    }
    char[] hex = new char[64];
    for (int i = 0; i < 32; i++) {
      hex[2 * i] = HEX[(sum[i] >> 4) & 0xf];
      hex[2 * i + 1] = HEX[sum[i] & 0xf];
    }
    return new String(hex);
  }
}
