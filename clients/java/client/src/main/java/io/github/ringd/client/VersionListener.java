package io.github.ringd.client;

import io.github.ringd.placement.Placement;
import org.jspecify.annotations.Nullable;

/**
 * Told of every ring version a {@link RingClient} verified and swapped in, in order, on the
 * client's thread: it must not block, and what it throws is ignored.
 */
@FunctionalInterface
public interface VersionListener {
  /**
   * Called once the placement now routes lookups; before is the one it replaced, null for the first
   * (or, when the listener was added while a version was held, for that version).
   */
  void applied(Placement now, @Nullable Placement before);
}
