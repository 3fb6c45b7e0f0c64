package io.github.ringd.client;

import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The node a {@link Member} registers: its id and what {@code PUT …/nodes/{node}/lease} takes.
 * Unset fields are left to the server's defaults (weight 1, no zone, state per the ring's policy).
 *
 * @param id names the node: 1-128 characters of A-Z a-z 0-9 . _ - :
 * @param address where clients reach the node, e.g. 10.0.0.7:11211; null for none
 * @param weight its relative capacity, 1 to 1,000,000; 0 leaves it to the server (1)
 * @param zone its failure domain, null for none
 * @param hashKey hashed instead of the id when set
 * @param state active, draining or joining; null leaves it to the ring's policy
 * @param labels free-form metadata
 */
public record NodeRecord(
    String id,
    @Nullable String address,
    int weight,
    @Nullable String zone,
    @Nullable String hashKey,
    @Nullable String state,
    Map<String, String> labels) {

  /** Checks for nulls and copies the labels. */
  public NodeRecord {
    Objects.requireNonNull(id, "id");
    labels = Map.copyOf(labels);
  }

  /** A node of that id, everything else left to the server. */
  public static NodeRecord of(String id) {
    return new NodeRecord(id, null, 0, null, null, null, Map.of());
  }

  /** This record with that address. */
  public NodeRecord withAddress(@Nullable String address) {
    return new NodeRecord(id, address, weight, zone, hashKey, state, labels);
  }

  /** This record with that weight. */
  public NodeRecord withWeight(int weight) {
    return new NodeRecord(id, address, weight, zone, hashKey, state, labels);
  }

  /** This record with that zone. */
  public NodeRecord withZone(@Nullable String zone) {
    return new NodeRecord(id, address, weight, zone, hashKey, state, labels);
  }

  /** This record with that hash key. */
  public NodeRecord withHashKey(@Nullable String hashKey) {
    return new NodeRecord(id, address, weight, zone, hashKey, state, labels);
  }

  /** This record with that state (active, draining, joining). */
  public NodeRecord withState(@Nullable String state) {
    return new NodeRecord(id, address, weight, zone, hashKey, state, labels);
  }

  /** This record with those labels. */
  public NodeRecord withLabels(Map<String, String> labels) {
    return new NodeRecord(id, address, weight, zone, hashKey, state, labels);
  }
}
