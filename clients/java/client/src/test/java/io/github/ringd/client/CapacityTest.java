package io.github.ringd.client;

import static io.github.ringd.client.Live.assertRoutesLikeServer;
import static io.github.ringd.client.Live.waitFor;
import static io.github.ringd.client.Live.waitVersion;
import static io.github.ringd.testkit.RingHandle.upsert;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.github.ringd.testkit.RingHandle;
import io.github.ringd.testkit.Ringd;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** A server at its --max-watchers: Retry-After is honoured, and the next URL tried at once. */
class CapacityTest {
  private static final HttpClient HTTP =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  /** The value of the unlabelled sample name on the server's /metrics. */
  static double metric(RingHandle r, String name) {
    String text = r.send("GET", "/metrics", null).text();
    for (String line : text.split("\n", -1)) {
      if (line.startsWith(name + " ")) {
        return Double.parseDouble(line.substring(name.length() + 1).strip());
      }
    }
    return fail("/metrics has no " + name);
  }

  /** Takes a watcher slot with a raw watch stream; closing the stream releases it. */
  static InputStream holdWatch(String base, String ring) throws IOException, InterruptedException {
    HttpResponse<InputStream> resp =
        HTTP.send(
            HttpRequest.newBuilder(URI.create(base + "/v1/rings/" + ring + "/watch"))
                .header("Accept", "text/event-stream")
                .build(),
            HttpResponse.BodyHandlers.ofInputStream());
    assertEquals(200, resp.statusCode());
    return resp.body();
  }

  /**
   * Starts ringd with --max-watchers 1, holds its only slot, and starts a client with the default
   * backoff (100 ms to 10 s), streaming and long-polling. Its watch is refused 503 at-capacity with
   * a Retry-After of 1 to 10 s; 900 ms after it met the refusal the server has still refused
   * exactly one watcher (the backoff alone would be back within 100 ms). Once the slot is free the
   * client is admitted and follows the ring.
   */
  @ParameterizedTest
  @EnumSource(
      value = WatchMode.class,
      names = {"AUTO", "LONG_POLL"})
  void waitsForRetryAfterWhenTheServerIsAtCapacity(WatchMode mode) throws Exception {
    Transport transport = mode == WatchMode.LONG_POLL ? Transport.LONG_POLL : Transport.SSE;
    try (Ringd s = Ringd.start("--max-watchers", "1")) {
      RingHandle r = s.ring("r");
      r.create(Map.of());
      r.change(upsert("a", 1));
      InputStream held = holdWatch(s.url(), "r");
      assertEquals(1, metric(r, "ringd_watchers"));
      assertEquals(0, metric(r, "ringd_watchers_refused_total"));
      try (RingClient c =
          RingClient.builder(List.of(s.url()), "r")
              .clientId("at-capacity-" + mode)
              .watchMode(mode)
              .longPollWait(Duration.ofSeconds(2))
              .build()) {
        waitFor(
            "the first refusal",
            Duration.ofSeconds(20),
            () -> metric(r, "ringd_watchers_refused_total") >= 1);
        Status st = c.awaitStatus(x -> x.reconnects() >= 1, Duration.ofSeconds(10));
        ApiException refusal = assertInstanceOf(ApiException.class, st.lastError());
        assertEquals(503, refusal.status());
        assertEquals("at-capacity", refusal.slug());
        Duration asked = refusal.retryAfter().orElseThrow();
        assertTrue(
            asked.compareTo(Duration.ofSeconds(1)) >= 0
                && asked.compareTo(Duration.ofSeconds(10)) <= 0
                && asked.toNanos() % 1_000_000_000L == 0,
            "Retry-After " + asked);
        // A refused stream holds nothing yet; the long-poll's plain GET before it took no slot.
        assertEquals(mode == WatchMode.LONG_POLL ? 2 : 0, st.version(), st::toString);
        assertEquals(1, st.reconnects(), st::toString);
        assertEquals(Transport.CONNECTING, st.transport(), st::toString);
        assertNull(st.server());
        Instant at = st.lastErrorAt();
        long sleep = Duration.between(Instant.now(), at.plusMillis(900)).toMillis();
        Live.sleep(Math.max(0, sleep));
        assertEquals(
            1,
            metric(r, "ringd_watchers_refused_total"),
            "the client came back before the Retry-After of " + asked);
        Status now = c.status();
        assertEquals(1, now.reconnects(), now::toString);
        assertSame(st.lastError(), now.lastError());

        held.close();
        c.awaitStatus(x -> x.version() == 2 && x.transport() == transport, Duration.ofSeconds(30));
        waitFor(
            "the client's watch to hold the slot",
            Duration.ofSeconds(30),
            () -> metric(r, "ringd_watchers") == 1);
        long v = r.change(upsert("b", 1));
        st = waitVersion(c, v);
        assertEquals(3, v);
        assertEquals(transport, st.transport());
        assertEquals(s.url(), st.server());
        assertEquals(0, st.refused());
        assertRoutesLikeServer(r, c, 3, 2);
        // Every failed attempt was one refusal, and nothing else was refused.
        assertEquals((double) st.reconnects(), metric(r, "ringd_watchers_refused_total"));
      }
    }
  }

  /**
   * Two servers, the first at its --max-watchers: its 503 is tried on the second within the same
   * attempt, so the client follows through the second at once, without a failed attempt.
   */
  @Test
  void aFullServerSendsTheWatchToTheNextUrl() throws Exception {
    try (Ringd full = Ringd.start("--max-watchers", "1");
        Ringd spare = Ringd.start()) {
      for (Ringd s : List.of(full, spare)) {
        s.ring("r").create(Map.of());
        s.ring("r").change(upsert("a", 1));
      }
      try (InputStream held = holdWatch(full.url(), "r");
          RingClient c =
              RingClient.builder(List.of(full.url(), spare.url()), "r")
                  .clientId("next-url")
                  .build()) {
        Status st = waitVersion(c, 2);
        assertEquals(spare.url(), st.server());
        assertEquals(Transport.SSE, st.transport());
        assertEquals(0, st.reconnects());
        assertNull(st.lastError());
        assertEquals(1, metric(full.ring("r"), "ringd_watchers_refused_total"));
        assertEquals(1, metric(spare.ring("r"), "ringd_watchers"));
        long v = spare.ring("r").change(upsert("b", 1));
        st = waitVersion(c, v);
        assertEquals(spare.url(), st.server());
        assertEquals(0, st.reconnects());
        assertEquals(1, metric(full.ring("r"), "ringd_watchers_refused_total"));
        assertTrue(held.available() >= 0);
      }
    }
  }
}
