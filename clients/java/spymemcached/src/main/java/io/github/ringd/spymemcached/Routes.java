package io.github.ringd.spymemcached;

import io.github.ringd.placement.Node;
import io.github.ringd.placement.Placement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import net.spy.memcached.MemcachedNode;
import org.jspecify.annotations.Nullable;

/**
 * One ring version as spymemcached sees it: the placement and, for each of its active nodes, the
 * connection to that node's address, when this client holds one. Immutable, so a locator swaps a
 * whole version at once and a lookup never pairs one version's owner with another's connections.
 */
final class Routes {
  private final @Nullable Placement placement;
  private final List<MemcachedNode> connections;
  private final @Nullable MemcachedNode[] byIndex;
  private final Map<String, MemcachedNode> byId;
  private final List<String> unroutable;

  private Routes(
      @Nullable Placement placement,
      List<MemcachedNode> connections,
      @Nullable MemcachedNode[] byIndex,
      Map<String, MemcachedNode> byId,
      List<String> unroutable) {
    this.placement = placement;
    this.connections = connections;
    this.byIndex = byIndex;
    this.byId = byId;
    this.unroutable = unroutable;
  }

  /** The routes of placement (null: no version yet) over the connections given. */
  static Routes of(@Nullable Placement placement, List<MemcachedNode> connections) {
    List<MemcachedNode> conns = List.copyOf(connections);
    if (placement == null) {
      return new Routes(null, conns, new MemcachedNode[0], Map.of(), List.of());
    }
    List<Node> nodes = placement.nodes();
    @Nullable MemcachedNode[] byIndex = new MemcachedNode[nodes.size()];
    Map<String, MemcachedNode> byId = new HashMap<>();
    List<String> unroutable = new ArrayList<>();
    for (int i = 0; i < byIndex.length; i++) {
      Node n = nodes.get(i);
      MemcachedNode c = connectionOf(n.address(), conns);
      if (c == null) {
        unroutable.add(n.id());
      } else {
        byIndex[i] = c;
        byId.put(n.id(), c);
      }
    }
    return new Routes(placement, conns, byIndex, Map.copyOf(byId), List.copyOf(unroutable));
  }

  /** The connection to address, null when there is none or the address is not host:port. */
  private static @Nullable MemcachedNode connectionOf(
      @Nullable String address, List<MemcachedNode> conns) {
    if (address == null) {
      return null;
    }
    Endpoint e;
    try {
      e = Endpoint.parse(address);
    } catch (IllegalArgumentException notHostPort) {
      return null;
    }
    for (MemcachedNode c : conns) {
      if (e.matches(c.getSocketAddress())) {
        return c;
      }
    }
    return null;
  }

  /** The placement, null before the first version. */
  @Nullable Placement placement() {
    return placement;
  }

  /** The ring version, 0 before the first. */
  long version() {
    return placement == null ? 0 : placement.version();
  }

  /** Every connection of the client, in the order spymemcached made them. */
  List<MemcachedNode> connections() {
    return connections;
  }

  /** The active nodes (ids, in id order) this version names but no connection reaches. */
  List<String> unroutable() {
    return unroutable;
  }

  /**
   * The connection to the owner of key. It does not allocate.
   *
   * @throws NoRouteException before the first version, with no active node, or when the owner has
   *     no connection here
   */
  MemcachedNode primary(String key) {
    Placement p = placement;
    if (p == null) {
      throw new NoRouteException("no ring version has arrived yet", 0, null, null);
    }
    int i = p.ownerIndex(key);
    if (i < 0) {
      throw new NoRouteException(
          "version " + p.version() + " has no active node", p.version(), null, null);
    }
    MemcachedNode c = byIndex[i];
    if (c == null) {
      Node n = p.node(i);
      throw new NoRouteException(
          "version "
              + p.version()
              + ": the owner "
              + n.id()
              + (n.address() == null
                  ? " has no address"
                  : " is at " + n.address() + ", to which this client has no connection"),
          p.version(),
          n.id(),
          n.address());
    }
    return c;
  }

  /**
   * The connections of the key's preference list after its owner, in ringd's order: where
   * spymemcached sends the key when its owner's connection is down (FailureMode.Redistribute).
   * Nodes without a connection are skipped.
   */
  Iterator<MemcachedNode> sequence(String key) {
    Placement p = placement;
    if (p == null) {
      return List.<MemcachedNode>of().iterator();
    }
    List<String> ids = p.preferenceList(key, p.nodes().size());
    List<MemcachedNode> out = new ArrayList<>(Math.max(0, ids.size() - 1));
    for (int k = 1; k < ids.size(); k++) {
      MemcachedNode c = byId.get(ids.get(k));
      if (c != null) {
        out.add(c);
      }
    }
    return out.iterator();
  }
}
