package io.github.ringd.client;

import static io.github.ringd.client.Live.fast;
import static io.github.ringd.client.Live.waitFor;
import static io.github.ringd.client.Live.waitVersion;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.github.ringd.testkit.RingHandle;
import io.github.ringd.testkit.Ringd;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A node kept in a ring by a lease. */
class MemberTest {
  private static final Duration WAIT = Duration.ofSeconds(15);

  /** The ring's nodes by id, as GET …/nodes lists them. */
  private static Map<String, JsonNode> nodes(RingHandle r) {
    Map<String, JsonNode> out = new HashMap<>();
    for (JsonNode n : r.get("/nodes").path("nodes")) {
      out.put(n.path("id").asText(), n);
    }
    return out;
  }

  /**
   * Registers a node with a 1 s lease, sees it renewed, releases its lease behind its back (it
   * registers again under a new lease), then leaves: the node is gone from the ring, as a client
   * following it sees.
   */
  @Test
  void registersRenewsRecoversAndLeaves() {
    try (Ringd s = Ringd.start("--admin-token", "adm")) {
      RingHandle r = s.ring("r").withToken("adm");
      r.create(Map.of());
      try (RingClient c = fast(s.url(), "r", "member-watcher").token("adm").build()) {
        Member m =
            Member.builder(
                    List.of(s.url()),
                    "r",
                    NodeRecord.of("cache-7")
                        .withAddress("10.0.0.7:11211")
                        .withWeight(2)
                        .withLabels(Map.of("team", "x")))
                .token("adm")
                .leaseTtl(Duration.ofSeconds(1))
                .backoff(Duration.ofMillis(20), Duration.ofMillis(200))
                .build();
        MemberStatus st = m.awaitStatus(x -> x.state().holdsLease(), WAIT);
        assertEquals(2, st.version(), st::toString);
        assertEquals(32, st.leaseId().length(), st::toString);
        assertEquals(s.url(), st.server());
        assertEquals(0, st.losses());
        assertTrue(st.deadline() != null, st::toString);
        JsonNode n = nodes(r).get("cache-7");
        assertEquals("healthy", n.path("health").asText(), n::toString);
        assertEquals("10.0.0.7:11211", n.path("address").asText(), n::toString);
        assertEquals(2, n.path("weight").asInt(), n::toString);
        waitVersion(c, 2);
        assertEquals("cache-7", c.owner("k"));
        String first = st.leaseId();
        st = m.awaitStatus(x -> x.state() == MemberState.RENEWING && x.heartbeats() >= 3, WAIT);
        assertEquals(first, st.leaseId(), "a renewal changed the lease");

        // Released behind its back: the next renewal is refused with lease-not-found and it
        // registers again, under a new lease id.
        r.call("DELETE", "/nodes/cache-7/lease/" + first, null, 200);
        st = m.awaitStatus(x -> x.losses() == 1 && x.state().holdsLease(), WAIT);
        assertNotEquals(first, st.leaseId());
        assertNull(st.lastError(), st::toString);
        assertEquals("healthy", nodes(r).get("cache-7").path("health").asText());

        m.leave(Duration.ofSeconds(10));
        assertEquals(MemberState.LEFT, m.status().state());
        assertFalse(nodes(r).containsKey("cache-7"), "the node is still in the ring after leave");
        waitFor(
            "the client to see the node leave", Duration.ofSeconds(10), () -> c.owner("k") == null);
      }
    }
  }

  /** close() releases the lease and stops the thread. */
  @Test
  void closeReleases() {
    try (Ringd s = Ringd.start()) {
      RingHandle r = s.ring("r");
      r.create(Map.of());
      Member m =
          Member.builder(List.of(s.url()), "r", NodeRecord.of("n1"))
              .leaseTtl(Duration.ofSeconds(10))
              .build();
      m.awaitStatus(x -> x.state() == MemberState.REGISTERED, WAIT);
      assertTrue(nodes(r).containsKey("n1"), "not registered");
      long t0 = System.nanoTime();
      m.close();
      assertTrue(m.awaitDone(Duration.ZERO), "the member did not stop");
      assertTrue(System.nanoTime() - t0 < 5_000_000_000L, "close took over 5 s");
      assertFalse(nodes(r).containsKey("n1"));
      assertEquals(MemberState.LEFT, m.status().state());
    }
  }

  /**
   * Registers with the read token: ringd answers 403, which no retry can change, so the member
   * fails with a typed ApiException; a TTL under 1 s is refused at once.
   */
  @Test
  void stopsOnARefusal() {
    try (Ringd s = Ringd.start("--admin-token", "adm", "--read-token", "rd")) {
      s.ring("r").withToken("adm").create(Map.of());
      Member m = Member.builder(List.of(s.url()), "r", NodeRecord.of("n1")).token("rd").build();
      MemberStatus st = m.awaitStatus(x -> x.state() == MemberState.FAILED, Duration.ofSeconds(10));
      ApiException api = assertInstanceOf(ApiException.class, st.lastError());
      assertEquals(403, api.status());
      assertTrue(api.isForbidden());
      m.leave(Duration.ofSeconds(10));
      assertEquals(MemberState.FAILED, m.status().state());
      WaitTimeoutException e =
          assertThrows(
              WaitTimeoutException.class,
              () -> m.awaitStatus(x -> x.state().holdsLease(), Duration.ofSeconds(1)));
      assertTrue(e.closed(), "a failed member ends the wait at once");
      assertThrows(
          IllegalArgumentException.class,
          () ->
              Member.builder(List.of(s.url()), "r", NodeRecord.of("n1"))
                  .leaseTtl(Duration.ofMillis(500))
                  .build());
      assertThrows(
          IllegalArgumentException.class,
          () -> Member.builder(List.of(s.url()), "r", NodeRecord.of("bad id")).build());
    }
  }
}
