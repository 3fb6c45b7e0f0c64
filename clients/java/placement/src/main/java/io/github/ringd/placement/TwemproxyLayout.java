package io.github.ringd.placement;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.function.IntPredicate;
import org.jspecify.annotations.Nullable;

/**
 * nutcracker 0.5.0's {@code distribution: ketama} (spec 5.9): ketama's MD5 points, but counted in
 * binary32 throughout, placed by nutcracker's server names, and with equal points in server-name
 * order rather than node index order. The body starts with the hash tag.
 */
final class TwemproxyLayout implements Layout {
  /** The port on which nutcracker names an unnamed server by its host alone (5.9.2). */
  private static final int DEFAULT_PORT = 11211;

  private final Continuum continuum;
  private final @Nullable String tag;

  private TwemproxyLayout(Continuum continuum, @Nullable String tag) {
    this.continuum = continuum;
    this.tag = tag == null || tag.isEmpty() ? null : tag;
  }

  @Override
  public int ownerIndex(long h) {
    return continuum.ownerIndex(h);
  }

  @Override
  public void walk(long h, IntPredicate visit) {
    continuum.walk(h, visit);
  }

  @Override
  public Units units(int nodes) {
    return continuum.units(nodes);
  }

  @Override
  public String basis() {
    return "arcs";
  }

  @Override
  public @Nullable String hashTag() {
    return tag;
  }

  /** The hash tag's length (0, or 2 when set), its bytes, then ketama's point list (9.1). */
  @Override
  public void appendBody(ByteSink out) {
    if (tag == null) {
      out.u8(0);
    } else {
      out.shortBytes(Strings.utf8(tag));
    }
    continuum.appendPoints(out);
  }

  @Override
  public PointList inspectPoints() {
    return continuum.pointList();
  }

  /**
   * Takes the servers in name order (shorter names first, then bytes), gives each count/4 digests
   * of name ‖ "-" ‖ decimal(k) as ketama does, and sorts the points by position with a stable sort,
   * as glibc's qsort (a merge sort) does, so that equal positions keep name order. The active nodes
   * must have passed {@link #check}.
   */
  static TwemproxyLayout build(List<Node> active, @Nullable String tag) {
    String[] names = serverNames(active);
    int[] counts = pointCounts(active);
    Integer[] order = new Integer[active.size()];
    int total = 0;
    for (int i = 0; i < order.length; i++) {
      order[i] = i;
      total += counts[i];
    }
    Arrays.sort(order, (a, b) -> compareServerNames(names[a], names[b]));
    // Each point carries its server's rank in name order, so that sorting by (position, rank) is
    // the stable sort by position of the points in generation order; then ranks become indices.
    PointList ranked = new PointList(total);
    for (int rank = 0; rank < order.length; rank++) {
      int i = order[rank];
      Ketama.appendDigestPoints(ranked, Strings.utf8(names[i]), counts[i] / 4, rank);
    }
    ranked.sortByPositionThenNode();
    PointList points = new PointList(ranked.size());
    for (int j = 0; j < ranked.size(); j++) {
      points.add(ranked.pos(j), order[ranked.node(j)]);
    }
    return new TwemproxyLayout(new Continuum(points, 32), tag);
  }

  /** The sum of the active nodes' point counts, for the point cap (2.4 check 5). */
  static long pointTotal(List<Node> active) {
    long total = 0;
    for (int k : pointCounts(active)) {
      total += k;
    }
    return total;
  }

  /** nutcracker's server order: by length, then bytes (names are ASCII). */
  static int compareServerNames(String a, String b) {
    int c = Integer.compare(a.length(), b.length());
    return c != 0 ? c : a.compareTo(b);
  }

  /**
   * Every active node's point count in index order: 4 × floor(f32(f32(pct × 160) / 4) × f32(n)),
   * pct = f32(w) / f32(T), every step binary32 as nutcracker's float arithmetic (5.9.1). nutcracker
   * adds 1e-10 in binary64 before the floor; that never changes the result, but it is kept to
   * follow the C code step by step.
   */
  static int[] pointCounts(List<Node> active) {
    long total = 0;
    for (Node n : active) {
      total += n.weight();
    }
    int[] out = new int[active.size()];
    for (int i = 0; i < out.length; i++) {
      float pct = (float) active.get(i).weight() / (float) total;
      float perHash = ((pct * 160f) / 4f) * (float) active.size();
      out[i] = 4 * (int) Math.floor((float) ((double) perHash + 1e-10));
    }
    return out;
  }

  /**
   * The port of host:port as nutcracker reads it, 1..=65,535 without leading zeros, with a host of
   * {@code [A-Za-z0-9._-]}; -1 when address is not such a server.
   */
  static int port(String address) {
    int i = address.lastIndexOf(':');
    if (i <= 0 || !NginxLayout.isHostName(address.substring(0, i))) {
      return -1;
    }
    String p = address.substring(i + 1);
    if (p.isEmpty() || p.length() > 5 || p.charAt(0) == '0') {
      return -1;
    }
    for (int k = 0; k < p.length(); k++) {
      if (p.charAt(k) < '0' || p.charAt(k) > '9') {
        return -1;
      }
    }
    int n = Integer.parseInt(p);
    return n <= 65_535 ? n : -1;
  }

  /** Why address is not a server nutcracker takes, or null (5.9.2). */
  static @Nullable String addressProblem(String address) {
    int i = address.lastIndexOf(':');
    if (i < 0) {
      return "twemproxy rings need `host:port`";
    }
    String host = address.substring(0, i);
    if (host.isEmpty() || !NginxLayout.isHostName(host)) {
      return "the host must be a host name or an IPv4 address (letters, digits, '.', '-', '_')";
    }
    if (port(address) < 0) {
      return "the port must be from 1 to 65535, without leading zeros";
    }
    return null;
  }

  /**
   * The name nutcracker places n by (5.9.2): its hash_key, else its host alone on port 11211, else
   * host:port; null with neither an address nor a hash_key. It checks the address
   * (AddressNotServer), then the name (InvalidServerName): printable ASCII without '#', quotes or
   * backslashes, so YAML reads it back as written.
   */
  static @Nullable String serverName(Node n) {
    String address = n.address();
    if (address != null) {
      String problem = addressProblem(address);
      if (problem != null) {
        throw new PlacementException(
            PlacementException.Reason.ADDRESS_NOT_SERVER,
            "node " + n.id() + " at \"" + Strings.excerpt(address) + "\": " + problem);
      }
    }
    String key = n.hashKey();
    if (key != null) {
      for (int i = 0; i < key.length(); i++) {
        char c = key.charAt(i);
        if (c < '!' || c > '~' || c == '#' || c == '"' || c == '\'' || c == '\\') {
          throw new PlacementException(
              PlacementException.Reason.INVALID_SERVER_NAME,
              "node "
                  + n.id()
                  + " has hash_key \""
                  + Strings.excerpt(key)
                  + "\": a twemproxy server name is printable ASCII without spaces, '#', quotes"
                  + " or backslashes");
        }
      }
      return key;
    }
    if (address == null) {
      return null;
    }
    int colon = address.lastIndexOf(':');
    int port = port(address);
    return port == DEFAULT_PORT ? address.substring(0, colon) : address;
  }

  /**
   * Check 3a for twemproxy, after every active node was found to have an address: every node's
   * address and name, active or not, in id order (so that a node nutcracker could not be given is
   * refused when it is written), then no two active nodes with one name.
   */
  static void check(List<Node> everyInIdOrder, List<Node> active) {
    for (Node n : everyInIdOrder) {
      serverName(n);
    }
    serverNames(active);
  }

  /**
   * The active nodes' names in index order, checked: every one has a name (MissingAddress) and no
   * two share one (ServerNameTaken, naming the field to change: hash_key if either node has one,
   * else address).
   */
  static String[] serverNames(List<Node> active) {
    String[] names = new String[active.size()];
    for (int i = 0; i < names.length; i++) {
      String name = serverName(active.get(i));
      if (name == null) {
        throw new PlacementException(
            PlacementException.Reason.MISSING_ADDRESS,
            "node " + active.get(i).id() + " under twemproxy");
      }
      names[i] = name;
    }
    List<Integer> order = new ArrayList<>();
    for (int i = 0; i < names.length; i++) {
      order.add(i);
    }
    // List.sort is stable: equal names stay in id order.
    order.sort(Comparator.comparing((Integer i) -> names[i], TwemproxyLayout::compareServerNames));
    for (int k = 1; k < order.size(); k++) {
      int a = order.get(k - 1);
      int b = order.get(k);
      if (names[a].equals(names[b])) {
        String field =
            active.get(a).hashKey() != null || active.get(b).hashKey() != null
                ? "hash_key"
                : "address";
        throw new PlacementException(
            PlacementException.Reason.SERVER_NAME_TAKEN,
            active.get(a).id()
                + " and "
                + active.get(b).id()
                + " would both be the twemproxy server \""
                + names[a]
                + "\": give one a distinct "
                + field);
      }
    }
    return names;
  }

  /**
   * Reads a twemproxy body (9.1): the tag, then the point list, sorted by position (equal positions
   * are in server-name order, which the encoding cannot show without the names: the fingerprint
   * vouches for it). Every node's address must be a server nutcracker takes.
   */
  static TwemproxyLayout decode(ByteReader r, List<Node> nodes) {
    int tagLen = r.u8();
    if (tagLen != 0 && tagLen != 2) {
      throw Decoder.bad("a twemproxy hash tag of " + tagLen + " bytes");
    }
    String tag = null;
    if (tagLen == 2) {
      byte[] t = r.take(2);
      tag = new String(t, java.nio.charset.StandardCharsets.ISO_8859_1);
      RingConfig.checkHashTag(tag); // reported as InvalidEncoding by the decoder
    }
    for (Node n : nodes) {
      String a = n.address() == null ? "" : n.address();
      String problem = addressProblem(a);
      if (problem != null) {
        throw Decoder.bad("node " + n.id() + " at \"" + Strings.excerpt(a) + "\": " + problem);
      }
    }
    PointList points = Continuum.decodePoints(r, nodes.size(), 32);
    for (int j = 1; j < points.size(); j++) {
      if (Long.compareUnsigned(points.pos(j - 1), points.pos(j)) > 0) {
        throw Decoder.bad("the points are not sorted by position");
      }
    }
    return new TwemproxyLayout(new Continuum(points, 32), tag);
  }
}
