package io.github.ringd.placement;

import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/** The selection of spec 6.2 from a layout's successor order (6.1). */
final class Preference {
  private Preference() {}

  /**
   * Up to want = min(r, node count) distinct node indices from the successor order of key hash h.
   * With zones, the first S = min(want, zone count) entries are the first nodes that each bring a
   * zone not yet used, and the rest the earliest nodes not yet taken, so the list need not be in
   * successor order. A node seen again is skipped, or dropped as it was the first time, which is
   * why walking jump's runs instead of its buckets gives the same list.
   */
  static int[] select(
      Layout layout, long h, int r, int nodes, int @Nullable [] zoneOf, int zoneCount) {
    int want = Math.min(r, nodes);
    if (want <= 0) {
      return new int[0];
    }
    int[] picked = new int[want];
    int[] count = new int[2]; // picked, rest
    boolean[] seen = new boolean[nodes];
    if (zoneOf == null) {
      layout.walk(
          h,
          n -> {
            if (!seen[n]) {
              seen[n] = true;
              picked[count[0]++] = n;
            }
            return count[0] < want;
          });
      return count[0] == want ? picked : Arrays.copyOf(picked, count[0]);
    }
    int spread = Math.min(want, zoneCount);
    boolean[] usedZones = new boolean[zoneCount];
    int[] rest = new int[want - spread];
    layout.walk(
        h,
        n -> {
          if (seen[n]) {
            return true;
          }
          seen[n] = true;
          if (count[0] < spread && !usedZones[zoneOf[n]]) {
            usedZones[zoneOf[n]] = true;
            picked[count[0]++] = n;
          } else if (count[1] < want - spread) {
            rest[count[1]++] = n;
          }
          return count[0] < spread || count[1] < want - spread;
        });
    int[] out = Arrays.copyOf(picked, count[0] + count[1]);
    System.arraycopy(rest, 0, out, count[0], count[1]);
    return out;
  }
}
