package io.github.ringd.client;

import static io.github.ringd.client.Live.assertRoutesLikeServer;
import static io.github.ringd.client.Live.fast;
import static io.github.ringd.client.Live.waitVersion;
import static io.github.ringd.testkit.RingHandle.upsert;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.ringd.testkit.Pki;
import io.github.ringd.testkit.RingHandle;
import io.github.ringd.testkit.Ringd;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Following over TLS and mutual TLS. */
class TlsTest {
  /**
   * Follows a ring on a server that requires a client certificate, with the PEM files; without the
   * client certificate the handshake fails and awaitReady says so.
   */
  @Test
  void followsOverMutualTls() {
    Ringd.binary();
    try (Pki pki = Pki.create();
        Ringd s = Ringd.start(pki.serverArgs(true))) {
      s.trusting(pki.sslContext(true));
      assertTrue(s.url().startsWith("https://127.0.0.1:"), s.url());
      RingHandle r = s.ring("r");
      r.create(Map.of());
      r.change(upsert("a", 1), upsert("b", 1));
      try (RingClient c =
          fast(s.url(), "r", "mtls")
              .tlsFiles(pki.ca(), pki.clientCert(), pki.clientKey())
              .build()) {
        assertEquals(s.url(), waitVersion(c, 2).server());
        assertRoutesLikeServer(r, c, 2, 0);
        // Acks go over TLS too.
        c.awaitStatus(st -> st.acked() == 2, Duration.ofSeconds(10));
      }
      // Trusting the CA through an SSLContext, but with no certificate.
      try (RingClient anon =
          fast(s.url(), "r", "no-cert").sslContext(pki.sslContext(false)).build()) {
        WaitTimeoutException e =
            assertThrows(WaitTimeoutException.class, () -> anon.awaitReady(Duration.ofSeconds(1)));
        assertInstanceOf(UnreachableException.class, e.getCause(), e::toString);
        assertFalse(e.closed());
      }
    }
  }

  /** Plain TLS: the CA file alone is enough. */
  @Test
  void followsOverTlsWithAPrivateCa() {
    Ringd.binary();
    try (Pki pki = Pki.create();
        Ringd s = Ringd.start(pki.serverArgs(false))) {
      s.trusting(pki.sslContext(false));
      s.ring("r").create(Map.of());
      try (RingClient c = fast(s.url(), "r", "tls").tlsFiles(pki.ca(), null, null).build()) {
        waitVersion(c, 1);
      }
      assertThrows(
          IllegalArgumentException.class,
          () ->
              RingClient.builder(java.util.List.of(s.url()), "r")
                  .tlsFiles(pki.ca(), pki.clientCert(), null));
    }
  }
}
