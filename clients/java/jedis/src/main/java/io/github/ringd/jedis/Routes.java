package io.github.ringd.jedis;

import io.github.ringd.placement.Node;
import io.github.ringd.placement.Placement;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import redis.clients.jedis.RedisClient;

/**
 * One ring version as the router sees it: the placement and the client of each active node that has
 * a usable address. Immutable, so a version is installed whole and a lookup never pairs one
 * version's owner with another's clients.
 */
final class Routes {
  static final Routes NONE = new Routes(null, new RedisClient[0], Map.of(), List.of());

  private final @Nullable Placement placement;
  private final @Nullable RedisClient[] byIndex;
  private final Map<String, RedisClient> byId;
  private final List<String> unroutable;

  /**
   * @param placement the version's placement, null before the first
   * @param byIndex the client of each active node by placement index, null without an address
   * @param byId the clients by node id, in id order
   * @param unroutable the active nodes without a usable address, in id order
   */
  Routes(
      @Nullable Placement placement,
      @Nullable RedisClient[] byIndex,
      Map<String, RedisClient> byId,
      List<String> unroutable) {
    this.placement = placement;
    this.byIndex = byIndex;
    this.byId = byId;
    this.unroutable = unroutable;
  }

  @Nullable Placement placement() {
    return placement;
  }

  Map<String, RedisClient> byId() {
    return byId;
  }

  List<String> unroutable() {
    return unroutable;
  }

  /** The ring version, 0 before the first. */
  long version() {
    return placement == null ? 0 : placement.version();
  }

  /** The client of the owner of the key whose hashed part is key. It does not allocate. */
  RedisClient client(CharSequence key) {
    Placement p = placement;
    if (p == null) {
      throw noVersion();
    }
    return at(p, p.ownerIndex(key));
  }

  /** {@link #client(CharSequence)} for a key held as bytes. It does not allocate. */
  RedisClient client(byte[] key) {
    Placement p = placement;
    if (p == null) {
      throw noVersion();
    }
    return at(p, p.ownerIndex(key));
  }

  private RedisClient at(Placement p, int i) {
    if (i < 0) {
      throw new NoRouteException(
          "version " + p.version() + " has no active node", p.version(), null, null);
    }
    RedisClient c = byIndex[i];
    if (c == null) {
      Node n = p.node(i);
      throw new NoRouteException(
          "version "
              + p.version()
              + ": the owner "
              + n.id()
              + (n.address() == null
                  ? " has no address"
                  : " has address " + n.address() + ", which is not host:port"),
          p.version(),
          n.id(),
          n.address());
    }
    return c;
  }

  private static NoRouteException noVersion() {
    return new NoRouteException("no ring version has arrived yet", 0, null, null);
  }
}
