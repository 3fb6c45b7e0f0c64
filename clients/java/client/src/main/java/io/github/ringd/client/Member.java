package io.github.ringd.client;

import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;
import javax.net.ssl.SSLContext;
import org.jspecify.annotations.Nullable;

/**
 * Keeps a node in a ring with a lease, as {@code ringd node join} does: a daemon thread registers
 * the node ({@code PUT …/nodes/{node}/lease}), renews about every third of the TTL with jitter (so
 * members started together spread out), fails over between the servers, registers again at once
 * when the lease was lost, and releases it on {@link #leave} or {@link #close}, so ringd marks the
 * node left at once rather than after the TTL. Thread-safe.
 */
public final class Member implements AutoCloseable {
  private final String ring;
  private final String node;
  final CountDownLatch stop = new CountDownLatch(1);
  private final CountDownLatch done = new CountDownLatch(1);
  private volatile @Nullable RingdException releaseError;
  private final Object lock = new Object();
  private MemberStatus status = MemberStatus.initial();

  private Member(String ring, String node) {
    this.ring = ring;
    this.node = node;
  }

  /**
   * A builder for a member keeping node in ring on the servers urls (each entry may itself be a
   * comma-separated list).
   */
  public static Builder builder(List<String> urls, String ring, NodeRecord node) {
    return new Builder(urls, ring, node);
  }

  /** The ring joined. */
  public String ring() {
    return ring;
  }

  /** The node kept in it. */
  public String node() {
    return node;
  }

  /** The status now. */
  public MemberStatus status() {
    synchronized (lock) {
      return status;
    }
  }

  void update(UnaryOperator<MemberStatus> f) {
    synchronized (lock) {
      status = f.apply(status);
      lock.notifyAll();
    }
  }

  /**
   * Waits until done holds for the status and returns it.
   *
   * @throws WaitTimeoutException after timeout, or once the member stopped (left or failed) without
   *     done holding ({@link WaitTimeoutException#closed()}); its cause is the last error
   */
  public MemberStatus awaitStatus(Predicate<MemberStatus> done, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    synchronized (lock) {
      while (true) {
        MemberStatus st = status;
        if (done.test(st)) {
          return st;
        }
        String what = "member " + node + " of ring " + ring;
        if (st.state().isFinal()) {
          throw new WaitTimeoutException(what, timeout, true, st.lastError());
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new WaitTimeoutException(what, timeout, false, st.lastError());
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

  /** Waits until the member has stopped (left or failed); false if timeout passed first. */
  public boolean awaitDone(Duration timeout) {
    try {
      return done.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /**
   * Stops renewing and releases the lease, so ringd marks the node left at once. It waits for a
   * request in flight first, so a registration it raced with is released too.
   *
   * @throws RingdException the release's failure, if ringd could not be told (the lease then
   *     expires by its TTL)
   * @throws WaitTimeoutException if the release did not end within timeout (it still goes on)
   */
  public void leave(Duration timeout) {
    stop.countDown();
    if (!awaitDone(timeout)) {
      throw new WaitTimeoutException("leaving ring " + ring, timeout, false, null);
    }
    RingdException e = releaseError;
    if (e != null) {
      throw e;
    }
  }

  /**
   * {@link #leave} within 10 s, without throwing: a release that fails leaves the lease to expire
   * by its TTL.
   */
  @Override
  public void close() {
    stop.countDown();
    awaitDone(Duration.ofSeconds(10));
  }

  void finished(@Nullable RingdException release) {
    releaseError = release;
    done.countDown();
  }

  /** Sets up a {@link Member}; {@link #build} starts it. */
  public static final class Builder {
    private final List<String> urls;
    private final String ring;
    private final NodeRecord record;
    private final Settings s = new Settings();

    private Builder(List<String> urls, String ring, NodeRecord node) {
      this.urls = List.copyOf(urls);
      this.ring = ring;
      this.record = node;
    }

    /** Sent as {@code Authorization: Bearer …}: registering changes the ring, so the admin one. */
    public Builder token(String token) {
      s.token = token;
      return this;
    }

    /** How long the lease lasts without a renewal (default 10 s; 1 s to 1 h, whole ms). */
    public Builder leaseTtl(Duration ttl) {
      s.leaseTtl = ttl;
      return this;
    }

    /** The wait after a failed request, from min doubling to max (defaults 100 ms and 10 s). */
    public Builder backoff(Duration min, Duration max) {
      s.backoffMin = min;
      s.backoffMax = max;
      return this;
    }

    /**
     * The time limit of each lease request (default a third of the TTL, 500 ms to 10 s, so one hung
     * server cannot use up a lease).
     */
    public Builder requestTimeout(Duration d) {
      s.requestTimeout = d;
      s.timeoutSet = true;
      return this;
    }

    /** Uses context for https:// servers. */
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

    /** Sends every request through client. */
    public Builder httpClient(HttpClient client) {
      s.httpClient = client;
      return this;
    }

    /**
     * Starts keeping the node in the ring. It returns at once; {@link #awaitStatus} waits for the
     * registration.
     *
     * @throws IllegalArgumentException for a malformed URL, ring name or node id, or a setting out
     *     of range
     */
    public Member build() {
      Settings.checkRing(ring);
      Settings.check(
          Settings.ID_NAME.matcher(record.id()).matches(),
          "node id "
              + record.id()
              + ": 1-128 characters of A-Z a-z 0-9 . _ - :, starting with a letter or digit");
      Duration ttl = s.leaseTtl;
      Settings.check(
          ttl.compareTo(Duration.ofSeconds(1)) >= 0
              && ttl.compareTo(Duration.ofHours(1)) <= 0
              && ttl.toNanos() % 1_000_000 == 0,
          "the lease TTL " + ttl + " is out of range: use 1s to 1h");
      s.checkBackoff();
      if (!s.timeoutSet) {
        long third = ttl.toMillis() / 3;
        s.requestTimeout = Duration.ofMillis(Math.min(Math.max(third, 500), 10_000));
      }
      Settings.check(Settings.positive(s.requestTimeout), "the request timeout must be positive");
      Endpoints eps = new Endpoints(urls, s.token, s.http(), s.requestTimeout);
      Member m = new Member(ring, record.id());
      MemberTask task = new MemberTask(m, eps, record, s);
      Thread t = new Thread(task, "ringd-member-" + record.id());
      t.setDaemon(true);
      t.start();
      return m;
    }
  }
}
