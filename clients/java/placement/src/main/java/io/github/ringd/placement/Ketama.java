package io.github.ringd.placement;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * libketama's continuum (spec 5.2): each digest k of a node, MD5(label ‖ "-" ‖ decimal(k)), gives
 * four little-endian u32 points; ties sort by node index, libketama's stable order.
 */
final class Ketama {
  private Ketama() {}

  static Circle build(List<Node> active) {
    int[] digests = digests(active);
    long total = 0;
    for (int d : digests) {
      total += 4L * d;
    }
    PointList points = new PointList((int) total);
    for (int i = 0; i < active.size(); i++) {
      appendDigestPoints(points, Strings.utf8(active.get(i).label()), digests[i], i);
    }
    return new Circle(Continuum.sorted(points, 32));
  }

  /**
   * Appends the 4 × digests points of one server named name (ketama's label, twemproxy's server
   * name).
   */
  static void appendDigestPoints(PointList points, byte[] name, int digests, int node) {
    byte[] buf = new byte[name.length + 12];
    System.arraycopy(name, 0, buf, 0, name.length);
    buf[name.length] = '-';
    byte[] d = new byte[16];
    for (int k = 0; k < digests; k++) {
      byte[] dec = Integer.toString(k).getBytes(StandardCharsets.US_ASCII);
      System.arraycopy(dec, 0, buf, name.length + 1, dec.length);
      Hashes.md5(buf, 0, name.length + 1 + dec.length, d);
      for (int w = 0; w < 16; w += 4) {
        points.add(ByteReader.le32(d, w), node);
      }
    }
  }

  /** Every active node's digest count, in index order. */
  static int[] digests(List<Node> active) {
    long total = 0;
    for (Node n : active) {
      total += n.weight();
    }
    int[] out = new int[active.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = digestCount(active.get(i).weight(), total, active.size());
    }
    return out;
  }

  /**
   * libketama's floorf(pct * 40.0 * n) (5.2): pct a binary32 quotient, the two multiplications in
   * binary64, left to right, and the product narrowed to binary32 before the floor. Java's floating
   * point is strict, so each cast below rounds exactly once.
   */
  static int digestCount(long weight, long total, int servers) {
    float pct = (float) weight / (float) total;
    double product = ((double) pct * 40.0) * (double) (float) servers;
    return (int) Math.floor((double) (float) product);
  }
}
