package io.github.ringd.client;

import org.jspecify.annotations.Nullable;

/**
 * A key's owner in the version routed on and in the one applied before it, read in one volatile
 * load (never a pair from two swaps). See {@link RingClient#handoff}.
 *
 * @param ownerNow the owner now; null before the first version or with no active node
 * @param ownerBefore the owner in the version applied before; null before a second version, or when
 *     that version had no active node
 * @param version the version routed on, 0 for none
 * @param versionBefore the version applied before it, 0 for none: after the client skipped versions
 *     (a reset, a restart) it says which
 */
public record Handoff(
    @Nullable String ownerNow, @Nullable String ownerBefore, long version, long versionBefore) {
  /**
   * Whether the key changed owner in the last change: then a miss on {@link #ownerNow} may be
   * served by {@link #ownerBefore}, which still holds it. Writes go to the owner now alone.
   */
  public boolean moved() {
    return ownerBefore != null && !ownerBefore.equals(ownerNow);
  }
}
