package io.github.ringd.client;

import io.github.ringd.placement.PlacementException;
import io.github.ringd.placement.Snapshot;
import java.time.Duration;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/** One long-poll of the ring's snapshot, and the versions it skipped. */
final class LongPoll {
  private LongPoll() {}

  /**
   * The most missing versions a long-poll fetches one by one, so observers see every version as on
   * a stream; a larger gap is bridged by jumping to the newest (a reset).
   */
  static final int MAX_GAP = 64;

  /** A duration as the API writes it: 30s, 500ms. */
  static String formatWait(Duration d) {
    long ms = d.toMillis();
    return ms % 1000 == 0 ? (ms / 1000) + "s" : ms + "ms";
  }

  /** One long-poll; null after a new version or an empty wait. */
  static Watcher.@Nullable Failure poll(Watcher w) throws InterruptedException {
    RingClient c = w.c;
    Settings s = c.settings;
    String path = w.ringPath() + "/snapshot";
    long held = w.resumeAfter();
    if (held > 0) {
      path += "?after=" + held + "&wait=" + formatWait(s.longPollWait);
    }
    // The server may add up to 1/16 of the wait as jitter.
    long wait = s.longPollWait.toNanos();
    long limit = wait + wait / 16 + s.requestTimeout.toNanos();
    Endpoints.Answer a;
    try {
      a = c.endpoints.call("GET", path, null, Map.of(), limit, c.inflight);
    } catch (RingdException e) {
      return w.refused(e);
    }
    w.connected(Transport.LONG_POLL, a.server());
    w.backoff.reset();
    if (a.status() == 304) {
      return null;
    }
    boolean reset = a.headers().firstValue("Ringd-Reset").map("true"::equals).orElse(false);
    Snapshot snap;
    try {
      snap = Snapshot.parse(a.body());
    } catch (PlacementException e) {
      MalformedException m = new MalformedException(a.server() + path, e.getMessage(), e);
      w.reject(0, null, m);
      // Refused without a version to resume after: back off rather than ask again at once.
      return Watcher.Failure.of(a.server(), m);
    }
    if (held > 0 && !reset) {
      if (snap.version() > held + 1 + MAX_GAP) {
        reset = true;
      } else {
        for (long v = held + 1; v < snap.version(); v++) {
          String p = w.ringPath() + "/snapshots/" + v;
          Endpoints.Answer b;
          try {
            b = c.endpoints.call("GET", p, null, Map.of(), 0, c.inflight);
          } catch (ApiException e) {
            if (e.status() == 404 || e.status() == 410) {
              reset = true; // pruned: bridge the gap
              break;
            }
            return w.refused(e);
          } catch (RingdException e) {
            return w.refused(e);
          }
          w.applyJson(b.body(), b.server() + p, false, v);
        }
      }
    }
    w.apply(snap, reset);
    return null;
  }
}
