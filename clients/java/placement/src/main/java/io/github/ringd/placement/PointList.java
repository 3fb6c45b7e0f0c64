package io.github.ringd.placement;

import java.util.Arrays;

/**
 * A list of points: positions on a circle (unsigned, 64 or 32 bits) each with the index of the node
 * it belongs to. A point is two longs side by side in one array, position then node, so that a
 * lookup finds its answer in the cache line it read, and a list of a million points is one object.
 */
final class PointList {
  private long[] data;
  private int size;

  PointList(int capacity) {
    data = new long[Math.max(2 * capacity, 2)];
  }

  private PointList(long[] data, int size) {
    this.data = data;
    this.size = size;
  }

  void add(long pos, int node) {
    if (2 * size == data.length) {
      data = Arrays.copyOf(data, data.length * 2);
    }
    data[2 * size] = pos;
    data[2 * size + 1] = node;
    size++;
  }

  int size() {
    return size;
  }

  long pos(int i) {
    return data[2 * i];
  }

  int node(int i) {
    return (int) data[2 * i + 1];
  }

  /** The backing array, position then node per point; the first 2 × size() entries are used. */
  long[] raw() {
    return data;
  }

  /**
   * Compares points i and j in the point-list order of 5.1: position (unsigned), then node index,
   * so that a successor search lands on the lowest index among ties.
   */
  int compare(int i, int j) {
    int c = Long.compareUnsigned(pos(i), pos(j));
    return c != 0 ? c : Integer.compare(node(i), node(j));
  }

  /**
   * Sorts by position, then node index (5.1). Long lists take an LSD radix sort, a byte a pass
   * (node index bytes, then position bytes), skipping the passes where every point has the same
   * byte: a client rebuilds a layout for every version it verifies, and a comparison sort took most
   * of a 100-node ring's build.
   */
  void sortByPositionThenNode() {
    if (size < 256) {
      insertionSort();
      return;
    }
    long[] src = data;
    long[] dst = new long[data.length];
    int[] counts = new int[256];
    for (int pass = 0; pass < 12; pass++) {
      Arrays.fill(counts, 0);
      for (int i = 0; i < size; i++) {
        counts[digit(src, i, pass)]++;
      }
      if (counts[digit(src, 0, pass)] == size) {
        continue;
      }
      int sum = 0;
      for (int d = 0; d < 256; d++) {
        int c = counts[d];
        counts[d] = sum;
        sum += c;
      }
      for (int i = 0; i < size; i++) {
        int to = counts[digit(src, i, pass)]++;
        dst[2 * to] = src[2 * i];
        dst[2 * to + 1] = src[2 * i + 1];
      }
      long[] t = src;
      src = dst;
      dst = t;
    }
    data = src;
  }

  /** The byte a radix pass orders by: the node index's four, then the position's eight. */
  private static int digit(long[] a, int i, int pass) {
    if (pass < 4) {
      return (int) (a[2 * i + 1] >>> (8 * pass)) & 0xff;
    }
    return (int) (a[2 * i] >>> (8 * (pass - 4))) & 0xff;
  }

  private void insertionSort() {
    for (int i = 1; i < size; i++) {
      long p = data[2 * i];
      long n = data[2 * i + 1];
      int j = i - 1;
      while (j >= 0 && lessThan(p, n, data[2 * j], data[2 * j + 1])) {
        data[2 * j + 2] = data[2 * j];
        data[2 * j + 3] = data[2 * j + 1];
        j--;
      }
      data[2 * j + 2] = p;
      data[2 * j + 3] = n;
    }
  }

  private static boolean lessThan(long p1, long n1, long p2, long n2) {
    int c = Long.compareUnsigned(p1, p2);
    return c < 0 || (c == 0 && n1 < n2);
  }

  /** A copy trimmed to size, which a continuum keeps. */
  PointList trimmed() {
    return new PointList(Arrays.copyOf(data, Math.max(2 * size, 2)), size);
  }
}
