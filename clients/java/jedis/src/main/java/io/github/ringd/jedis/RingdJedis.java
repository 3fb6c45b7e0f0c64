package io.github.ringd.jedis;

import io.github.ringd.client.RingClient;
import io.github.ringd.placement.Node;
import io.github.ringd.placement.Placement;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import org.jspecify.annotations.Nullable;
import redis.clients.jedis.Connection;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.RedisClient;

/**
 * Routes Redis commands to standalone redis-servers by a ringd ring: {@link #client(String)} is the
 * pooled Jedis {@link RedisClient} of the node ringd's placement names as the key's owner, in the
 * version the ring client routes on.
 *
 * <pre>{@code
 * RingClient ring = RingClient.builder(urls, "sessions").build();
 * ring.awaitReady(Duration.ofSeconds(10));
 * try (RingdJedis redis = RingdJedis.builder(ring).build()) {
 *   redis.client("session:42").setex("session:42", 3600, value);
 * }
 * }</pre>
 *
 * <p>A node's {@code address} ({@code host:port}) is where its Redis listens; each address gets one
 * client (a connection pool), kept across versions while some active node has that address and
 * closed {@link Builder#retireAfter} after the last one leaves, so a caller holding it finishes its
 * command. Each version the ring client applies is installed whole, by one volatile write, on the
 * ring client's thread; lookups take no lock and do not allocate. A key whose owner has no usable
 * address fails with {@link NoRouteException}; it is offered no other server.
 *
 * <p>With {@link Builder#hashTags(boolean)} a key with a {@code {tag}} is placed by its tag, as
 * Redis Cluster and go-redis's Ring do, so {@code user:{42}:cart} lives with ringd's owner of
 * {@code 42}. Thread-safe. It does not own the ring client: close that after this.
 */
public final class RingdJedis implements AutoCloseable {
  private final RingClient ring;
  private final JedisClientConfig clientConfig;
  private final @Nullable GenericObjectPoolConfig<Connection> poolConfig;
  private final boolean hashTags;
  private final Duration retireAfter;
  private final ScheduledExecutorService retirer;

  /** Clients by address (host:port); guarded by this. */
  private final Map<String, Pooled> pools = new HashMap<>();

  private volatile Routes routes = Routes.NONE;
  private volatile boolean closed;

  /** One address's client and, while no active node has the address, its pending close. */
  private static final class Pooled {
    final RedisClient client;
    @Nullable ScheduledFuture<?> retirement;

    Pooled(RedisClient client) {
      this.client = client;
    }
  }

  private RingdJedis(Builder b) {
    this.ring = b.ring;
    this.clientConfig = b.clientConfig;
    this.poolConfig = b.poolConfig;
    this.hashTags = b.hashTags;
    this.retireAfter = b.retireAfter;
    this.retirer =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "ringd-jedis-retire");
              t.setDaemon(true);
              return t;
            });
  }

  /** A builder following ring. */
  public static Builder builder(RingClient ring) {
    return new Builder(ring);
  }

  /**
   * The client of the key's owner. Take it per command: the client of an address that leaves the
   * ring is closed after {@link Builder#retireAfter}.
   *
   * @throws NoRouteException before the first version, with no active node, or when the owner has
   *     no usable address
   */
  public RedisClient client(String key) {
    return routes.client(hashTags ? HashTags.of(key) : key);
  }

  /** {@link #client(String)} for a key held as bytes. */
  public RedisClient client(byte[] key) {
    return routes.client(hashTags ? HashTags.of(key) : key);
  }

  /**
   * The node id of the key's owner (what ringd's lookup names), after the hash tag is cut when hash
   * tags are on; null before the first version or with no active node.
   */
  public @Nullable String owner(String key) {
    Placement p = routes.placement();
    return p == null ? null : p.owner(hashTags ? HashTags.of(key) : key);
  }

  /** The clients of the current version's active nodes that have an address, by node id. */
  public Map<String, RedisClient> clients() {
    return routes.byId();
  }

  /** The active nodes of the current version (ids, in id order) without a usable address. */
  public List<String> unroutable() {
    return routes.unroutable();
  }

  /** The ring version keys are routed on, 0 before the first. */
  public long version() {
    return routes.version();
  }

  /**
   * Waits until keys are routed on version {@code v} or a newer one.
   *
   * @return whether they are; false on timeout, interruption (the flag is set again) or close
   */
  public synchronized boolean awaitVersion(long v, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    try {
      while (routes.version() < v && !closed) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        TimeUnit.NANOSECONDS.timedWait(this, left);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
    return routes.version() >= v;
  }

  /** Stops following the ring and closes every client. */
  @Override
  public void close() {
    List<RedisClient> all = new ArrayList<>();
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      notifyAll();
      for (Pooled p : pools.values()) {
        all.add(p.client);
      }
      pools.clear();
    }
    retirer.shutdownNow();
    for (RedisClient c : all) {
      c.close();
    }
  }

  private RingdJedis start() {
    WeakReference<RingdJedis> self = new WeakReference<>(this);
    ring.addListener(
        (now, before) -> {
          RingdJedis r = self.get();
          if (r != null) {
            r.install(now);
          }
        });
    Placement p = ring.placement();
    if (p != null) {
      install(p);
    }
    return this;
  }

  /** Routes on p unless a newer version is installed. */
  synchronized void install(Placement p) {
    Routes now = routes;
    if (closed || (now.placement() != null && p.version() <= now.version())) {
      return;
    }
    List<Node> nodes = p.nodes();
    @Nullable RedisClient[] byIndex = new RedisClient[nodes.size()];
    Map<String, RedisClient> byId = new LinkedHashMap<>();
    List<String> unroutable = new ArrayList<>();
    Map<String, Pooled> used = new HashMap<>();
    for (int i = 0; i < byIndex.length; i++) {
      Node n = nodes.get(i);
      HostAndPort hp = Addresses.parse(n.address());
      if (hp == null) {
        unroutable.add(n.id());
        continue;
      }
      String key = hp.toString();
      Pooled pooled = pools.computeIfAbsent(key, k -> new Pooled(newClient(hp)));
      if (pooled.retirement != null) {
        pooled.retirement.cancel(false);
        pooled.retirement = null;
      }
      used.put(key, pooled);
      byIndex[i] = pooled.client;
      byId.put(n.id(), pooled.client);
    }
    // Not Map.copyOf, which loses the id order.
    routes = new Routes(p, byIndex, Collections.unmodifiableMap(byId), List.copyOf(unroutable));
    for (Map.Entry<String, Pooled> e : pools.entrySet()) {
      Pooled pooled = e.getValue();
      if (!used.containsKey(e.getKey()) && pooled.retirement == null) {
        pooled.retirement = scheduleRetirement(e.getKey(), pooled);
      }
    }
    notifyAll();
  }

  private RedisClient newClient(HostAndPort hp) {
    var b = RedisClient.builder().hostAndPort(hp).clientConfig(clientConfig);
    if (poolConfig != null) {
      b.poolConfig(poolConfig);
    }
    return b.build();
  }

  private @Nullable ScheduledFuture<?> scheduleRetirement(String address, Pooled pooled) {
    try {
      return retirer.schedule(
          () -> retire(address, pooled), retireAfter.toMillis(), TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      return null; // closing: close() closes it
    }
  }

  /** Closes an address's client if no version has taken it back meanwhile. */
  private void retire(String address, Pooled pooled) {
    synchronized (this) {
      if (pools.get(address) != pooled || pooled.retirement == null) {
        return;
      }
      pools.remove(address);
    }
    pooled.client.close();
  }

  /** Settings of a {@link RingdJedis}. */
  public static final class Builder {
    private final RingClient ring;
    private JedisClientConfig clientConfig = DefaultJedisClientConfig.builder().build();
    private @Nullable GenericObjectPoolConfig<Connection> poolConfig;
    private boolean hashTags;
    private Duration retireAfter = Duration.ofSeconds(10);

    private Builder(RingClient ring) {
      this.ring = Objects.requireNonNull(ring, "ring");
    }

    /** The settings of every client (password, TLS, timeouts, database...); default Jedis's. */
    public Builder clientConfig(JedisClientConfig config) {
      this.clientConfig = Objects.requireNonNull(config, "config");
      return this;
    }

    /** The pool settings of every client; default Jedis's. */
    public Builder poolConfig(GenericObjectPoolConfig<Connection> config) {
      this.poolConfig = Objects.requireNonNull(config, "config");
      return this;
    }

    /** Whether a key's {@code {tag}} alone is placed (Redis Cluster's rule); default false. */
    public Builder hashTags(boolean on) {
      this.hashTags = on;
      return this;
    }

    /**
     * How long the client of an address that leaves the ring stays open for the callers that hold
     * it; default 10 s.
     */
    public Builder retireAfter(Duration grace) {
      if (grace.isNegative() || grace.isZero()) {
        throw new IllegalArgumentException("retireAfter must be positive: " + grace);
      }
      this.retireAfter = grace;
      return this;
    }

    /** Builds it, routing on the ring's current version if there is one. */
    public RingdJedis build() {
      return new RingdJedis(this).start();
    }
  }
}
