package io.github.ringd.spymemcached;

import org.jspecify.annotations.Nullable;

/**
 * A key cannot be sent where ringd places it: no ring version has arrived yet, no node is active,
 * or the owner has no address this client holds a connection for. Nothing is sent to another node
 * instead. spymemcached throws it from the call that named the key ({@code get}, {@code set},
 * {@code getBulk}, ...).
 *
 * <p>It is an {@link IllegalStateException} because spymemcached's I/O thread, which routes again
 * the operations of a lost connection, survives only that kind of unchecked exception: it logs it
 * and goes on.
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
