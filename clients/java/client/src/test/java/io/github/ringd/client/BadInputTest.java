package io.github.ringd.client;

import static io.github.ringd.client.Live.fast;
import static io.github.ringd.client.Live.waitVersion;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.ringd.placement.Algorithm;
import io.github.ringd.placement.FingerprintMismatchException;
import io.github.ringd.placement.Node;
import io.github.ringd.placement.Placement;
import io.github.ringd.placement.PlacementException;
import io.github.ringd.placement.RingConfig;
import io.github.ringd.testkit.Ringd;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/** Doctored, malformed and refused input: typed errors, and the placement held is kept. */
class BadInputTest {
  private static final String CONFIG =
      "{\"algorithm\":\"ring\",\"hash\":\"xxh3\",\"vnodes_per_weight\":160,"
          + "\"replication_factor\":3,\"zone_aware\":false}";

  /**
   * A genuine snapshot of ring r at version v with the nodes ids, its fingerprint computed by the
   * placement core; a non-null fingerprint replaces it (a doctored snapshot). Returns the JSON and
   * the genuine fingerprint.
   */
  static String[] snapshot(long v, String fingerprint, String... ids) {
    List<Node> nodes = new ArrayList<>();
    List<String> parts = new ArrayList<>();
    for (String id : ids) {
      nodes.add(Node.of(id));
      parts.add("{\"id\":\"" + id + "\",\"weight\":1,\"state\":\"active\"}");
    }
    Placement p = Placement.build(RingConfig.defaults(Algorithm.RING), nodes);
    String fp = fingerprint != null ? fingerprint : p.fingerprint();
    String json =
        "{\"ring\":\"r\",\"version\":"
            + v
            + ",\"config\":"
            + CONFIG
            + ",\"nodes\":["
            + String.join(",", parts)
            + "],\"fingerprint\":\""
            + fp
            + "\"}";
    return new String[] {json, p.fingerprint()};
  }

  private static byte[] bytes(Object... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (Object o : parts) {
      byte[] b = o instanceof byte[] raw ? raw : o.toString().getBytes(StandardCharsets.UTF_8);
      out.write(b, 0, b.length);
    }
    return out.toByteArray();
  }

  /**
   * Serves, on one stream, a good version 1, a version 2 whose fingerprint is not its placement's,
   * an undecodable version 3 and a good version 4, then breaks the framing with invalid UTF-8; on
   * the next stream (resumed after 4) a good 5. The doctored and undecodable versions are refused
   * with typed errors and the previous placement kept.
   */
  @Test
  void refusesDoctoredAndMalformedSnapshots() {
    String v1 = snapshot(1, null, "a", "b")[0];
    String doctored = "ab".repeat(32);
    String[] v2 = snapshot(2, doctored, "a", "b", "c");
    String v4 = snapshot(4, null, "a", "c")[0];
    String[] v5 = snapshot(5, null, "c");
    byte[] first =
        bytes(
            "event: snapshot\nid: 1\ndata: " + v1 + "\n\n",
            ": a comment\r\nevent: snapshot\r\nid: 2\r\ndata: " + v2[0] + "\r\n\r\n",
            "event: snapshot\nid: 3\ndata: {\"ring\": \"r\", \"version\": \n\n",
            "event: rollout\ndata: {}\n\n", // not about versions: ignored
            "event: snapshot\nid: 4\ndata: " + v4 + "\n\n",
            "event: snapshot\ndata: ",
            new byte[] {(byte) 0xff, (byte) 0xfe},
            "\n\n");
    byte[] second = bytes("event: snapshot\nid: 5\ndata: " + v5[0] + "\n\n");
    List<RingdException> refused = new ArrayList<>();
    try (FakeRingd fake = new FakeRingd(List.of(first, second))) {
      Status st;
      try (RingClient c =
          fast(fake.url(), "r", "doctored")
              .ack(false)
              .observer(
                  e -> {
                    if (e.kind() == ClientEvent.Kind.REFUSED) {
                      synchronized (refused) {
                        refused.add(e.error());
                      }
                    }
                  })
              .build()) {
        st = waitVersion(c, 5);
      }
      assertEquals(v5[1], st.fingerprint());
      assertEquals(2, st.refused(), st::toString);
      assertEquals(3, st.applied(), st::toString);
      assertEquals(1, st.reconnects(), st::toString);
      assertEquals(List.of("", "4"), fake.resumes());
    }
    synchronized (refused) {
      assertEquals(2, refused.size(), refused::toString);
      // Version 2: a fingerprint mismatch, with both fingerprints.
      SnapshotException s2 = assertInstanceOf(SnapshotException.class, refused.get(0));
      assertEquals(2, s2.version());
      FingerprintMismatchException m =
          assertInstanceOf(FingerprintMismatchException.class, s2.getCause());
      assertEquals(doctored, m.expected());
      assertEquals(v2[1], m.actual());
      // Version 3: undecodable.
      SnapshotException s3 = assertInstanceOf(SnapshotException.class, refused.get(1));
      assertEquals(3, s3.version());
      MalformedException mal = assertInstanceOf(MalformedException.class, s3.getCause());
      assertInstanceOf(PlacementException.class, mal.getCause());
    }
  }

  /** The placement held while a doctored version is refused is the one before, untouched. */
  @Test
  void keepsThePlacementWhileRefusing() {
    String[] v1 = snapshot(1, null, "a", "b");
    String v2 = snapshot(2, "0".repeat(64), "c")[0];
    byte[] script =
        bytes(
            "event: snapshot\nid: 1\ndata: " + v1[0] + "\n\n",
            "event: snapshot\nid: 2\ndata: " + v2 + "\n\n");
    try (FakeRingd fake = new FakeRingd(List.of(script));
        RingClient c = fast(fake.url(), "r", "keeps").ack(false).build()) {
      Placement before =
          c.awaitStatus(s -> s.version() == 1, Duration.ofSeconds(10)) != null
              ? c.placement()
              : null;
      Status st = c.awaitStatus(s -> s.refused() == 1, Duration.ofSeconds(10));
      assertEquals(1, st.version());
      assertEquals(v1[1], st.fingerprint());
      assertEquals(v1[1], c.placement().fingerprint());
      SnapshotException e = assertInstanceOf(SnapshotException.class, st.lastError());
      assertInstanceOf(FingerprintMismatchException.class, e.getCause());
      assertTrue(before == c.placement(), "the placement object is the one verified at v1");
      for (byte[] k : Live.KEYS) {
        String o = c.owner(k);
        assertTrue("a".equals(o) || "b".equals(o), o + ", a node of the refused version");
      }
    }
  }

  /**
   * Asks a server with a read token with a wrong one: awaitReady fails, its cause the typed
   * ApiException with the 401 and its problem document.
   */
  @Test
  void aWrongTokenIsATypedError() {
    try (Ringd s = Ringd.start("--read-token", "right-read", "--admin-token", "right-admin")) {
      s.ring("r").withToken("right-admin").create(Map.of());
      try (RingClient c = fast(s.url(), "r", "wrong-token").token("wrong").build()) {
        WaitTimeoutException e =
            assertThrows(WaitTimeoutException.class, () -> c.awaitReady(Duration.ofSeconds(2)));
        ApiException api = assertInstanceOf(ApiException.class, e.getCause(), e::toString);
        assertEquals(401, api.status());
        assertTrue(api.isUnauthorized());
        assertEquals("unauthorized", api.slug());
        Problem p = api.problem().orElseThrow();
        assertEquals("urn:ringd:problem:unauthorized", p.type());
        assertEquals(401, p.status());
        assertTrue(!p.detail().isEmpty() && api.getMessage().contains(p.detail()), p::toString);
        Status st = c.status();
        assertEquals(0, st.version());
        assertTrue(st.reconnects() > 0, st::toString);
      }
      // The read token works.
      try (RingClient good = fast(s.url(), "r", "right-token").token("right-read").build()) {
        waitVersion(good, 1);
      }
    }
  }

  /** Malformed settings are refused with IllegalArgumentException, naming the setting. */
  @Test
  void optionsAreChecked() {
    Map<String, Supplier<RingClient.Builder>> cases =
        Map.of(
            "no URL", () -> RingClient.builder(List.of(), "r"),
            "no scheme", () -> RingClient.builder(List.of("localhost:1"), "r"),
            "bad ring", () -> RingClient.builder(List.of("http://a"), "Bad Ring"),
            "bad client id",
                () -> RingClient.builder(List.of("http://a"), "r").clientId("no spaces"),
            "long wait",
                () ->
                    RingClient.builder(List.of("http://a"), "r")
                        .longPollWait(Duration.ofMinutes(6)),
            "backoff",
                () ->
                    RingClient.builder(List.of("http://a"), "r")
                        .backoff(Duration.ofSeconds(1), Duration.ofMillis(1)),
            "tls files",
                () ->
                    RingClient.builder(List.of("https://a"), "r")
                        .tlsFiles(Path.of("/nonexistent/ca.pem"), null, null));
    cases.forEach(
        (name, b) -> assertThrows(IllegalArgumentException.class, () -> b.get().build(), name));
    assertThrows(IllegalArgumentException.class, () -> BoundedLoad.of(0.99));
  }
}
