package io.github.ringd.jedis;

import org.jspecify.annotations.Nullable;

/**
 * A key cannot be sent where ringd places it: no ring version has arrived yet, no node is active,
 * or the owner has no usable address ({@code host:port}). No other server is offered instead.
 */
public final class NoRouteException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  /** The ring version the key was routed on, 0 before the first. */
  private final long version;

  /** The owner's node id, null when there is none. */
  private final @Nullable String node;

  /** The owner's address as ringd has it, null when it has none (or there is no owner). */
  private final @Nullable String address;

  NoRouteException(String message, long version, @Nullable String node, @Nullable String address) {
    super(message);
    this.version = version;
    this.node = node;
    this.address = address;
  }

  /** The ring version the key was routed on, 0 before the first. */
  public long version() {
    return version;
  }

  /** The owner's node id, null when no node is active or no version has arrived. */
  public @Nullable String node() {
    return node;
  }

  /** The owner's address as ringd has it, null when it has none. */
  public @Nullable String address() {
    return address;
  }
}
