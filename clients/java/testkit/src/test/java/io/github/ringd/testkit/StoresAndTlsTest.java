package io.github.ringd.testkit;

import static io.github.ringd.testkit.RingHandle.upsert;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** ringd over a real etcd, and over TLS and mutual TLS with the kit's PKI. */
class StoresAndTlsTest {
  @Test
  void servesOverEtcd() {
    Ringd.binary();
    try (Etcd etcd = Etcd.start();
        Ringd s = Ringd.startOnEtcd(etcd)) {
      assertTrue(etcd.storeUrl().startsWith("etcd://127.0.0.1:"));
      RingHandle r = s.ring("e");
      assertEquals(1, r.create(Map.of()));
      long v = r.change(upsert("only"));
      assertEquals(List.of("only"), r.lookup(v, List.of("k".getBytes(StandardCharsets.UTF_8))));
    }
  }

  @Test
  void servesOverMutualTls() {
    Ringd.binary();
    try (Pki pki = Pki.create();
        Ringd s = Ringd.start(pki.serverArgs(true))) {
      assertTrue(s.url().startsWith("https://127.0.0.1:"), s.url());
      // Without a client certificate the handshake fails.
      s.trusting(pki.sslContext(false));
      assertThrows(AssertionError.class, () -> s.ring("t").create(Map.of()));
      s.trusting(pki.sslContext(true));
      assertEquals(1, s.ring("t").create(Map.of()));
    }
  }
}
