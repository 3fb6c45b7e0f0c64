package io.github.ringd.spymemcached;

import io.github.ringd.client.RingClient;
import io.github.ringd.placement.Node;
import io.github.ringd.placement.Placement;
import java.io.IOException;
import java.lang.ref.WeakReference;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import net.spy.memcached.ConnectionFactoryBuilder;
import net.spy.memcached.MemcachedClient;
import net.spy.memcached.MemcachedNode;
import org.jspecify.annotations.Nullable;

/**
 * A spymemcached {@link MemcachedClient} that follows a ringd ring: every key goes to the memcached
 * of the node ringd's placement names as its owner, in the version this routes on, and the client
 * is rebuilt when the ring's addresses change.
 *
 * <pre>{@code
 * RingClient ring = RingClient.builder(urls, "cache").build();
 * ring.awaitReady(Duration.ofSeconds(10));
 * try (RingdMemcached cache = RingdMemcached.builder(ring).build()) {
 *   cache.client().set("user:42", 3600, value).get();
 * }
 * }</pre>
 *
 * <p>spymemcached connects a client to a fixed list of servers. So each version whose active nodes'
 * addresses are the ones the current client holds is installed in its {@link RingdNodeLocator} (one
 * volatile write); a version that adds or drops an address gets a new client over its addresses,
 * built off the ring client's thread, handed out by {@link #client()} once its connections are up
 * (or after the connect timeout), while the previous one keeps serving the callers that hold it and
 * is shut down after {@link Builder#retireAfter}. Until the new client is handed out the old one
 * routes on the previous version, so no key goes to a node ringd does not name. Keys of an active
 * node without a usable address fail with {@link NoRouteException}.
 *
 * <p>Thread-safe. It does not own the ring client: close that after this.
 */
public final class RingdMemcached implements AutoCloseable {
  private final RingClient ring;
  private final ConnectionFactoryBuilder connections;
  private final Duration connectTimeout;
  private final Duration retireAfter;
  private final ExecutorService follower;
  private final ScheduledExecutorService retirer;
  private final List<MemcachedClient> retiring = new ArrayList<>();

  /** What callers get now; replaced whole. Guarded by this for writes, read without a lock. */
  private volatile Generation current = Generation.NONE;

  private volatile @Nullable Exception lastError;
  private volatile boolean closed;

  /** One ring version with the client that serves it (null when no active node is routable). */
  private record Generation(
      long version,
      @Nullable Placement placement,
      @Nullable MemcachedClient client,
      @Nullable RingdNodeLocator locator,
      Map<String, InetSocketAddress> addresses,
      List<String> unroutable) {
    static final Generation NONE = new Generation(0, null, null, null, Map.of(), List.of());
  }

  private RingdMemcached(Builder b) {
    this.ring = b.ring;
    this.connections = b.connections;
    this.connectTimeout = b.connectTimeout;
    this.retireAfter = b.retireAfter;
    this.follower = Executors.newSingleThreadExecutor(daemon("ringd-memcached-follow"));
    this.retirer = Executors.newSingleThreadScheduledExecutor(daemon("ringd-memcached-retire"));
  }

  /** A builder following ring. */
  public static Builder builder(RingClient ring) {
    return new Builder(ring);
  }

  /**
   * The client to send commands through now. Take it per command (or per batch): after the ring's
   * addresses change, the one handed out before is shut down after {@link Builder#retireAfter}.
   *
   * @throws NoRouteException before the first version, or when no active node has a usable address
   */
  public MemcachedClient client() {
    Generation g = current;
    if (g.client() == null) {
      throw new NoRouteException(
          g.placement() == null
              ? "no ring version has arrived yet"
              : "version " + g.version() + " has no active node with a usable address",
          g.version(),
          null,
          null);
    }
    return g.client();
  }

  /** The ring version {@link #client()} routes on, 0 before the first. */
  public long version() {
    return current.version();
  }

  /**
   * The active nodes of the current version (ids, in id order) whose keys fail with {@link
   * NoRouteException}: no address, or one that is not host:port.
   */
  public List<String> unroutable() {
    Generation g = current;
    RingdNodeLocator l = g.locator();
    return l != null ? l.unroutable() : g.unroutable();
  }

  /** The last failure to build a client for a version (it is retried each second), or null. */
  public @Nullable Exception lastError() {
    return lastError;
  }

  /**
   * Waits until {@link #client()} routes on version {@code v} or a newer one.
   *
   * @return whether it does; false on timeout, interruption (the flag is set again) or close
   */
  public synchronized boolean awaitVersion(long v, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    try {
      while (current.version() < v && !closed) {
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
    return current.version() >= v;
  }

  /** Stops following the ring and shuts every client down (waiting up to retireAfter for each). */
  @Override
  public void close() {
    List<MemcachedClient> clients;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      notifyAll();
      clients = new ArrayList<>(retiring);
      MemcachedClient c = current.client();
      if (c != null) {
        clients.add(c);
      }
      retiring.clear();
    }
    follower.shutdownNow();
    retirer.shutdownNow();
    for (MemcachedClient c : clients) {
      c.shutdown(retireAfter.toMillis(), TimeUnit.MILLISECONDS);
    }
  }

  /** Starts following: the current version now, on this thread, then each one the ring applies. */
  private RingdMemcached start() {
    Placement first = ring.placement();
    if (first != null) {
      apply(first);
    }
    WeakReference<RingdMemcached> self = new WeakReference<>(this);
    ring.addListener(
        (now, before) -> {
          RingdMemcached m = self.get();
          if (m != null) {
            m.schedule(0);
          }
        });
    schedule(0); // a version applied before the listener was added
    return this;
  }

  /** Catches up with the ring's newest version on the follower thread, after delayMillis. */
  private void schedule(long delayMillis) {
    if (closed) {
      return;
    }
    try {
      if (delayMillis == 0) {
        follower.execute(this::catchUp);
      } else {
        // Nothing waits on the delayed retry: it only hands catchUp to the follower again.
        var unused = retirer.schedule(() -> schedule(0), delayMillis, TimeUnit.MILLISECONDS);
      }
    } catch (RejectedExecutionException e) {
      // Closed meanwhile: nothing to follow.
    }
  }

  private void catchUp() {
    Placement p = ring.placement();
    if (p != null && !closed && (current.placement() == null || p.version() > current.version())) {
      apply(p);
    }
  }

  /** Routes on p: in the current client when its addresses are p's, else in a new one. */
  private void apply(Placement p) {
    Generation cur = current;
    Map<String, InetSocketAddress> want = new LinkedHashMap<>();
    List<String> unroutable = new ArrayList<>();
    for (Node n : p.nodes()) {
      String a = n.address();
      if (a == null) {
        unroutable.add(n.id());
        continue;
      }
      try {
        Endpoint e = Endpoint.parse(a);
        want.computeIfAbsent(e.toString(), k -> e.socketAddress());
      } catch (IllegalArgumentException notHostPort) {
        unroutable.add(n.id());
      }
    }
    RingdNodeLocator l = cur.locator();
    if (l != null && want.keySet().equals(cur.addresses().keySet())) {
      l.install(p);
      publish(new Generation(p.version(), p, cur.client(), l, cur.addresses(), List.of()), null);
      return;
    }
    if (want.isEmpty()) {
      publish(new Generation(p.version(), p, null, null, Map.of(), List.copyOf(unroutable)), cur);
      return;
    }
    RingdConnectionFactory f = RingdConnectionFactory.pinned(p, connections.build());
    MemcachedClient mc;
    try {
      mc = new MemcachedClient(f, new ArrayList<>(want.values()));
    } catch (IOException | RuntimeException e) {
      // An address that does not resolve or a selector that does not open: keep serving the
      // previous version and try again.
      lastError = e;
      schedule(1000);
      return;
    }
    RingdNodeLocator made = Objects.requireNonNull(f.locator(), "the client made its locator");
    awaitConnected(made);
    publish(new Generation(p.version(), p, mc, made, Map.copyOf(want), List.of()), cur);
  }

  /** Waits (up to the connect timeout) until every connection of a new client is up. */
  private void awaitConnected(RingdNodeLocator l) {
    long deadline = System.nanoTime() + connectTimeout.toNanos();
    while (System.nanoTime() < deadline && !closed) {
      boolean up = true;
      for (MemcachedNode n : l.getAll()) {
        up &= n.isActive();
      }
      if (up) {
        return;
      }
      try {
        Thread.sleep(5);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  /** Hands g out, and retires replaced's client when g has another. */
  private void publish(Generation g, @Nullable Generation replaced) {
    MemcachedClient old = replaced == null ? null : replaced.client();
    synchronized (this) {
      if (closed) {
        if (g.client() != null && g.client() != old) {
          g.client().shutdown(0, TimeUnit.MILLISECONDS);
        }
        return;
      }
      current = g;
      notifyAll();
      if (old == null || old == g.client()) {
        return;
      }
      retiring.add(old);
    }
    try {
      // Nothing waits on the retirement: close() shuts down every client still retiring.
      var unused =
          retirer.schedule(() -> retire(old), retireAfter.toMillis(), TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      retire(old);
    }
  }

  private void retire(MemcachedClient old) {
    synchronized (this) {
      retiring.remove(old);
    }
    old.shutdown(retireAfter.toMillis(), TimeUnit.MILLISECONDS);
  }

  private static java.util.concurrent.ThreadFactory daemon(String name) {
    return r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      return t;
    };
  }

  /** Settings of a {@link RingdMemcached}. */
  public static final class Builder {
    private final RingClient ring;
    private ConnectionFactoryBuilder connections = new ConnectionFactoryBuilder();
    private Duration connectTimeout = Duration.ofSeconds(5);
    private Duration retireAfter = Duration.ofSeconds(10);

    private Builder(RingClient ring) {
      this.ring = Objects.requireNonNull(ring, "ring");
    }

    /**
     * The settings of every client built (protocol, timeouts, transcoder, failure mode...); its
     * locator setting is replaced by ringd's. It is built anew for each client, since a client
     * shuts its factory's executor down with it. Default: spymemcached's defaults.
     */
    public Builder connections(ConnectionFactoryBuilder builder) {
      this.connections = Objects.requireNonNull(builder, "builder");
      return this;
    }

    /** How long a new client may take to connect before it is handed out anyway; default 5 s. */
    public Builder connectTimeout(Duration timeout) {
      this.connectTimeout = positive(timeout, "connectTimeout");
      return this;
    }

    /**
     * How long a replaced client keeps serving the callers that hold it before it is shut down, and
     * then how long its queued operations may take; default 10 s.
     */
    public Builder retireAfter(Duration grace) {
      this.retireAfter = positive(grace, "retireAfter");
      return this;
    }

    /** Builds it, routing on the ring's current version if there is one. */
    public RingdMemcached build() {
      return new RingdMemcached(this).start();
    }

    private static Duration positive(Duration d, String name) {
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException(name + " must be positive: " + d);
      }
      return d;
    }
  }
}
