package io.github.ringd.placement;

import org.jspecify.annotations.Nullable;

/**
 * A run of consecutive buckets of a jump bucket order (5.4) with one owner, or of holes. Orders are
 * held as runs so that a weight of 1,000,000 is one entry, not a million.
 *
 * @param id the owning node's id, or null for a run of holes
 * @param count the number of buckets in the run (at least 1)
 */
public record BucketRun(@Nullable String id, int count) {}
