package io.github.ringd.placement;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The bucket table must answer exactly as a binary search over the points (5.1's successor rule):
 * clustered points, ties, a point on a bucket's last position and long empty stretches, on both
 * circle sizes.
 */
class ContinuumTest {
  /** The index of the first point at or after h, wrapping to 0: 5.1 by binary search. */
  private static int search(Continuum c, long h) {
    int lo = 0;
    int hi = c.size();
    while (lo < hi) {
      int m = (lo + hi) >>> 1;
      if (Long.compareUnsigned(c.pos(m), h) < 0) {
        lo = m + 1;
      } else {
        hi = m;
      }
    }
    return lo == c.size() ? 0 : lo;
  }

  private static void probe(Continuum c, long h, String where) {
    int want = search(c, h);
    assertEquals(want, c.successor(h), where + ": successor(" + Long.toHexString(h) + ")");
    assertEquals(
        c.node(want), c.ownerIndex(h), where + ": ownerIndex(" + Long.toHexString(h) + ")");
  }

  @Test
  void bucketAnswersEqualTheSuccessorSearch() {
    for (int space : new int[] {32, 64}) {
      long top = space == 64 ? -1L : (1L << space) - 1;
      // top >>> 1 is the last position of a bucket; (top >>> 3) − 1 the one before another's
      // last, which the next point owns.
      PointList pts = new PointList(50);
      long[][] fixed = {
        {0, 0}, {5, 1}, {5, 2}, {6, 3}, {top, 4}, {top >>> 1, 2}, {(top >>> 3) - 1, 1}
      };
      for (long[] p : fixed) {
        pts.add(p[0], (int) p[1]);
      }
      for (long k = 0; k < 40; k++) {
        pts.add((top >>> 2) + 1 + k * 7, (int) (k % 5));
      }
      Continuum c = Continuum.sorted(pts, space);
      List<Long> probes = new ArrayList<>();
      for (int i = 0; i < c.size(); i++) {
        probes.add(c.pos(i) - 1);
        probes.add(c.pos(i));
        probes.add(c.pos(i) + 1);
      }
      for (long k = 0; k < 5000; k++) {
        probes.add((k * 0x9E3779B97F4A7C15L) >>> (64 - space));
      }
      for (long h : probes) {
        if (Long.compareUnsigned(h, top) <= 0) {
          probe(c, h, space + "-bit circle");
        }
      }
    }
  }

  @Test
  void edges() {
    PointList one = new PointList(1);
    one.add(1L << 40, 7);
    Continuum c = Continuum.sorted(one, 64);
    for (long h : new long[] {0, 1L << 40, (1L << 40) + 1, -1L}) {
      assertEquals(7, c.ownerIndex(h), "one point owns every position");
    }
    assertEquals(
        -1, Continuum.sorted(new PointList(0), 32).ownerIndex(12345), "no point, no owner");
  }

  @Test
  void bucketKindsOnRandomCircles() {
    SplittableRandom rng = new SplittableRandom(35);
    for (int space : new int[] {32, 64}) {
      long top = -1L >>> (64 - space);
      for (int n : new int[] {1, 2, 3, 100, 5000, 70000}) {
        PointList pts = new PointList(n);
        long previous = 0;
        for (int i = 0; i < n; i++) {
          long pos = rng.nextLong() >>> (64 - space);
          if (i % 97 == 1) {
            pos = previous; // a tie
          } else if (i % 97 == 2) {
            pos |= (1L << (space - 10)) - 1; // often a bucket's last position
          }
          pts.add(pos, rng.nextInt(50));
          previous = pos;
        }
        Continuum c = Continuum.sorted(pts, space);
        int[] kinds = c.bucketKinds();
        String where = n + " points, " + space + "-bit, seed 35";
        if (n >= 5000) {
          assertTrue(kinds[0] > 0 && kinds[1] > 0 && kinds[2] > 0, where + ": all three kinds");
        }
        for (int i = 0; i < c.size(); i++) {
          long p = c.pos(i);
          for (long h : new long[] {p - 1, p, p + 1, p + (1L << 20), p - (1L << 20)}) {
            probe(c, h & top, where);
          }
        }
        for (int k = 0; k < 20000; k++) {
          probe(c, rng.nextLong() >>> (64 - space), where);
        }
      }
    }
  }

  @Test
  void sortIsTheSpecOrder() {
    SplittableRandom rng = new SplittableRandom(99);
    Comparator<long[]> spec =
        (a, b) -> {
          int c = Long.compareUnsigned(a[0], b[0]);
          return c != 0 ? c : Long.compare(a[1], b[1]);
        };
    for (int n : new int[] {0, 1, 255, 256, 5000}) {
      for (int space : new int[] {32, 64}) {
        PointList pts = new PointList(n);
        List<long[]> want = new ArrayList<>();
        long previous = 0;
        for (int i = 0; i < n; i++) {
          long pos = i % 5 == 1 ? previous : rng.nextLong() >>> (64 - space);
          int node = rng.nextInt(70000);
          pts.add(pos, node);
          want.add(new long[] {pos, node});
          previous = pos;
        }
        want.sort(spec);
        pts.sortByPositionThenNode();
        for (int i = 0; i < n; i++) {
          assertEquals(want.get(i)[0], pts.pos(i), n + " points, " + space + "-bit, seed 99");
          assertEquals(want.get(i)[1], pts.node(i), n + " points, " + space + "-bit, seed 99");
        }
      }
    }
  }
}
