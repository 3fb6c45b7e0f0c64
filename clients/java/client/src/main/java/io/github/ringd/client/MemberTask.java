package io.github.ringd.client;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/** The thread behind a {@link Member}: registers, renews, registers again, releases. */
final class MemberTask implements Runnable {
  /** What a failed request means for the member. */
  enum Outcome {
    /** Try again after a backoff. */
    TRANSIENT,
    /** Register again at once. */
    LEASE_GONE,
    /** Asking again cannot change it: stop. */
    FATAL
  }

  /**
   * A lease held; expires is when it expires at the latest on this machine's clock (nanoTime): the
   * TTL from when the request that set it was sent, no later than the server's deadline.
   */
  private record Held(String id, long expires) {}

  private final Member m;
  private final Endpoints eps;
  private final String path;
  private final Map<String, Object> body;
  private final long ttlNanos;
  private final Backoff backoff;

  /** Never closed: a release must still go out when the member is told to stop. */
  private final Inflight inflight = new Inflight();

  MemberTask(Member m, Endpoints eps, NodeRecord n, Settings s) {
    this.m = m;
    this.eps = eps;
    this.path = "/v1/rings/" + m.ring() + "/nodes/" + n.id() + "/lease";
    this.body = leaseBody(n, s.leaseTtl);
    this.ttlNanos = s.leaseTtl.toNanos();
    this.backoff = new Backoff(s.backoffMin, s.backoffMax);
  }

  /**
   * The body of {@code PUT …/lease}: the record without its id (the path names it), and state only
   * when set, so a ring whose policy decides a joining node's state gets to decide it.
   */
  static Map<String, Object> leaseBody(NodeRecord n, Duration ttl) {
    Map<String, Object> b = new LinkedHashMap<>();
    putIf(b, "address", n.address());
    if (n.weight() != 0) {
      b.put("weight", n.weight());
    }
    putIf(b, "zone", n.zone());
    putIf(b, "hash_key", n.hashKey());
    putIf(b, "state", n.state());
    if (!n.labels().isEmpty()) {
      b.put("labels", n.labels());
    }
    b.put("ttl", LongPoll.formatWait(ttl));
    return b;
  }

  private static void putIf(Map<String, Object> b, String k, @Nullable String v) {
    if (v != null && !v.isEmpty()) {
      b.put(k, v);
    }
  }

  static Outcome classify(RingdException e) {
    if (!(e instanceof ApiException api)) {
      return Outcome.TRANSIENT;
    }
    int st = api.status();
    if (api.isLeaseNotFound() || st == 409) {
      // 409 on a renewal: the id names another node's lease; a new registration gets this node
      // its own.
      return Outcome.LEASE_GONE;
    }
    if (st == 408 || st == 425 || st == 429) {
      return Outcome.TRANSIENT;
    }
    return st >= 400 && st < 500 ? Outcome.FATAL : Outcome.TRANSIENT;
  }

  @Override
  public void run() {
    RingdException release = null;
    try {
      release = loop();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      m.update(st -> st.state().isFinal() ? st : copy(st, MemberState.LEFT));
      m.finished(release);
    }
  }

  private @Nullable RingdException loop() throws InterruptedException {
    Held h = null;
    while (m.stop.getCount() > 0) {
      long wait;
      if (h == null) {
        try {
          h = call("PUT", path, true);
          wait = renewalWait();
        } catch (RingdException e) {
          if (classify(e) == Outcome.FATAL) {
            m.update(st -> withError(copy(st, MemberState.FAILED), e));
            return null;
          }
          m.update(st -> withError(st, e));
          wait = backoff.next();
        }
      } else {
        try {
          h = call("POST", path + "/" + h.id() + "/renew", false);
          wait = renewalWait();
        } catch (RingdException e) {
          Outcome o = classify(e);
          if (o == Outcome.FATAL) {
            m.update(st -> withError(copy(st, MemberState.FAILED), e));
            return null;
          }
          if (o == Outcome.LEASE_GONE) {
            h = null;
            lose(e);
            wait = 0;
          } else if (System.nanoTime() - h.expires() > 0) {
            h = null;
            wait = backoff.next();
            lose(e);
          } else {
            m.update(st -> withError(st, e));
            // Retry soon enough to renew before the deadline.
            wait = Math.min(backoff.next(), (h.expires() - System.nanoTime()) / 2);
          }
        }
      }
      if (wait > 0 && m.stop.await(wait, TimeUnit.NANOSECONDS)) {
        break;
      }
    }
    RingdException err = null;
    if (h != null) {
      try {
        call("DELETE", path + "/" + h.id(), false);
      } catch (RingdException e) {
        if (classify(e) != Outcome.LEASE_GONE) {
          err = e; // already gone is nothing left to release
        }
      }
    }
    m.update(st -> copy(st, MemberState.LEFT));
    return err;
  }

  /** About a third of the TTL, drawn from [1/4, 5/12) of it so members spread their renewals. */
  private long renewalWait() {
    long third = ttlNanos / 3;
    return third * 3 / 4 + Backoff.jitter(third / 2);
  }

  private void lose(RingdException e) {
    m.update(
        st ->
            new MemberStatus(
                MemberState.LOST,
                st.leaseId(),
                st.deadline(),
                st.version(),
                st.server(),
                st.heartbeats(),
                st.losses() + 1,
                e));
  }

  private static MemberStatus copy(MemberStatus st, MemberState state) {
    return new MemberStatus(
        state,
        st.leaseId(),
        st.deadline(),
        st.version(),
        st.server(),
        st.heartbeats(),
        st.losses(),
        st.lastError());
  }

  private static MemberStatus withError(MemberStatus st, RingdException e) {
    return new MemberStatus(
        st.state(),
        st.leaseId(),
        st.deadline(),
        st.version(),
        st.server(),
        st.heartbeats(),
        st.losses(),
        e);
  }

  /**
   * Sends one lease request and records the answer. On a transport failure it demotes the server
   * tried first, so the next attempt starts elsewhere even after a timeout (which a write does not
   * fail over on).
   */
  private Held call(String method, String p, boolean register) throws InterruptedException {
    String first = eps.first();
    long sent = System.nanoTime();
    Endpoints.Answer a;
    try {
      a = eps.send(method, p, "PUT".equals(method) ? body : null, inflight);
    } catch (UnreachableException e) {
      eps.demote(first);
      throw e;
    }
    if ("DELETE".equals(method)) {
      return new Held("", sent);
    }
    Map<String, @Nullable Object> v;
    try {
      v = Json.object(a.body());
    } catch (IOException e) {
      throw new MalformedException(a.server() + p, e.getMessage(), e);
    }
    String id = Json.string(v, "lease_id");
    if (id == null || id.length() != 32) {
      throw new MalformedException(a.server() + p, "no 32-digit lease_id", null);
    }
    Instant deadline = instant(Json.string(v, "deadline"));
    Long version = Json.integer(v, "version");
    backoff.reset();
    m.update(
        st ->
            new MemberStatus(
                register ? MemberState.REGISTERED : MemberState.RENEWING,
                id,
                deadline,
                register && version != null ? version : st.version(),
                a.server(),
                st.heartbeats() + 1,
                st.losses(),
                null));
    return new Held(id, sent + ttlNanos);
  }

  private static @Nullable Instant instant(@Nullable String s) {
    if (s == null) {
      return null;
    }
    try {
      return OffsetDateTime.parse(s).toInstant();
    } catch (DateTimeParseException e) {
      return null;
    }
  }
}
