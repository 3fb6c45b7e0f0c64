package io.github.ringd.placement;

import org.jspecify.annotations.Nullable;

/**
 * An IP address and port read from text, and the one way Envoy (and Rust's SocketAddr) writes it
 * back: {@code 10.0.0.1:8080}, {@code [2001:db8::1]:8080} (RFC 5952: lowercase, no leading zeros,
 * the longest run of two or more zero groups compressed, the first of equal runs), IPv4-mapped
 * addresses as {@code [::ffff:1.2.3.4]:80}. Used to tell whether an xDS endpoint's address is
 * written canonically (5.10.4).
 */
final class SocketAddress {
  /** 4 bytes for IPv4, 16 for IPv6. */
  private final byte[] ip;

  final int port;

  /** Whether an IPv6 zone (%…) followed the address; it is not kept. */
  final boolean zoned;

  private SocketAddress(byte[] ip, int port, boolean zoned) {
    this.ip = ip;
    this.port = port;
    this.zoned = zoned;
  }

  /** The address read from s, or null when s is not an IP address and a port in 0..=65,535. */
  static @Nullable SocketAddress parse(String s) {
    byte[] ip;
    String port;
    boolean zoned = false;
    if (s.startsWith("[")) {
      int close = s.indexOf(']');
      if (close < 0 || close + 1 >= s.length() || s.charAt(close + 1) != ':') {
        return null;
      }
      String inside = s.substring(1, close);
      int percent = inside.indexOf('%');
      if (percent >= 0) {
        if (percent == inside.length() - 1) {
          return null;
        }
        zoned = true;
        inside = inside.substring(0, percent);
      }
      ip = parseIpv6(inside);
      port = s.substring(close + 2);
    } else {
      int colon = s.lastIndexOf(':');
      if (colon < 0) {
        return null;
      }
      ip = parseIpv4(s.substring(0, colon));
      port = s.substring(colon + 1);
    }
    int p = parsePort(port);
    return ip == null || p < 0 ? null : new SocketAddress(ip, p, zoned);
  }

  /** A decimal port 0..=65,535 (leading zeros allowed: the canonical form then differs). */
  private static int parsePort(String s) {
    if (s.isEmpty() || s.length() > 5) {
      return -1;
    }
    int v = 0;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < '0' || c > '9') {
        return -1;
      }
      v = v * 10 + (c - '0');
    }
    return v <= 65_535 ? v : -1;
  }

  /** Four decimal fields 0..=255 of one to three digits, or null. */
  private static byte @Nullable [] parseIpv4(String s) {
    byte[] out = new byte[4];
    int field = 0;
    int i = 0;
    while (field < 4) {
      int start = i;
      int v = 0;
      while (i < s.length() && i - start < 3 && s.charAt(i) >= '0' && s.charAt(i) <= '9') {
        v = v * 10 + (s.charAt(i) - '0');
        i++;
      }
      if (i == start || v > 255) {
        return null;
      }
      out[field++] = (byte) v;
      if (field < 4) {
        if (i >= s.length() || s.charAt(i) != '.') {
          return null;
        }
        i++;
      }
    }
    return i == s.length() ? out : null;
  }

  /**
   * Eight groups of one to four hex digits separated by ':', at most one "::" standing for one or
   * more zero groups, the last 32 bits optionally as dotted IPv4; or null.
   */
  private static byte @Nullable [] parseIpv6(String s) {
    int gap = s.indexOf("::");
    if (gap >= 0 && s.indexOf("::", gap + 1) >= 0) {
      return null;
    }
    int[] head = gap >= 0 ? groups(s.substring(0, gap), false) : groups(s, true);
    int[] tail = gap >= 0 ? groups(s.substring(gap + 2), true) : new int[0];
    if (head == null || tail == null) {
      return null;
    }
    int count = head.length + tail.length;
    if (gap >= 0 ? count > 7 : count != 8) {
      return null;
    }
    int[] all = new int[8];
    System.arraycopy(head, 0, all, 0, head.length);
    System.arraycopy(tail, 0, all, 8 - tail.length, tail.length);
    byte[] out = new byte[16];
    for (int g = 0; g < 8; g++) {
      out[2 * g] = (byte) (all[g] >>> 8);
      out[2 * g + 1] = (byte) all[g];
    }
    return out;
  }

  /**
   * The 16-bit groups of s ("" gives none); when ipv4Last, the last field may be dotted IPv4, read
   * as two groups.
   */
  private static int @Nullable [] groups(String s, boolean ipv4Last) {
    if (s.isEmpty()) {
      return new int[0];
    }
    String[] fields = s.split(":", -1);
    int[] out = new int[fields.length + 1];
    int n = 0;
    for (int f = 0; f < fields.length; f++) {
      String field = fields[f];
      if (ipv4Last && f == fields.length - 1 && field.indexOf('.') >= 0) {
        byte[] v4 = parseIpv4(field);
        if (v4 == null) {
          return null;
        }
        out[n++] = (v4[0] & 0xff) << 8 | (v4[1] & 0xff);
        out[n++] = (v4[2] & 0xff) << 8 | (v4[3] & 0xff);
        continue;
      }
      if (field.isEmpty() || field.length() > 4) {
        return null;
      }
      int v = 0;
      for (int i = 0; i < field.length(); i++) {
        int d = Character.digit(field.charAt(i), 16);
        if (d < 0) {
          return null;
        }
        v = v << 4 | d;
      }
      out[n++] = v;
    }
    return java.util.Arrays.copyOf(out, n);
  }

  /** The address as Envoy writes it back (no zone). */
  String canonical() {
    StringBuilder b = new StringBuilder();
    if (ip.length == 4) {
      appendIpv4(b, 0);
      return b.append(':').append(port).toString();
    }
    b.append('[');
    boolean mapped = ip[10] == (byte) 0xff && ip[11] == (byte) 0xff;
    for (int i = 0; i < 10 && mapped; i++) {
      mapped = ip[i] == 0;
    }
    if (mapped) {
      b.append("::ffff:");
      appendIpv4(b, 12);
    } else {
      int[] g = new int[8];
      for (int i = 0; i < 8; i++) {
        g[i] = (ip[2 * i] & 0xff) << 8 | (ip[2 * i + 1] & 0xff);
      }
      // The longest run of zero groups, two or more long, the first among equals.
      int bestStart = -1;
      int bestLen = 1;
      for (int i = 0; i < 8; ) {
        if (g[i] != 0) {
          i++;
          continue;
        }
        int j = i;
        while (j < 8 && g[j] == 0) {
          j++;
        }
        if (j - i > bestLen) {
          bestStart = i;
          bestLen = j - i;
        }
        i = j;
      }
      for (int i = 0; i < 8; i++) {
        if (i == bestStart) {
          b.append("::");
          i += bestLen - 1;
          continue;
        }
        if (i > 0 && i != bestStart + bestLen) {
          b.append(':');
        }
        b.append(Integer.toHexString(g[i]));
      }
    }
    return b.append("]:").append(port).toString();
  }

  private void appendIpv4(StringBuilder b, int from) {
    for (int i = 0; i < 4; i++) {
      if (i > 0) {
        b.append('.');
      }
      b.append(ip[from + i] & 0xff);
    }
  }
}
