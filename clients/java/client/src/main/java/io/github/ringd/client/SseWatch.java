package io.github.ringd.client;

import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/** One watch stream: opened after the version held, its events applied until it breaks. */
final class SseWatch {
  private SseWatch() {}

  /** Streams until the stream breaks; the failure, or null when the client closed. */
  static Watcher.@Nullable Failure stream(Watcher w) throws InterruptedException {
    RingClient c = w.c;
    Map<String, String> headers = new HashMap<>();
    headers.put("Accept", "text/event-stream");
    long after = w.resumeAfter();
    if (after > 0) {
      // Last-Event-ID, as an EventSource resumes: the server replays every version after it.
      headers.put("Last-Event-ID", Long.toString(after));
    }
    long idleNanos = c.settings.idleTimeout.toNanos();
    Endpoints.Opened o;
    try {
      // The idle timeout also bounds the wait for the answer.
      o = c.endpoints.open("GET", w.ringPath() + "/watch", null, headers, idleNanos, c.inflight);
    } catch (UnreachableException e) {
      if (e.getCause() instanceof HttpTimeoutException) {
        return Watcher.Failure.of(
            c.endpoints.first(),
            new UnreachableException(
                e.urls(),
                new HttpTimeoutException(
                    "no answer to the watch within " + c.settings.idleTimeout)));
      }
      return w.refused(e);
    } catch (ApiException e) {
      return w.refused(e);
    }
    String server = o.server();
    InputStream in = o.response().body();
    c.inflight.track(in);
    // Cuts a stream that sends nothing, not even the keep-alive, for the idle timeout; each
    // chunk read pushes it back.
    Scheduler.Idle idle = new Scheduler.Idle(idleNanos, () -> Inflight.quietly(in));
    try {
      String ct = o.response().headers().firstValue("Content-Type").orElse("");
      if (!ct.startsWith("text/event-stream")) {
        return Watcher.Failure.unsupported(
            server,
            new RingdException(
                server + " answered the watch with \"" + ct + "\", not an event stream"));
      }
      w.connected(Transport.SSE, server);
      return read(w, in, server, idle);
    } finally {
      idle.cancel();
      c.inflight.untrack(in);
      Inflight.quietly(in);
    }
  }

  private static Watcher.@Nullable Failure read(
      Watcher w, InputStream in, String server, Scheduler.Idle idle) throws InterruptedException {
    RingClient c = w.c;
    SseDecoder dec = new SseDecoder();
    byte[] buf = new byte[64 << 10];
    boolean gotAny = false;
    IOException ended = null;
    while (true) {
      int n;
      try {
        n = in.read(buf);
      } catch (IOException e) {
        ended = e;
        n = -1;
      }
      if (n < 0) {
        break;
      }
      idle.touch();
      List<SseDecoder.Event> events = new ArrayList<>(1);
      SseDecoder.MalformedStreamException fault = null;
      try {
        dec.feed(buf, n, events);
      } catch (SseDecoder.MalformedStreamException e) {
        fault = e;
      }
      for (SseDecoder.Event ev : events) {
        if (!gotAny) {
          gotAny = true;
          w.backoff.reset();
        }
        onEvent(w, ev);
        if (c.isClosed()) {
          return null;
        }
        idle.touch(); // applying (a table download) is not the stream going quiet
      }
      if (fault != null) {
        return Watcher.Failure.of(
            server, new MalformedException(server + " watch stream", fault.getMessage(), fault));
      }
    }
    if (c.isClosed()) {
      return null;
    }
    if (idle.fired() && !gotAny) {
      return Watcher.Failure.unsupported(
          server,
          new RingdException(
              server
                  + " sent no event within "
                  + c.settings.idleTimeout
                  + " (a buffering proxy?)"));
    }
    if (idle.fired()) {
      return Watcher.Failure.of(
          server, new RingdException(server + " sent nothing for " + c.settings.idleTimeout));
    }
    return Watcher.Failure.of(
        server,
        new RingdException(
            "stream from " + server + " ended" + (ended == null ? "" : ": " + ended), ended));
  }

  private static void onEvent(Watcher w, SseDecoder.Event ev) throws InterruptedException {
    switch (ev.event()) {
      case "snapshot", "reset" -> {
        long id = 0;
        try {
          id = ev.id() == null ? 0 : Long.parseUnsignedLong(ev.id());
        } catch (NumberFormatException e) {
          // An unreadable id names no version.
        }
        w.applyJson(
            ev.data().getBytes(StandardCharsets.UTF_8),
            ev.event() + " event",
            ev.event().equals("reset"),
            id);
      }
      case "deleted" -> w.markDeleted();
      case "keepalive" -> checkKeepalive(w, ev.data());
      default -> {
        // Other types (health, rollout, stale, and any added later) are not about versions:
        // ignored, as the API asks of clients.
      }
    }
  }

  /**
   * Compares the newest version a keep-alive names with the one held: the same number with another
   * fingerprint, or a lower number, means the ring was deleted and recreated while the client was
   * away, so the current snapshot replaces what the client holds.
   */
  private static void checkKeepalive(Watcher w, String data) throws InterruptedException {
    Map<String, @Nullable Object> k;
    try {
      k = Json.object(data.getBytes(StandardCharsets.UTF_8));
    } catch (IOException e) {
      return;
    }
    Long v = Json.integer(k, "version");
    String fp = Json.string(k, "fingerprint");
    io.github.ringd.placement.Placement held = w.c.placement();
    if (v == null || fp == null || held == null) {
      return;
    }
    boolean diverged =
        (v == held.version() && !fp.equals(held.fingerprint())) || v < held.version();
    if (!diverged || (w.rejected == v && fp.equals(w.rejectedFp))) {
      return;
    }
    String path = w.ringPath() + "/snapshot";
    Endpoints.Answer a;
    try {
      a = w.c.endpoints.call("GET", path, null, Map.of(), 0, w.c.inflight);
    } catch (RingdException e) {
      w.setError(e);
      return;
    }
    w.applyJson(a.body(), a.server() + path, true, 0);
  }
}
