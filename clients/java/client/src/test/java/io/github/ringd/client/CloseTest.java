package io.github.ringd.client;

import static io.github.ringd.testkit.RingHandle.upsert;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.github.ringd.testkit.RingHandle;
import io.github.ringd.testkit.Ringd;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Closing a client while its watch is parked (a long-poll, a stream) and its acker waits ends both
 * threads quietly: nothing escapes to the application's uncaught-exception handler, which by
 * default prints a stack trace on stderr.
 */
class CloseTest {
  @ParameterizedTest
  @EnumSource(
      value = WatchMode.class,
      names = {"SSE", "LONG_POLL"})
  void closeEndsTheThreadsWithoutAnUncaughtException(WatchMode mode) throws Exception {
    try (Ringd s = Ringd.start()) {
      String name = "close-" + mode.name().toLowerCase(java.util.Locale.ROOT);
      RingHandle r = s.ring(name);
      r.create(Map.of("algorithm", "ring"));
      long v = r.change(upsert("a"), upsert("b"));
      RingClient c = Live.fast(s.url(), name, "closer").watchMode(mode).build();
      Live.waitVersion(c, v);
      Live.waitFor(
          "the ack of v" + v, java.time.Duration.ofSeconds(10), () -> c.status().acked() == v);
      List<Thread> threads = clientThreads(name);
      assertEquals(2, threads.size(), "the watch and ack threads: " + threads);
      List<Throwable> escaped = new CopyOnWriteArrayList<>();
      for (Thread t : threads) {
        t.setUncaughtExceptionHandler((th, e) -> escaped.add(e));
      }
      Live.sleep(200); // let the watch park in its request
      c.close();
      for (Thread t : threads) {
        t.join(10_000);
        assertFalse(t.isAlive(), t + " still running after close");
      }
      assertEquals(List.of(), escaped, "exceptions that escaped the client's threads");
    }
  }

  /**
   * The same while the watch waits for the headers of a server that accepted the connection and
   * never answers (a hung instance): the request in flight is cancelled, and the thread stops.
   */
  @Test
  void closeWhileAwaitingAnAnswerIsQuiet() throws Exception {
    try (ServerSocket hung = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      String url = "http://127.0.0.1:" + hung.getLocalPort();
      RingClient c = Live.fast(url, "hung", "closer").watchMode(WatchMode.LONG_POLL).build();
      Live.waitFor(
          "the watch to be connecting",
          java.time.Duration.ofSeconds(10),
          () -> !clientThreads("hung").isEmpty());
      List<Thread> threads = clientThreads("hung");
      List<Throwable> escaped = new CopyOnWriteArrayList<>();
      for (Thread t : threads) {
        t.setUncaughtExceptionHandler((th, e) -> escaped.add(e));
      }
      Socket accepted = hung.accept();
      try {
        Live.sleep(200); // the request is sent; its answer never comes
        // close() cancels the requests in flight, then interrupts the threads; which of the two a
        // waiting thread sees first is a race. Cancelling alone first makes it see the cancel.
        c.inflight.close();
        Live.sleep(200);
        c.close();
        for (Thread t : threads) {
          t.join(10_000);
          assertFalse(t.isAlive(), t + " still running after close");
        }
      } finally {
        accepted.close();
      }
      assertEquals(List.of(), escaped, "exceptions that escaped the client's threads");
    }
  }

  private static List<Thread> clientThreads(String ring) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(
            t ->
                t.getName().equals("ringd-watch-" + ring)
                    || t.getName().equals("ringd-ack-" + ring))
        .toList();
  }
}
