package io.github.ringd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import io.github.ringd.testkit.RingHandle;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/** What the live tests share: fast settings, waits, and the comparison with the server. */
final class Live {
  private Live() {}

  /** The keys every check places on the client and on the server. */
  static final List<byte[]> KEYS = keys();

  private static List<byte[]> keys() {
    List<byte[]> k = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      k.add(("user:" + i).getBytes(StandardCharsets.UTF_8));
    }
    return List.copyOf(k);
  }

  /** A builder with short waits, so failures and fallbacks happen within a test's time. */
  static RingClient.Builder fast(String url, String ring, String id) {
    return fast(List.of(url), ring, id);
  }

  static RingClient.Builder fast(List<String> urls, String ring, String id) {
    return RingClient.builder(urls, ring)
        .clientId(id)
        .backoff(Duration.ofMillis(20), Duration.ofMillis(200))
        .longPollWait(Duration.ofSeconds(2));
  }

  /** Waits until c routes on v or newer, and checks it is exactly v. */
  static Status waitVersion(RingClient c, long v) {
    Status st = c.awaitVersion(v, Duration.ofSeconds(20));
    assertEquals(v, st.version(), () -> "routes on another version: " + st);
    return st;
  }

  /** Polls cond until it holds, failing after d. */
  static void waitFor(String what, Duration d, BooleanSupplier cond) {
    long deadline = System.nanoTime() + d.toNanos();
    while (!cond.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        fail("timed out after " + d + " waiting for " + what);
      }
      sleep(10);
    }
  }

  static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  /**
   * Compares the client's owner of every key with the server's lookup at version v, and its handoff
   * with version before (0 for none).
   */
  static void assertRoutesLikeServer(RingHandle r, RingClient c, long v, long before) {
    List<String> want = r.lookup(v, KEYS);
    List<String> wantBefore = before > 0 ? r.lookup(before, KEYS) : null;
    for (int i = 0; i < KEYS.size(); i++) {
      byte[] k = KEYS.get(i);
      String key = new String(k, StandardCharsets.UTF_8);
      assertEquals(want.get(i), c.owner(k), "v" + v + ": owner of " + key);
      assertEquals(want.get(i), c.owner(key), "v" + v + ": owner of text " + key);
      Handoff h = c.handoff(k);
      assertEquals(v, h.version(), "handoff " + h);
      assertEquals(want.get(i), h.ownerNow(), "handoff " + h);
      assertEquals(before, h.versionBefore(), "handoff " + h);
      if (wantBefore != null) {
        assertEquals(wantBefore.get(i), h.ownerBefore(), "v" + v + ": owner before of " + key);
      }
    }
  }
}
