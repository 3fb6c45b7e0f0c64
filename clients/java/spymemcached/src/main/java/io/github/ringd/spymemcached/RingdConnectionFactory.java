package io.github.ringd.spymemcached;

import io.github.ringd.client.RingClient;
import io.github.ringd.placement.Placement;
import java.io.IOException;
import java.lang.ref.WeakReference;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.channels.SocketChannel;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import net.spy.memcached.ConnectionFactory;
import net.spy.memcached.ConnectionObserver;
import net.spy.memcached.FailureMode;
import net.spy.memcached.HashAlgorithm;
import net.spy.memcached.MemcachedConnection;
import net.spy.memcached.MemcachedNode;
import net.spy.memcached.NodeLocator;
import net.spy.memcached.OperationFactory;
import net.spy.memcached.auth.AuthDescriptor;
import net.spy.memcached.metrics.MetricCollector;
import net.spy.memcached.metrics.MetricType;
import net.spy.memcached.ops.Operation;
import net.spy.memcached.transcoders.Transcoder;
import org.jspecify.annotations.Nullable;

/**
 * A spymemcached {@link ConnectionFactory} whose locator is a {@link RingdNodeLocator}: every other
 * setting is the base factory's (build it with {@code ConnectionFactoryBuilder}, whose own locator
 * setting is then unused).
 *
 * <pre>{@code
 * ConnectionFactory cf = RingdConnectionFactory.following(ring,
 *     new ConnectionFactoryBuilder().setProtocol(Protocol.BINARY).build());
 * MemcachedClient mc = new MemcachedClient(cf, addresses);
 * }</pre>
 *
 * <p>A {@code MemcachedClient} connects to the addresses it is built with and to no other, for its
 * whole life; keys of a node at any other address fail with {@link NoRouteException}. Give it every
 * address the ring will name, or use {@link RingdMemcached}, which builds a new client when the
 * ring's addresses change. One factory makes one client: spymemcached shuts the base factory's
 * listener executor down with the client.
 */
public final class RingdConnectionFactory implements ConnectionFactory {
  private final ConnectionFactory base;
  private final @Nullable RingClient ring;
  private final @Nullable Placement pinned;
  private volatile @Nullable RingdNodeLocator locator;

  private RingdConnectionFactory(
      ConnectionFactory base, @Nullable RingClient ring, @Nullable Placement pinned) {
    this.base = Objects.requireNonNull(base, "base");
    this.ring = ring;
    this.pinned = pinned;
  }

  /**
   * A factory whose locator follows ring: it routes on the ring's current placement (none before
   * the first version) and installs each version the client applies.
   */
  public static RingdConnectionFactory following(RingClient ring, ConnectionFactory base) {
    return new RingdConnectionFactory(base, Objects.requireNonNull(ring, "ring"), null);
  }

  /**
   * A factory whose locator routes on placement until told otherwise, for {@link RingdMemcached}.
   */
  static RingdConnectionFactory pinned(Placement placement, ConnectionFactory base) {
    return new RingdConnectionFactory(base, null, Objects.requireNonNull(placement, "placement"));
  }

  /** The locator this factory made for its client, null before the client was built. */
  public @Nullable RingdNodeLocator locator() {
    return locator;
  }

  @Override
  public NodeLocator createLocator(List<MemcachedNode> nodes) {
    RingClient r = ring;
    RingdNodeLocator l = new RingdNodeLocator(nodes, r != null ? r.placement() : pinned);
    if (r != null) {
      // The ring client keeps its listeners for its whole life; a weak reference lets a closed
      // memcached client's locator be collected, its listener then doing nothing.
      WeakReference<RingdNodeLocator> ref = new WeakReference<>(l);
      r.addListener(
          (now, before) -> {
            RingdNodeLocator target = ref.get();
            if (target != null) {
              target.install(now);
            }
          });
      // A version applied between the read above and the registration.
      Placement p = r.placement();
      if (p != null) {
        l.install(p);
      }
    }
    locator = l;
    return l;
  }

  /** Connects to addrs as spymemcached's own factories do, with this factory's locator. */
  @Override
  public MemcachedConnection createConnection(List<InetSocketAddress> addrs) throws IOException {
    return new MemcachedConnection(
        getReadBufSize(),
        this,
        addrs,
        getInitialObservers(),
        getFailureMode(),
        getOperationFactory());
  }

  @Override
  public MemcachedNode createMemcachedNode(SocketAddress sa, SocketChannel c, int bufSize) {
    return base.createMemcachedNode(sa, c, bufSize);
  }

  @Override
  public BlockingQueue<Operation> createOperationQueue() {
    return base.createOperationQueue();
  }

  @Override
  public BlockingQueue<Operation> createReadOperationQueue() {
    return base.createReadOperationQueue();
  }

  @Override
  public BlockingQueue<Operation> createWriteOperationQueue() {
    return base.createWriteOperationQueue();
  }

  @Override
  public long getOpQueueMaxBlockTime() {
    return base.getOpQueueMaxBlockTime();
  }

  @Override
  public ExecutorService getListenerExecutorService() {
    return base.getListenerExecutorService();
  }

  @Override
  public boolean isDefaultExecutorService() {
    return base.isDefaultExecutorService();
  }

  @Override
  public OperationFactory getOperationFactory() {
    return base.getOperationFactory();
  }

  @Override
  public long getOperationTimeout() {
    return base.getOperationTimeout();
  }

  @Override
  public boolean isDaemon() {
    return base.isDaemon();
  }

  @Override
  public boolean useNagleAlgorithm() {
    return base.useNagleAlgorithm();
  }

  @Override
  public Collection<ConnectionObserver> getInitialObservers() {
    return base.getInitialObservers();
  }

  @Override
  public FailureMode getFailureMode() {
    return base.getFailureMode();
  }

  @Override
  public Transcoder<Object> getDefaultTranscoder() {
    return base.getDefaultTranscoder();
  }

  @Override
  public boolean shouldOptimize() {
    return base.shouldOptimize();
  }

  @Override
  public int getReadBufSize() {
    return base.getReadBufSize();
  }

  /** The base's hash; ringd's placement, not this, hashes keys. */
  @Override
  public HashAlgorithm getHashAlg() {
    return base.getHashAlg();
  }

  @Override
  public long getMaxReconnectDelay() {
    return base.getMaxReconnectDelay();
  }

  @Override
  public AuthDescriptor getAuthDescriptor() {
    return base.getAuthDescriptor();
  }

  @Override
  public int getTimeoutExceptionThreshold() {
    return base.getTimeoutExceptionThreshold();
  }

  @Override
  public MetricType enableMetrics() {
    return base.enableMetrics();
  }

  @Override
  public MetricCollector getMetricCollector() {
    return base.getMetricCollector();
  }

  @Override
  public long getAuthWaitTime() {
    return base.getAuthWaitTime();
  }
}
