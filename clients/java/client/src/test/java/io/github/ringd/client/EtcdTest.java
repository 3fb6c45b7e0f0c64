package io.github.ringd.client;

import static io.github.ringd.client.Live.assertRoutesLikeServer;
import static io.github.ringd.client.Live.fast;
import static io.github.ringd.client.Live.waitFor;
import static io.github.ringd.client.Live.waitVersion;
import static io.github.ringd.testkit.RingHandle.upsert;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.ringd.testkit.Etcd;
import io.github.ringd.testkit.RingHandle;
import io.github.ringd.testkit.Ringd;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Two ringd instances in front of one real etcd: a client fails over between them. */
class EtcdTest {
  /**
   * Follows a ring through the first of two instances over one etcd, kills it (SIGKILL), and
   * follows on through the second, which hears of changes made through either; then the first comes
   * back and the client keeps following.
   */
  @Test
  void failsOverBetweenTwoInstancesOfOneStore() {
    Ringd.binary();
    try (Etcd etcd = Etcd.start();
        Ringd one = Ringd.startOnEtcd(etcd);
        Ringd two = Ringd.startOnEtcd(etcd)) {
      RingHandle r1 = one.ring("r");
      RingHandle r2 = two.ring("r");
      r1.create(Map.of());
      r1.change(upsert("a", 1), upsert("b", 1));
      try (RingClient c = fast(List.of(one.url(), two.url()), "r", "etcd-failover").build()) {
        assertEquals(one.url(), waitVersion(c, 2).server());
        one.kill();
        waitFor(
            "the stream on the second instance",
            Duration.ofSeconds(15),
            () -> two.url().equals(c.status().server()));
        long v = r2.change(upsert("c", 1));
        Status st = waitVersion(c, v);
        assertEquals(two.url(), st.server());
        assertTrue(st.reconnects() > 0, st::toString);
        assertEquals(0, st.refused(), st::toString);
        assertRoutesLikeServer(r2, c, v, v - 1);
        // Acks go to the instance that answers; both read them from etcd.
        c.awaitStatus(x -> x.acked() == v, Duration.ofSeconds(10));
        one.restart();
        r1 = one.ring("r");
        long w = r1.change(upsert("d", 2));
        st = waitVersion(c, w);
        assertEquals(0, st.refused(), st::toString);
        assertRoutesLikeServer(r1, c, w, v);
      }
    }
  }
}
