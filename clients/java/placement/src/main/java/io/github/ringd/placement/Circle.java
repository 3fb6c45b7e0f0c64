package io.github.ringd.placement;

import java.util.function.IntPredicate;

/**
 * The layout of ring, ketama, nginx and envoy_ring_hash: a continuum whose body is its point list
 * and whose ownership basis is its arcs.
 */
final class Circle implements Layout {
  private final Continuum continuum;

  Circle(Continuum continuum) {
    this.continuum = continuum;
  }

  Continuum continuum() {
    return continuum;
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
  public void appendBody(ByteSink out) {
    continuum.appendPoints(out);
  }

  @Override
  public PointList inspectPoints() {
    return continuum.pointList();
  }

  @Override
  public String basis() {
    return "arcs";
  }
}
