package io.github.ringd.placement;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The state a ring keeps beside its config and nodes, which some algorithms need to place keys: it
 * is not a function of the node set. Fields for other algorithms are ignored; {@link #NONE} holds
 * nothing. Immutable: each {@code with} method returns a copy.
 */
public final class Stored {
  /** No stored state: a placement built from a config and a node set alone. */
  public static final Stored NONE = new Stored(null, null, null, null);

  private final @Nullable List<BucketRun> buckets;
  private final @Nullable Map<String, Integer> serverIds;
  private final @Nullable List<List<String>> tableRows;
  private final byte @Nullable [] tableBody;

  private Stored(
      @Nullable List<BucketRun> buckets,
      @Nullable Map<String, Integer> serverIds,
      @Nullable List<List<String>> tableRows,
      byte @Nullable [] tableBody) {
    this.buckets = buckets;
    this.serverIds = serverIds;
    this.tableRows = tableRows;
    this.tableBody = tableBody;
  }

  /**
   * jump's persisted bucket order (5.4.4); null means the initial order of a placement built from
   * scratch, while an empty order is that of a ring with no active node.
   */
  public @Nullable List<BucketRun> buckets() {
    return buckets;
  }

  /**
   * haproxy server ids by node id (5.8.3); every active node needs one. Null numbers every node
   * from 1 in id order, as a placement built from a node set alone.
   */
  public @Nullable Map<String, Integer> serverIds() {
    return serverIds;
  }

  /** table's stored table as rows of node ids, primary first. */
  public @Nullable List<List<String>> tableRows() {
    return tableRows;
  }

  /**
   * table's stored table as the body of its canonical encoding (9.1), used when {@link
   * #tableRows()} is null; a copy.
   */
  public byte @Nullable [] tableBody() {
    return tableBody == null ? null : tableBody.clone();
  }

  /** The body without a copy, for the table layout to read. */
  byte @Nullable [] tableBodyUnsafe() {
    return tableBody;
  }

  /** This state with a jump bucket order (null for the initial one). */
  public Stored withBuckets(@Nullable List<BucketRun> order) {
    return new Stored(order == null ? null : List.copyOf(order), serverIds, tableRows, tableBody);
  }

  /** This state with haproxy server ids (null to number the nodes from 1). */
  public Stored withServerIds(@Nullable Map<String, Integer> ids) {
    return new Stored(buckets, ids == null ? null : Map.copyOf(ids), tableRows, tableBody);
  }

  /** This state with a table as rows of node ids. */
  public Stored withTableRows(@Nullable List<List<String>> rows) {
    List<List<String>> copy = null;
    if (rows != null) {
      copy = new ArrayList<>(rows.size());
      for (List<String> row : rows) {
        copy.add(List.copyOf(row));
      }
      copy = List.copyOf(copy);
    }
    return new Stored(buckets, serverIds, copy, tableBody);
  }

  /** This state with a table as the body of its canonical encoding. */
  public Stored withTableBody(byte @Nullable [] body) {
    return new Stored(buckets, serverIds, tableRows, body == null ? null : body.clone());
  }
}
