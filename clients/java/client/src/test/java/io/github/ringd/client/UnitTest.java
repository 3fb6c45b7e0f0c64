package io.github.ringd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.ringd.placement.Algorithm;
import io.github.ringd.placement.Node;
import io.github.ringd.placement.Placement;
import io.github.ringd.placement.RingConfig;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The client's small parts: backoff, Retry-After, bounded loads, URLs, lease bodies. */
class UnitTest {
  @Test
  void backoffDoublesWithinTheUpperHalfOfEachStep() {
    Backoff b = new Backoff(Duration.ofMillis(100), Duration.ofMillis(1000));
    long[] steps = {100, 200, 400, 800, 1000, 1000};
    for (int round = 0; round < 200; round++) {
      b.reset();
      for (long step : steps) {
        long w = b.next();
        long ms = step * 1_000_000;
        assertTrue(w >= ms / 2 && w < ms, "wait " + w + " for step " + step + " ms");
      }
    }
  }

  @Test
  void retryAfterWaitRule() {
    long s = 1_000_000_000L;
    // The server's ask, cut to the maximum, plus the jitter; never below the backoff's own.
    assertEquals(3 * s + 500, Backoff.retryAfterWait(s / 10, 3 * s, 10 * s, 500));
    assertEquals(10 * s + 7, Backoff.retryAfterWait(s, 60 * s, 10 * s, 7));
    assertEquals(5 * s, Backoff.retryAfterWait(5 * s, s, 10 * s, 0));
    Backoff b = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(10));
    for (int i = 0; i < 100; i++) {
      long w = b.afterRefusal(Duration.ofSeconds(2));
      assertTrue(w >= 2 * s && w < 3 * s, "wait " + w);
      b.reset();
    }
  }

  @Test
  void parsesRetryAfterInDeltaSecondsOnly() {
    assertEquals(Duration.ofSeconds(7), Endpoints.retryAfter("7"));
    assertEquals(Duration.ofSeconds(7), Endpoints.retryAfter(" 7 "));
    assertEquals(Duration.ZERO, Endpoints.retryAfter("0"));
    assertEquals(Duration.ofNanos(Long.MAX_VALUE), Endpoints.retryAfter("99999999999999999999"));
    for (String bad : List.of("", "-1", "+1", "1.5", "Wed, 21 Oct 2015 07:28:00 GMT", "1 2")) {
      assertNull(Endpoints.retryAfter(bad), bad);
    }
  }

  @Test
  void boundIsTheCeilingOfFactorTimesAverage() {
    BoundedLoad b = BoundedLoad.of(1.25);
    BoundedLoad one = BoundedLoad.of(1);
    assertEquals(13, b.bound(99, 10));
    assertEquals(1, b.bound(0, 4));
    assertEquals(1, one.bound(7, 8));
    assertEquals(0, b.bound(5, 0));
    assertEquals(-1L, b.bound(-1L, 1)); // 2^64 − 1 in flight saturates
    for (double f : new double[] {0.99, -1, Double.NaN, Double.POSITIVE_INFINITY}) {
      assertThrows(IllegalArgumentException.class, () -> BoundedLoad.of(f), "factor " + f);
    }
  }

  @Test
  void pickSkipsLoadedNodesInPreferenceOrder() {
    List<Node> nodes = new ArrayList<>();
    for (String id : List.of("a", "b", "c", "d", "e", "f")) {
      nodes.add(Node.of(id));
    }
    Placement p = Placement.build(RingConfig.defaults(Algorithm.RING), nodes);
    byte[] key = "hot".getBytes(StandardCharsets.UTF_8);
    List<String> pref = p.preferenceList(key, 6);
    BoundedLoad b = BoundedLoad.of(1.25);
    assertEquals(pref.get(0), b.pick(p, key, n -> 0));
    // 12 in flight, all on the first two: bound ceil(1.25 × 13 / 6) = 3.
    assertEquals(
        pref.get(2),
        b.pick(p, key, n -> n.equals(pref.get(0)) || n.equals(pref.get(1)) ? 6 : 0),
        "list " + pref);
  }

  @Test
  void urlsAreSplitTrimmedAndChecked() {
    assertEquals(
        List.of("http://a:1", "https://b:2", "http://c"),
        Endpoints.parseUrls(List.of(" http://a:1/ , https://b:2", "http://c//")));
    for (String bad : List.of("", "ftp://a", "http://", "a:1", "http://a b")) {
      assertThrows(IllegalArgumentException.class, () -> Endpoints.parseUrls(List.of(bad)), bad);
    }
  }

  @Test
  void leaseBodyLeavesUnsetFieldsToTheServer() {
    assertEquals(
        Map.of("ttl", "10s"), MemberTask.leaseBody(NodeRecord.of("n"), Duration.ofSeconds(10)));
    NodeRecord full =
        NodeRecord.of("n")
            .withAddress("10.0.0.7:11211")
            .withWeight(2)
            .withZone("z")
            .withHashKey("h")
            .withState("draining")
            .withLabels(Map.of("team", "x"));
    assertEquals(
        Map.of(
            "address",
            "10.0.0.7:11211",
            "weight",
            2,
            "zone",
            "z",
            "hash_key",
            "h",
            "state",
            "draining",
            "labels",
            Map.of("team", "x"),
            "ttl",
            "1500ms"),
        MemberTask.leaseBody(full, Duration.ofMillis(1500)));
    assertEquals("30s", LongPoll.formatWait(Duration.ofSeconds(30)));
    assertEquals("100ms", LongPoll.formatWait(Duration.ofMillis(100)));
  }

  @Test
  void handoffMovedOnlyWhenTheOwnerChanged() {
    assertTrue(new Handoff("a", "b", 2, 1).moved());
    assertTrue(!new Handoff("a", "a", 2, 1).moved());
    assertTrue(!new Handoff("a", null, 1, 0).moved());
  }
}
