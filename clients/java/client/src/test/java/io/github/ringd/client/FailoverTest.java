package io.github.ringd.client;

import static io.github.ringd.client.Live.assertRoutesLikeServer;
import static io.github.ringd.client.Live.fast;
import static io.github.ringd.client.Live.waitFor;
import static io.github.ringd.client.Live.waitVersion;
import static io.github.ringd.testkit.RingHandle.upsert;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.github.ringd.testkit.RingHandle;
import io.github.ringd.testkit.Ringd;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.Test;

/** Reconnecting, failing over, and long-polling when streams cannot be had. */
class FailoverTest {
  /**
   * Kills the server under a stream and starts it again on the same port and data: the client
   * reconnects, resumes after the version it holds and follows the next changes.
   */
  @Test
  void resumesAfterTheServerRestarts() {
    try (Ringd s = Ringd.start()) {
      RingHandle r = s.ring("r");
      r.create(Map.of());
      r.change(upsert("a", 1), upsert("b", 1));
      try (RingClient c = fast(s.url(), "r", "restart").build()) {
        waitVersion(c, 2);
        s.restart();
        r = s.ring("r");
        r.change(upsert("c", 1));
        Status st = waitVersion(c, 3);
        assertTrue(st.reconnects() > 0, st::toString);
        assertEquals(2, st.applied(), st::toString);
        assertEquals(0, st.refused(), st::toString);
        assertEquals(Transport.SSE, st.transport(), st::toString);
        assertRoutesLikeServer(r, c, 3, 2);
      }
    }
  }

  /** Follows a ring through one proxy, shuts it down, and follows on through the second URL. */
  @Test
  void failsOverToTheSecondUrl() {
    try (Ringd s = Ringd.start();
        TestProxy p1 = new TestProxy(s.url());
        TestProxy p2 = new TestProxy(s.url())) {
      RingHandle r = s.ring("r");
      r.create(Map.of());
      r.change(upsert("a", 1));
      try (RingClient c = fast(List.of(p1.url(), p2.url()), "r", "failover").build()) {
        assertEquals(p1.url(), waitVersion(c, 2).server());
        p1.shutdown();
        waitFor(
            "the stream on the second URL",
            Duration.ofSeconds(10),
            () -> p2.url().equals(c.status().server()));
        r.change(upsert("b", 1));
        Status st = waitVersion(c, 3);
        assertEquals(p2.url(), st.server());
        assertTrue(st.reconnects() > 0, st::toString);
        assertEquals(Transport.SSE, st.transport());
        assertRoutesLikeServer(r, c, 3, 2);
      }
    }
  }

  /**
   * Follows a ring through a proxy that answers every watch with 406: AUTO falls back to
   * long-polls, and versions committed together still all arrive, in order.
   */
  @Test
  void longPollsWhenStreamsAreRefused() {
    try (Ringd s = Ringd.start();
        TestProxy p = new TestProxy(s.url())) {
      RingHandle r = s.ring("r");
      r.create(Map.of());
      p.refuseStreams.set(true);
      List<Long> applied = new ArrayList<>();
      Status st;
      try (RingClient c =
          fast(p.url(), "r", "poller")
              .observer(
                  e -> {
                    if (e.kind() == ClientEvent.Kind.APPLIED) {
                      synchronized (applied) {
                        applied.add(e.version());
                      }
                    }
                  })
              .build()) {
        st = waitVersion(c, 1);
        assertEquals(Transport.LONG_POLL, st.transport());
        assertEquals(1, p.watches.get());
        r.change(upsert("a", 1));
        waitVersion(c, 2);
        // Three versions while a long-poll waits: however they are answered (the newest, with
        // the ones between fetched), each is applied.
        r.change(upsert("b", 1));
        r.change(upsert("c", 1));
        r.change(upsert("d", 2));
        st = waitVersion(c, 5);
        assertRoutesLikeServer(r, c, 5, 4);
      }
      synchronized (applied) {
        assertEquals(List.of(1L, 2L, 3L, 4L, 5L), applied);
      }
      assertEquals(5, st.applied());
      assertEquals(0, st.refused());
      assertEquals(1, p.watches.get(), "the stream was tried again before the SSE retry");
    }
  }

  /**
   * Forces long-polls and commits three versions while the client's proxy answers 503: its next
   * long-poll answers the newest, and the client fetches the two between and applies every one.
   */
  @Test
  void longPollOnlyFillsGaps() {
    try (Ringd s = Ringd.start();
        TestProxy p = new TestProxy(s.url())) {
      RingHandle r = s.ring("r");
      r.create(Map.of());
      r.change(upsert("a", 1));
      ConcurrentLinkedQueue<Long> applied = new ConcurrentLinkedQueue<>();
      Status st;
      try (RingClient c =
          fast(p.url(), "r", "gaps")
              .watchMode(WatchMode.LONG_POLL)
              .longPollWait(Duration.ofMillis(100))
              .observer(
                  e -> {
                    if (e.kind() == ClientEvent.Kind.APPLIED) {
                      applied.add(e.version());
                    }
                  })
              .build()) {
        waitVersion(c, 2);
        p.down.set(true);
        waitFor(
            "the client to meet the 503",
            Duration.ofSeconds(10),
            () -> c.status().reconnects() > 0);
        for (String id : List.of("b", "c", "d")) {
          r.change(upsert(id, 1));
        }
        p.down.set(false);
        st = waitVersion(c, 5);
        assertEquals(Transport.LONG_POLL, st.transport());
        assertEquals(4, st.applied());
        assertEquals(2, p.fetches.get(), "version fetches");
        assertEquals(0, p.watches.get());
        assertRoutesLikeServer(r, c, 5, 4);
      }
      assertEquals(List.of(2L, 3L, 4L, 5L), List.copyOf(applied));
      ApiException api = assertInstanceOf(ApiException.class, st.lastError());
      assertEquals(503, api.status());
    }
  }

  /**
   * Checks that each applied version is acked under the client's id, with its fingerprint and kind,
   * as GET …/clients shows.
   */
  @Test
  void acksAreVisibleOnTheServer() {
    try (Ringd s = Ringd.start()) {
      RingHandle r = s.ring("r");
      r.create(Map.of());
      r.change(upsert("a", 1), upsert("b", 1));
      try (RingClient c = fast(s.url(), "r", "web-3").kind(ClientKind.PROXY).build()) {
        for (long v : new long[] {2, 3}) {
          if (v == 3) {
            r.change(upsert("c", 1));
          }
          Status st = c.awaitStatus(x -> x.acked() == v, Duration.ofSeconds(10));
          JsonNode list = r.get("/clients");
          JsonNode clients = list.path("clients");
          assertEquals(1, clients.size(), clients::toString);
          JsonNode got = clients.get(0);
          assertEquals("web-3", got.path("client_id").asText(), got::toString);
          assertEquals(v, got.path("version").asLong(), got::toString);
          assertEquals(st.fingerprint(), got.path("fingerprint").asText(), got::toString);
          assertEquals(0.0, got.path("lag").asDouble(-1), got::toString);
          assertEquals(false, got.path("divergent").asBoolean(true), got::toString);
          assertEquals("proxy", got.path("kind").asText(), got::toString);
          assertEquals(st.fingerprint(), list.path("fingerprint").asText());
          assertTrue(st.acks() >= 1, st::toString);
        }
      }
    }
  }

  /** A first URL that refuses connections: the client connects through the second at once. */
  @Test
  void skipsADeadFirstUrl() {
    String dead;
    try (ServerSocket l =
        new ServerSocket(0, 1, InetAddress.getByAddress(new byte[] {127, 0, 0, 1}))) {
      dead = "http://127.0.0.1:" + l.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    try (Ringd s = Ringd.start()) {
      s.ring("r").create(Map.of());
      try (RingClient c = fast(dead + "," + s.url(), "r", "dead-first").build()) {
        Status st = waitVersion(c, 1);
        assertEquals(s.url(), st.server());
        assertEquals(0, st.reconnects(), st::toString);
      }
    }
  }
}
