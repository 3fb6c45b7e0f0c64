package io.github.ringd.client;

import io.github.ringd.placement.Placement;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The thread that acks each version once it is applied (only the newest if several arrive while an
 * ack is in flight), and the current one again every ack interval so it does not expire under the
 * server's --client-ttl. ringd closes each ack's connection once answered ({@code Connection:
 * close}), so a following client holds one connection to the server, its watch's.
 */
final class Acker implements Runnable {
  private final RingClient c;

  Acker(RingClient c) {
    this.c = c;
  }

  @Override
  public void run() {
    String path = "/v1/rings/" + c.ring() + "/clients/" + c.clientId() + "/ack";
    Backoff b = new Backoff(c.settings.backoffMin, c.settings.backoffMax);
    try {
      while (!c.isClosed()) {
        long wait = c.settings.ackInterval.toNanos();
        Placement p = c.placement();
        if (p != null) {
          wait = ack(path, p, b, wait);
        }
        // A newer version cuts the wait short.
        c.ackDue.poll(wait, TimeUnit.NANOSECONDS);
      }
    } catch (InterruptedException e) {
      // Closed.
    }
  }

  /** Acks p; returns the wait before the next ack. */
  private long ack(String path, Placement p, Backoff b, long wait) throws InterruptedException {
    // Kind is left out for a library, so acks stay readable by servers from before kinds existed
    // (they refuse unknown fields).
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("version", p.version());
    body.put("fingerprint", p.fingerprint());
    if (c.settings.kind != ClientKind.LIBRARY) {
      body.put("kind", c.settings.kind.wireName());
    }
    RingdException err = null;
    try {
      c.endpoints.send("POST", path, body, c.inflight);
    } catch (RingdException e) {
      err = e;
    }
    if (c.isClosed()) {
      throw new InterruptedException("closed");
    }
    long next = wait;
    if (err == null) {
      b.reset();
      c.update(
          st -> {
            st.acks++;
            // Only while that version is still the one routed on: a late answer must not mark a
            // recreated ring as acked.
            Placement cur = c.placement();
            if (cur != null
                && cur.version() == p.version()
                && cur.fingerprint().equals(p.fingerprint())) {
              st.acked = p.version();
            }
          });
    } else {
      RingdException e = err;
      c.update(
          st -> {
            st.ackFailures++;
            st.error(e);
          });
      // A 4xx: the ring was deleted or recreated below this version; the watch brings what
      // replaces it, so wait for that rather than retry.
      boolean refused = e instanceof ApiException api && api.status() >= 400 && api.status() < 500;
      if (!refused) {
        next = b.next();
      }
    }
    c.notify(ClientEvent.of(ClientEvent.Kind.ACKED, p.version(), err));
    return next;
  }
}
