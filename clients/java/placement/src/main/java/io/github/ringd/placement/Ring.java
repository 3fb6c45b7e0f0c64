package io.github.ringd.placement;

import java.util.List;

/**
 * The virtual-node ring of spec 5.1: node i with label bytes B and c points places position(k) =
 * H(hash, le32(len(B)) ‖ B ‖ le32(k)) for k below its point count. A node's points depend only on
 * its own label, weight and ramp.
 */
final class Ring {
  private Ring() {}

  static Circle build(List<Node> active, HashFunction h, int vnodesPerWeight) {
    int total = 0;
    for (Node n : active) {
      total += pointCount(vnodesPerWeight, n);
    }
    PointList points = new PointList(total);
    for (int i = 0; i < active.size(); i++) {
      byte[] label = Strings.utf8(active.get(i).label());
      // The length prefix keeps ("node1", k=1) and ("node11", …) apart.
      byte[] buf = new byte[label.length + 8];
      putLe32(buf, 0, label.length);
      System.arraycopy(label, 0, buf, 4, label.length);
      int c = pointCount(vnodesPerWeight, active.get(i));
      for (int k = 0; k < c; k++) {
        putLe32(buf, label.length + 4, k);
        points.add(Hashes.hash64(h, buf), i);
      }
    }
    return new Circle(Continuum.sorted(points, 64));
  }

  /**
   * c = vnodes × weight, or at ramp r the first ⌈r × c / 65,536⌉ of them, in integers (5.1); at
   * least 1.
   */
  static int pointCount(int vnodesPerWeight, Node n) {
    long c = (long) vnodesPerWeight * n.weight();
    return (int) (((long) n.ramp() * c + Node.FULL_RAMP - 1) / Node.FULL_RAMP);
  }

  private static void putLe32(byte[] b, int off, int v) {
    b[off] = (byte) v;
    b[off + 1] = (byte) (v >>> 8);
    b[off + 2] = (byte) (v >>> 16);
    b[off + 3] = (byte) (v >>> 24);
  }
}
