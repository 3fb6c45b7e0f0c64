package io.github.ringd.spymemcached;

import io.github.ringd.placement.Placement;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import net.spy.memcached.MemcachedNode;
import net.spy.memcached.MemcachedNodeROImpl;
import net.spy.memcached.NodeLocator;
import org.jspecify.annotations.Nullable;

/**
 * A spymemcached {@link NodeLocator} that sends every key to the memcached of the node ringd's
 * placement names as its owner. {@link RingdConnectionFactory} makes one per {@code
 * MemcachedClient}, over the connections that client holds; a node's connection is the one whose
 * address is the node's {@code address} ({@code host:port}).
 *
 * <p>{@link #getPrimary} is the owner's connection: the key is hashed as spymemcached sends it, its
 * UTF-8 bytes, without allocating. {@link #getSequence} is the rest of the key's ringd preference
 * list, where spymemcached's default {@code FailureMode.Redistribute} sends the key while the
 * owner's connection is down. A key whose owner has no connection in this client (a node with no
 * address, or one added to the ring at an address the client was not built with) fails with a
 * {@link NoRouteException} from the call that names it, and is sent nowhere else: {@link
 * RingdMemcached} builds a new client when the ring's addresses change, so that this does not last.
 *
 * <p>Each ring version is installed whole, by one volatile write; lookups take no lock.
 */
public final class RingdNodeLocator implements NodeLocator {
  private volatile Routes routes;

  RingdNodeLocator(List<MemcachedNode> connections, @Nullable Placement placement) {
    this.routes = Routes.of(placement, connections);
  }

  /**
   * Routes on placement from now on, unless this locator already routes on a newer version.
   *
   * @return whether placement was installed
   */
  synchronized boolean install(Placement placement) {
    Routes now = routes;
    if (now.placement() != null && placement.version() < now.version()) {
      return false;
    }
    routes = Routes.of(placement, now.connections());
    return true;
  }

  /** The ring version keys are routed on now, 0 before the first. */
  public long version() {
    return routes.version();
  }

  /** The placement keys are routed on now, null before the first version. */
  public @Nullable Placement placement() {
    return routes.placement();
  }

  /**
   * The active nodes of the current version (ids, in id order) whose keys fail with {@link
   * NoRouteException}: no address, an address that is not host:port, or one no connection of this
   * client reaches.
   */
  public List<String> unroutable() {
    return routes.unroutable();
  }

  /**
   * The connection to the memcached of the key's owner.
   *
   * @throws NoRouteException before the first version, with no active node, or when the owner has
   *     no connection in this client
   */
  @Override
  public MemcachedNode getPrimary(String k) {
    return routes.primary(k);
  }

  /** The connections of the rest of the key's ringd preference list, in its order. */
  @Override
  public Iterator<MemcachedNode> getSequence(String k) {
    return routes.sequence(k);
  }

  /** Every connection of the client, for spymemcached's broadcasts (flush, stats) and shutdown. */
  @Override
  public Collection<MemcachedNode> getAll() {
    return routes.connections();
  }

  /**
   * A copy pinned to the current version over read-only views of the connections, as spymemcached's
   * {@code MemcachedClient.getNodeLocator()} hands out; it does not follow the ring.
   */
  @Override
  public NodeLocator getReadonlyCopy() {
    Routes now = routes;
    List<MemcachedNode> views = new ArrayList<>(now.connections().size());
    for (MemcachedNode n : now.connections()) {
      views.add(new MemcachedNodeROImpl(n));
    }
    return new RingdNodeLocator(views, now.placement());
  }

  /** Takes another set of connections, keeping the version it routes on. */
  @Override
  public synchronized void updateLocator(List<MemcachedNode> nodes) {
    routes = Routes.of(routes.placement(), nodes);
  }
}
