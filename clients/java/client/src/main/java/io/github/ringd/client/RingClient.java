package io.github.ringd.client;

import io.github.ringd.placement.Placement;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.ToLongFunction;
import javax.net.ssl.SSLContext;
import org.jspecify.annotations.Nullable;

/**
 * Follows one ring and answers lookups from a verified copy of its placement in memory, with no
 * network call and no lock on the lookup path. A background daemon thread watches the ring (a
 * Server-Sent Events stream, or long-polls), verifies each version against its fingerprint, swaps
 * it in atomically (one volatile field) and acks it from a second thread. Thread-safe. {@link
 * #close} stops both threads; lookups keep answering from the last version.
 *
 * <pre>{@code
 * try (RingClient c = RingClient.builder(List.of("http://10.0.0.1:7420"), "cache").build()) {
 *   c.awaitReady(Duration.ofSeconds(10));
 *   String node = c.owner("user:42");
 * }
 * }</pre>
 */
public final class RingClient implements AutoCloseable {
  /** What one swap installs: the placement routed on and the one it replaced, as one value. */
  record Views(Placement current, @Nullable Placement previous) {}

  private final String ring;
  private final String clientId;
  final Settings settings;
  final Endpoints endpoints;
  final Inflight inflight = new Inflight();
  private volatile @Nullable Views views;

  private final Object lock = new Object();
  private final Status.Mutable status = new Status.Mutable();
  private volatile boolean closed;

  private final Object listenerLock = new Object();
  private final List<VersionListener> listeners = new CopyOnWriteArrayList<>();

  /** A new version to ack (capacity 1: the newest wins, as the acker reads the views). */
  final ArrayBlockingQueue<Boolean> ackDue = new ArrayBlockingQueue<>(1);

  private final Thread watcher;
  private final @Nullable Thread acker;

  private RingClient(Builder b, List<String> urls) {
    Settings s = b.s;
    this.ring = b.ring;
    this.clientId = s.clientId != null ? s.clientId : defaultClientId();
    Settings.check(
        Settings.ID_NAME.matcher(clientId).matches(),
        "client id "
            + clientId
            + ": 1-128 characters of A-Z a-z 0-9 . _ - :, starting with a letter or digit");
    s.checkBackoff();
    Settings.check(
        Settings.positive(s.idleTimeout)
            && Settings.positive(s.ackInterval)
            && Settings.positive(s.sseRetry)
            && Settings.positive(s.requestTimeout),
        "the idle timeout, ack interval, SSE retry and request timeout must be more than zero");
    Settings.check(
        s.longPollWait.compareTo(Duration.ofMillis(1)) >= 0
            && s.longPollWait.compareTo(Duration.ofMinutes(5)) <= 0,
        "the long-poll wait must be 1ms to 5m, the range the server accepts");
    this.settings = s;
    this.endpoints = new Endpoints(urls, s.token, s.http(), s.requestTimeout);
    listeners.addAll(b.listeners);
    this.watcher = new Thread(new Watcher(this), "ringd-watch-" + ring);
    watcher.setDaemon(true);
    this.acker = s.ack ? new Thread(new Acker(this), "ringd-ack-" + ring) : null;
    if (acker != null) {
      acker.setDaemon(true);
    }
  }

  private void start() {
    watcher.start();
    if (acker != null) {
      acker.start();
    }
  }

  /**
   * A builder for a client following ring on the servers urls (equivalent ringd instances; each
   * entry may itself be a comma-separated list, as RINGD_ADDR is).
   */
  public static Builder builder(List<String> urls, String ring) {
    return new Builder(urls, ring);
  }

  /** host-pid, cut to the client-id rules. */
  private static String defaultClientId() {
    String host;
    try {
      host = InetAddress.getLocalHost().getHostName();
    } catch (UnknownHostException e) {
      host = "";
    }
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < host.length(); i++) {
      char c = host.charAt(i);
      boolean ok =
          (c >= 'a' && c <= 'z')
              || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9')
              || c == '.'
              || c == '_'
              || c == '-';
      sb.append(ok ? c : '-');
    }
    String h = sb.toString().replaceFirst("^[._-]+", "");
    if (h.length() > 100) {
      h = h.substring(0, 100);
    }
    if (h.isEmpty()) {
      h = "client";
    }
    return h + "-" + ProcessHandle.current().pid();
  }

  /** The ring followed. */
  public String ring() {
    return ring;
  }

  /** The id acks are sent under. */
  public String clientId() {
    return clientId;
  }

  /** The verified placement routed on: one volatile read; null before the first version. */
  public @Nullable Placement placement() {
    Views v = views;
    return v == null ? null : v.current();
  }

  /**
   * The node that owns key (any bytes); null before the first version or when no node is active.
   * Never blocks.
   */
  public @Nullable String owner(byte[] key) {
    Views v = views;
    return v == null ? null : v.current().owner(key);
  }

  /** {@link #owner(byte[])} of a text key's UTF-8 bytes. */
  public @Nullable String owner(CharSequence key) {
    Views v = views;
    return v == null ? null : v.current().owner(key);
  }

  /**
   * The first r distinct nodes for key, owner first (fewer when fewer nodes are active; none before
   * the first version).
   */
  public List<String> preferenceList(byte[] key, int r) {
    Views v = views;
    return v == null ? List.of() : v.current().preferenceList(key, r);
  }

  /**
   * Key's owner now and before the last change, read in one volatile load, so that a cache can read
   * a key that just moved through to its previous owner instead of sending every client's misses of
   * the moved share to the backing store at once.
   */
  public Handoff handoff(byte[] key) {
    Views v = views;
    if (v == null) {
      return new Handoff(null, null, 0, 0);
    }
    Placement before = v.previous();
    return new Handoff(
        v.current().owner(key),
        before == null ? null : before.owner(key),
        v.current().version(),
        before == null ? 0 : before.version());
  }

  /**
   * The node for a request any replica can serve, under bounded loads (see {@link
   * BoundedLoad#pick}); null before the first version or with no active node.
   */
  public @Nullable String pick(BoundedLoad b, byte[] key, ToLongFunction<String> load) {
    Views v = views;
    return v == null ? null : b.pick(v.current(), key, load);
  }

  /** The version routed on, 0 before the first. */
  public long version() {
    Views v = views;
    return v == null ? 0 : v.current().version();
  }

  /** What the watch is doing now. */
  public Status status() {
    synchronized (lock) {
      return status.freeze();
    }
  }

  /**
   * Adds l, told of every version applied from now on; if a version is held, l is first told of it
   * (before null) on this thread, so it never misses the version held when it was added.
   */
  public void addListener(VersionListener l) {
    synchronized (listenerLock) {
      listeners.add(l);
      Placement p = placement();
      if (p != null) {
        tell(l, p, null);
      }
    }
  }

  /** Removes l. */
  public void removeListener(VersionListener l) {
    listeners.remove(l);
  }

  /**
   * Waits for the first verified version.
   *
   * @throws WaitTimeoutException after timeout, or when closed; its cause is the last failure met
   *     (a wrong token's {@link ApiException}, an {@link UnreachableException})
   */
  public void awaitReady(Duration timeout) {
    awaitStatus(s -> s.version() > 0, timeout, "waiting for the first version of ring " + ring);
  }

  /** Waits until the client routes on version v or a newer one, and returns that status. */
  public Status awaitVersion(long v, Duration timeout) {
    return awaitStatus(s -> s.version() >= v, timeout, "waiting for version " + v);
  }

  /**
   * Waits until done holds for the status, and returns that status.
   *
   * @throws WaitTimeoutException after timeout, or when closed, with the last failure as cause
   */
  public Status awaitStatus(Predicate<Status> done, Duration timeout) {
    return awaitStatus(done, timeout, "waiting on ring " + ring);
  }

  private Status awaitStatus(Predicate<Status> done, Duration timeout, String what) {
    long deadline = System.nanoTime() + timeout.toNanos();
    synchronized (lock) {
      while (true) {
        Status st = status.freeze();
        if (done.test(st)) {
          return st;
        }
        long left = deadline - System.nanoTime();
        if (closed || left <= 0) {
          throw new WaitTimeoutException(what, timeout, closed, st.lastError());
        }
        try {
          lock.wait(Math.max(1, left / 1_000_000));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new WaitTimeoutException(what + ": interrupted", timeout, false, st.lastError());
        }
      }
    }
  }

  /**
   * Stops watching and acking and waits (up to 10 s) for both threads to end: afterwards no
   * listener or observer is called. Lookups keep answering from the last version. Safe to call
   * twice.
   */
  @Override
  public void close() {
    synchronized (lock) {
      closed = true;
      lock.notifyAll();
    }
    inflight.close();
    List<Thread> threads = new ArrayList<>();
    threads.add(watcher);
    if (acker != null) {
      threads.add(acker);
    }
    for (Thread t : threads) {
      t.interrupt();
    }
    for (Thread t : threads) {
      if (t != Thread.currentThread()) {
        try {
          t.join(10_000);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
  }

  boolean isClosed() {
    return closed;
  }

  @Nullable Views views() {
    return views;
  }

  /** Changes the status under the lock and wakes the waiters. */
  void update(Consumer<Status.Mutable> f) {
    synchronized (lock) {
      f.accept(status);
      lock.notifyAll();
    }
  }

  void notify(ClientEvent e) {
    Consumer<ClientEvent> o = settings.observer;
    if (o != null && !closed) {
      try {
        o.accept(e);
      } catch (RuntimeException ignored) {
        // An observer's failure is its own; the watch goes on.
      }
    }
  }

  /** Installs p as the placement routed on, tells the listeners, and returns the one replaced. */
  @Nullable Placement swap(Placement p) {
    synchronized (listenerLock) {
      Views old = views;
      Placement before = old == null ? null : old.current();
      views = new Views(p, before);
      for (VersionListener l : listeners) {
        tell(l, p, before);
      }
      return before;
    }
  }

  private static void tell(VersionListener l, Placement now, @Nullable Placement before) {
    try {
      l.applied(now, before);
    } catch (RuntimeException ignored) {
      // A listener's failure is its own; the swap stands.
    }
  }

  /** Sets up a {@link RingClient}; {@link #build} starts it. */
  public static final class Builder {
    private final List<String> urls;
    private final String ring;
    final Settings s = new Settings();
    private final List<VersionListener> listeners = new ArrayList<>();

    private Builder(List<String> urls, String ring) {
      this.urls = List.copyOf(urls);
      this.ring = ring;
    }

    /** Sent as {@code Authorization: Bearer …}: the read token is enough. */
    public Builder token(String token) {
      s.token = token;
      return this;
    }

    /** The id acks are sent under (default: host name and process id). */
    public Builder clientId(String id) {
      s.clientId = id;
      return this;
    }

    /** How new versions arrive (default {@link WatchMode#AUTO}). */
    public Builder watchMode(WatchMode mode) {
      s.mode = mode;
      return this;
    }

    /** Whether to ack each version applied (default true). */
    public Builder ack(boolean on) {
      s.ack = on;
      return this;
    }

    /**
     * How often the current version is acked again while nothing changes, so the ack outlives the
     * server's --client-ttl (default 60 s; keep it below that TTL).
     */
    public Builder ackInterval(Duration d) {
      s.ackInterval = d;
      return this;
    }

    /** What kind of client acks (default {@link ClientKind#LIBRARY}). */
    public Builder kind(ClientKind kind) {
      s.kind = kind;
      return this;
    }

    /**
     * The wait after a failed attempt: it starts at min and doubles up to max, each wait drawn from
     * the upper half of the step (defaults 100 ms and 10 s). A watch refused with 503 or 429 and a
     * Retry-After waits at least min(Retry-After, max) plus up to 1 s of jitter.
     */
    public Builder backoff(Duration min, Duration max) {
      s.backoffMin = min;
      s.backoffMax = max;
      return this;
    }

    /** How long each long-poll waits on the server (default 30 s; 1 ms to 5 min). */
    public Builder longPollWait(Duration d) {
      s.longPollWait = d;
      return this;
    }

    /**
     * Drops and reopens a stream that delivers nothing, not even a keep-alive, for this long
     * (default 60 s, above the server's 15 s keep-alive). It also bounds the wait for a stream's
     * first event, after which {@link WatchMode#AUTO} takes the stream for unusable.
     */
    public Builder idleTimeout(Duration d) {
      s.idleTimeout = d;
      return this;
    }

    /**
     * How long {@link WatchMode#AUTO} long-polls before trying the stream again (default 5 min).
     */
    public Builder sseRetry(Duration d) {
      s.sseRetry = d;
      return this;
    }

    /** The time limit of plain requests: acks, version and table fetches (default 10 s). */
    public Builder requestTimeout(Duration d) {
      s.requestTimeout = d;
      s.timeoutSet = true;
      return this;
    }

    /** Uses context for https:// servers: a private CA, a client certificate for mutual TLS. */
    public Builder sslContext(SSLContext context) {
      s.sslContext = context;
      return this;
    }

    /** {@link #sslContext} of PEM files: see {@link Tls#fromPemFiles}. */
    public Builder tlsFiles(
        @Nullable Path caFile, @Nullable Path certFile, @Nullable Path keyFile) {
      s.sslContext = Tls.fromPemFiles(caFile, certFile, keyFile);
      return this;
    }

    /**
     * Sends every request through client (its TLS settings, proxy, executor); the TLS options are
     * then ignored. Use HTTP/1.1: ringd serves nothing else.
     */
    public Builder httpClient(HttpClient client) {
      s.httpClient = client;
      return this;
    }

    /** Adds a listener, told of every version applied. */
    public Builder addListener(VersionListener l) {
      listeners.add(l);
      return this;
    }

    /**
     * Calls observer with every {@link ClientEvent}, from the client's threads: it must not block.
     */
    public Builder observer(Consumer<ClientEvent> observer) {
      s.observer = observer;
      return this;
    }

    /**
     * Starts following. It returns at once: {@link #awaitReady} waits for the first version.
     *
     * @throws IllegalArgumentException for a malformed URL, ring name or client id, or a setting
     *     out of range
     */
    public RingClient build() {
      Settings.checkRing(ring);
      RingClient c = new RingClient(this, urls);
      c.start();
      return c;
    }
  }
}
