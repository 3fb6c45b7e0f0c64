package io.github.ringd.placement;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/** What each algorithm's layout carries, as ids, for tools and tests (Placement's inspectors). */
final class Inspection {
  private Inspection() {}

  static @Nullable List<Point> points(Placement p) {
    PointList points = p.layout().inspectPoints();
    if (points == null) {
      return null;
    }
    List<Point> out = new ArrayList<>(points.size());
    for (int i = 0; i < points.size(); i++) {
      out.add(new Point(points.pos(i), p.nodeId(points.node(i))));
    }
    return List.copyOf(out);
  }

  static @Nullable List<String> maglevTable(Placement p) {
    if (!(p.layout() instanceof MaglevLayout l)) {
      return null;
    }
    String[] out = new String[l.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = p.nodeId(l.slot(i));
    }
    return List.of(out);
  }

  static @Nullable List<BucketRun> bucketOrder(Placement p) {
    if (!(p.layout() instanceof JumpLayout l)) {
      return null;
    }
    return List.copyOf(l.runs(p.nodes()));
  }

  static @Nullable Map<String, Long> serverIds(Placement p) {
    int[] ids = p.layout().serverIds();
    if (ids == null) {
      return null;
    }
    Map<String, Long> out = new HashMap<>();
    for (int i = 0; i < ids.length; i++) {
      out.put(p.nodeId(i), Integer.toUnsignedLong(ids[i]));
    }
    return Map.copyOf(out);
  }

  static @Nullable List<List<String>> tableRows(Placement p) {
    List<List<String>> rows = p.layout().tableRows(p.nodes());
    return rows == null ? null : List.copyOf(rows);
  }
}
