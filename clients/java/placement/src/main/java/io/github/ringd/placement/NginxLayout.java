package io.github.ringd.placement;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * nginx's {@code hash $key consistent} (spec 5.7): a circle of 32-bit points, 160 per unit of
 * weight, made by chaining CRC-32 over each node's address; of equal points only the lowest node
 * index's stays, as nginx keeps the first of equal points in server order. Its layout is a {@link
 * Circle}; this class builds, checks and decodes it.
 */
final class NginxLayout {
  private NginxLayout() {}

  /** nginx's 160 points per unit of weight. */
  static final int POINTS_PER_WEIGHT = 160;

  /**
   * Where address splits as nginx splits a {@code server} to hash it: the index of its last ':',
   * which only digits (at least one) follow; -1 when there is none.
   */
  static int portColon(String address) {
    int i = address.lastIndexOf(':');
    if (i < 0 || i == address.length() - 1) {
      return -1;
    }
    for (int k = i + 1; k < address.length(); k++) {
      char c = address.charAt(k);
      if (c < '0' || c > '9') {
        return -1;
      }
    }
    return i;
  }

  /**
   * Why address cannot be an nginx server, or null (5.7): host:port with a decimal port 1..=65,535
   * and a host name, IPv4 or bracketed IPv6 host, so that nothing in it can end, open or comment
   * out a directive; not {@code unix}, which nginx reads as a socket path.
   */
  static @Nullable String addressProblem(String address) {
    int colon = portColon(address);
    if (colon < 0) {
      return "nginx rings need `host:port`, with a decimal port";
    }
    String host = address.substring(0, colon);
    String port = address.substring(colon + 1);
    if (port.length() > 5 || Integer.parseInt(port) < 1 || Integer.parseInt(port) > 65_535) {
      return "the port must be from 1 to 65535";
    }
    if (host.isEmpty() || !(isHostName(host) || isBracketedIpv6(host))) {
      return "the host must be a host name, an IPv4 address or a bracketed IPv6 address";
    }
    if (host.equalsIgnoreCase("unix")) {
      return "unix sockets are not supported";
    }
    return null;
  }

  /** Whether s is made of {@code [A-Za-z0-9._-]}. */
  static boolean isHostName(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      boolean alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
      if (!alnum && c != '.' && c != '-' && c != '_') {
        return false;
      }
    }
    return true;
  }

  private static boolean isBracketedIpv6(String s) {
    if (s.length() <= 2 || s.charAt(0) != '[' || s.charAt(s.length() - 1) != ']') {
      return false;
    }
    for (int i = 1; i < s.length() - 1; i++) {
      char c = s.charAt(i);
      boolean hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
      if (!hex && c != ':' && c != '.') {
        return false;
      }
    }
    return true;
  }

  /**
   * Check 3a for nginx over the active nodes in id order, after every one was found to have an
   * address: each a server nginx takes (AddressNotServer), then no address twice (DuplicateAddress,
   * naming the smallest shared address and its first two nodes by id).
   */
  static void checkAddresses(List<Node> active) {
    for (Node n : active) {
      String p = addressProblem(address(n));
      if (p != null) {
        throw new PlacementException(
            PlacementException.Reason.ADDRESS_NOT_SERVER,
            "node " + n.id() + " at \"" + Strings.excerpt(address(n)) + "\": " + p);
      }
    }
    checkDistinctAddresses(active, "");
  }

  /**
   * Refuses two active nodes with one address (DuplicateAddress), naming the smallest shared
   * address in byte order and its first two nodes in id order; why says what depends on it.
   */
  static void checkDistinctAddresses(List<Node> active, String why) {
    List<Node> byAddress = new ArrayList<>(active);
    // List.sort is stable: equal addresses stay in id order.
    byAddress.sort(Comparator.comparing(NginxLayout::address, Strings::compareBytes));
    for (int i = 1; i < byAddress.size(); i++) {
      Node a = byAddress.get(i - 1);
      Node b = byAddress.get(i);
      if (address(a).equals(address(b))) {
        throw new PlacementException(
            PlacementException.Reason.DUPLICATE_ADDRESS,
            "nodes "
                + a.id()
                + " and "
                + b.id()
                + " share the address \""
                + Strings.excerpt(address(a))
                + "\""
                + why);
      }
    }
  }

  private static String address(Node n) {
    String a = n.address();
    return a == null ? "" : a;
  }

  /**
   * The circle (5.7): node i's 160 × weight points q_0 = CRC32(base ‖ LE32(0)), q_j = CRC32(base ‖
   * LE32(q_{j-1})) with base = host ‖ 0x00 ‖ port, sorted by (position, node index), keeping only
   * the first of equal positions. The nodes must have passed {@link #checkAddresses}.
   */
  static Circle build(List<Node> active) {
    long total = 0;
    for (Node n : active) {
      total += (long) POINTS_PER_WEIGHT * n.weight();
    }
    PointList points = new PointList((int) total);
    byte[] zero = {0};
    for (int i = 0; i < active.size(); i++) {
      Node n = active.get(i);
      String address = address(n);
      int colon = portColon(address);
      byte[] host = Strings.utf8(address.substring(0, colon));
      byte[] port = Strings.utf8(address.substring(colon + 1));
      // Feeding CRC-32 in pieces equals feeding it at once (3.5).
      int base = Crc32.update(0, host, 0, host.length);
      base = Crc32.update(base, zero, 0, 1);
      base = Crc32.update(base, port, 0, port.length);
      int prev = 0;
      for (int k = 0; k < POINTS_PER_WEIGHT * n.weight(); k++) {
        prev = Crc32.updateLe32(base, prev);
        points.add(prev & 0xffffffffL, i);
      }
    }
    points.sortByPositionThenNode();
    return new Circle(new Continuum(firstOfEqual(points), 32));
  }

  /** The sorted points without those equal to the one before: nginx's de-duplication. */
  private static PointList firstOfEqual(PointList sorted) {
    PointList kept = new PointList(sorted.size());
    for (int j = 0; j < sorted.size(); j++) {
      if (j == 0 || sorted.pos(j) != sorted.pos(j - 1)) {
        kept.add(sorted.pos(j), sorted.node(j));
      }
    }
    return kept;
  }

  /**
   * Reads an nginx body (9.1): ketama's point list, whose positions must ascend strictly (equal
   * points were merged) and name nodes below n.
   */
  static Circle decode(ByteReader r, int n) {
    PointList points = Continuum.decodePoints(r, n, 32);
    for (int j = 1; j < points.size(); j++) {
      if (Long.compareUnsigned(points.pos(j - 1), points.pos(j)) >= 0) {
        throw Decoder.bad("the points are not in canonical order");
      }
    }
    return new Circle(new Continuum(points, 32));
  }
}
