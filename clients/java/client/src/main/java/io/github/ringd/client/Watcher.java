package io.github.ringd.client;

import io.github.ringd.placement.Algorithm;
import io.github.ringd.placement.Placement;
import io.github.ringd.placement.PlacementException;
import io.github.ringd.placement.Snapshot;
import io.github.ringd.placement.TableSource;
import java.time.Duration;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The thread that follows the ring: streams or long-polls, verifies every version and swaps it in,
 * and backs off between failed attempts.
 */
final class Watcher implements Runnable {
  /**
   * Why one watch attempt ended. unsupported: the stream cannot be used through this server or a
   * proxy in front of it (the route is missing, refused, or delivers nothing), so AUTO long-polls
   * instead. server: the one to move behind the next, null for none. retryAfter: the wait a 503 or
   * 429 asked for.
   */
  record Failure(
      boolean unsupported,
      @Nullable String server,
      RingdException error,
      @Nullable Duration retryAfter) {
    static Failure of(@Nullable String server, RingdException error) {
      return new Failure(false, server, error, null);
    }

    static Failure unsupported(@Nullable String server, RingdException error) {
      return new Failure(true, server, error, null);
    }
  }

  /** How a placement was built. */
  enum Built {
    SNAPSHOT,
    MOVES,
    DOWNLOAD
  }

  final RingClient c;
  final Backoff backoff;

  /**
   * The newest version refused and its stated fingerprint. Watching resumes after it: fetching it
   * again would only fail again (a tampered copy, or rules this client does not share), so the
   * client waits for the next version instead.
   */
  long rejected;

  @Nullable String rejectedFp;
  private boolean useStream;
  private long streamAgain; // System.nanoTime() when AUTO tries the stream again; 0 for never

  Watcher(RingClient c) {
    this.c = c;
    this.backoff = new Backoff(c.settings.backoffMin, c.settings.backoffMax);
  }

  @Override
  public void run() {
    Settings s = c.settings;
    useStream = s.mode != WatchMode.LONG_POLL;
    try {
      while (!c.isClosed()) {
        if (!useStream
            && s.mode == WatchMode.AUTO
            && streamAgain != 0
            && System.nanoTime() - streamAgain > 0) {
          useStream = true;
          streamAgain = 0;
        }
        Failure f = useStream ? SseWatch.stream(this) : LongPoll.poll(this);
        if (f == null || c.isClosed()) {
          continue;
        }
        if (f.unsupported() && useStream && s.mode == WatchMode.AUTO) {
          // Only a stream falls back; a refused long-poll backs off.
          useStream = false;
          streamAgain = System.nanoTime() + s.sseRetry.toNanos();
          setError(f.error());
          continue;
        }
        if (f.server() != null) {
          c.endpoints.demote(f.server());
        }
        c.update(
            st -> {
              st.transport = Transport.CONNECTING;
              st.server = null;
              st.error(f.error());
              st.reconnects++;
            });
        c.notify(
            new ClientEvent(
                ClientEvent.Kind.DISCONNECTED,
                held(),
                0,
                false,
                f.server(),
                null,
                f.error(),
                Duration.ZERO));
        long wait = f.retryAfter() != null ? backoff.afterRefusal(f.retryAfter()) : backoff.next();
        Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
      }
    } catch (InterruptedException e) {
      // Closed.
    }
  }

  String ringPath() {
    return "/v1/rings/" + c.ring();
  }

  void setError(RingdException e) {
    c.update(st -> st.error(e));
  }

  /** The version routed on, 0 for none. */
  long held() {
    return c.version();
  }

  /** Where to resume: after the version held, or after a newer one that was refused. */
  long resumeAfter() {
    return Math.max(held(), rejected);
  }

  void connected(Transport t, String server) {
    boolean[] changed = new boolean[1];
    c.update(
        st -> {
          changed[0] = st.transport != t || !server.equals(st.server);
          st.transport = t;
          st.server = server;
        });
    if (changed[0]) {
      c.notify(
          new ClientEvent(
              ClientEvent.Kind.CONNECTED, held(), 0, false, server, t, null, Duration.ZERO));
    }
  }

  /**
   * Turns a refused request into a failure, noting a deleted ring. A 503 or 429 with a Retry-After
   * (a server at its --max-watchers) asks the next attempt to wait. It names no server to demote:
   * after a 503 every other server was tried within the attempt.
   */
  Failure refused(RingdException e) {
    if (e instanceof ApiException api) {
      int st = api.status();
      if (api.isRingNotFound()) {
        if (held() > 0) {
          markDeleted();
        }
      } else if (st == 503 || st == 429) {
        if (api.retryAfter().isPresent()) {
          return new Failure(false, null, e, api.retryAfter().get());
        }
      } else if (st == 404 || st == 405 || st == 406 || st == 501) {
        return Failure.unsupported(null, e);
      }
    }
    return Failure.of(null, e);
  }

  void markDeleted() {
    boolean[] newly = new boolean[1];
    c.update(
        st -> {
          newly[0] = !st.deleted;
          st.deleted = true;
        });
    if (newly[0]) {
      c.notify(ClientEvent.of(ClientEvent.Kind.DELETED, held(), null));
    }
  }

  /** Records a refused version; the placement held stays. */
  void reject(long version, @Nullable String stated, Throwable cause) {
    if (stated != null) {
      if (rejected == version && stated.equals(rejectedFp)) {
        return;
      }
      if (rejected <= version) {
        rejected = version;
        rejectedFp = stated;
      }
    }
    SnapshotException e = new SnapshotException(c.ring(), version, cause);
    c.update(
        st -> {
          st.refused++;
          st.error(e);
        });
    c.notify(ClientEvent.of(ClientEvent.Kind.REFUSED, version, e));
  }

  /** Parses a snapshot body and applies it; id is the version the event named, 0 for none. */
  void applyJson(byte[] body, String what, boolean reset, long id) throws InterruptedException {
    Snapshot s;
    try {
      s = Snapshot.parse(body);
    } catch (PlacementException e) {
      reject(id, null, new MalformedException(what, e.getMessage(), e));
      return;
    }
    apply(s, reset);
  }

  /** Verifies s and, if it holds, routes on it from now on. */
  void apply(Snapshot s, boolean reset) throws InterruptedException {
    Placement held = c.placement();
    if (held != null) {
      boolean same = s.version() == held.version() && s.fingerprint().equals(held.fingerprint());
      if (same || (!reset && s.version() <= held.version())) {
        return;
      }
    }
    String named = s.ring();
    if (named != null && !named.isEmpty() && !named.equals(c.ring())) {
      reject(
          s.version(),
          s.fingerprint(),
          new MalformedException("snapshot", "it names ring " + named, null));
      return;
    }
    long start = System.nanoTime();
    Placement p;
    Built[] built = new Built[1];
    try {
      p = verified(held, s, built);
    } catch (UnreachableException e) {
      // A table download that did not get through says nothing about the version: keep the one
      // held and take it again as it comes.
      setError(e);
      return;
    } catch (ApiException e) {
      if (e.problem().isEmpty() || e.status() >= 500) {
        setError(e);
        return;
      }
      reject(s.version(), s.fingerprint(), e);
      return;
    } catch (PlacementException | MalformedException e) {
      reject(s.version(), s.fingerprint(), e);
      return;
    }
    if (reset || rejected <= s.version()) {
      // Past the refused version, or on a history without it.
      rejected = 0;
      rejectedFp = null;
    }
    Placement before = c.swap(p);
    c.update(
        st -> {
          st.version = s.version();
          st.fingerprint = s.fingerprint();
          st.deleted = false;
          st.applied++;
          if (built[0] == Built.MOVES) {
            st.tableMovesApplied++;
          } else if (built[0] == Built.DOWNLOAD) {
            st.tableDownloads++;
          }
          // An ack of a higher version belongs to a deleted ring's history.
          if (st.acked > s.version()) {
            st.acked = 0;
          }
        });
    c.ackDue.offer(Boolean.TRUE); // when full, an ack is already due: it sends the newest
    c.notify(
        new ClientEvent(
            ClientEvent.Kind.APPLIED,
            s.version(),
            before == null ? 0 : before.version(),
            reset,
            null,
            null,
            null,
            Duration.ofNanos(System.nanoTime() - start)));
  }

  /**
   * Builds and verifies s's placement. A table snapshot carries no table: it is completed from the
   * placement held and this version's moves when the client holds version − 1, otherwise (or when
   * the moves do not verify) by downloading {@code …/snapshots/{v}/table}. Either way the result
   * must hash to the snapshot's fingerprint.
   */
  private Placement verified(@Nullable Placement held, Snapshot s, Built[] built)
      throws InterruptedException {
    built[0] = Built.SNAPSHOT;
    if (s.algorithm() != Algorithm.TABLE) {
      return s.placement(TableSource.none());
    }
    if (held != null
        && s.tableMoves() != null
        && held.version() + 1 == s.version()
        && held.algorithm() == Algorithm.TABLE) {
      try {
        Placement p = s.placement(TableSource.previous(held));
        built[0] = Built.MOVES;
        return p;
      } catch (PlacementException e) {
        // Moves that do not verify are no reason to refuse the version: the table itself may
        // still be good.
      }
    }
    try {
      return s.placement(TableSource.none());
    } catch (PlacementException e) {
      if (!e.is(PlacementException.Reason.TABLE_REQUIRED)) {
        throw e; // no active node: nothing to download
      }
    }
    built[0] = Built.DOWNLOAD;
    String path = ringPath() + "/snapshots/" + s.version() + "/table";
    Endpoints.Answer a = c.endpoints.call("GET", path, null, Map.of(), 0, c.inflight);
    return s.placement(TableSource.encoding(a.body()));
  }
}
