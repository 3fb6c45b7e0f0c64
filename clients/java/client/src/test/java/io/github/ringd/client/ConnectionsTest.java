package io.github.ringd.client;

import static io.github.ringd.client.Live.waitFor;
import static io.github.ringd.testkit.RingHandle.upsert;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.github.ringd.testkit.RingHandle;
import io.github.ringd.testkit.Ringd;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A following client keeps one connection to the server, its watch's, once it has acked: each ack's
 * connection is closed as soon as it is answered (ringd answers acks with {@code Connection:
 * close}). The server's sockets are counted from /proc/PID/fd.
 */
class ConnectionsTest {
  private static int sockets(long pid) {
    Path dir = Path.of("/proc/" + pid + "/fd");
    int n = 0;
    try (Stream<Path> fds = Files.list(dir)) {
      for (Path fd : (Iterable<Path>) fds::iterator) {
        try {
          if (Files.readSymbolicLink(fd).toString().startsWith("socket:")) {
            n++;
          }
        } catch (IOException e) {
          // closed meanwhile
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return n;
  }

  private static void waitSockets(long pid, int want, String what) {
    waitFor(what + ": " + want + " sockets", Duration.ofSeconds(10), () -> sockets(pid) == want);
  }

  @ParameterizedTest
  @EnumSource(
      value = WatchMode.class,
      names = {"AUTO", "LONG_POLL"})
  void aFollowingClientHoldsOneConnectionOnceItHasAcked(WatchMode mode) {
    assumeTrue(Files.isDirectory(Path.of("/proc/self/fd")), "no /proc to count sockets in");
    try (Ringd s = Ringd.start()) {
      long pid = s.pid();
      RingHandle r = s.ring("r");
      r.create(Map.of());
      r.change(upsert("a", 1), upsert("b", 1));
      // The kit's own connection stays pooled: count it in once it is the only one open.
      int before = sockets(pid);
      try (RingClient c =
          RingClient.builder(List.of(s.url()), "r")
              .clientId("fleet-member")
              .watchMode(mode)
              .build()) {
        for (int i = 0; i < 2; i++) {
          long v = r.change(upsert("n" + i, 1));
          c.awaitStatus(st -> st.version() >= v && st.acked() >= v, Duration.ofSeconds(20));
          waitFor(
              "GET …/clients to list the client at v" + v,
              Duration.ofSeconds(10),
              () -> {
                JsonNode list = r.get("/clients").path("clients");
                return list.size() == 1
                    && list.get(0).path("client_id").asText().equals("fleet-member")
                    && list.get(0).path("version").asLong() == v;
              });
          // The ack's connection closes once answered; the watch's (or the parked long-poll's)
          // stays.
          waitSockets(pid, before + 1, "one client acked at v" + v);
          Live.sleep(300);
          assertEquals(before + 1, sockets(pid), "v" + v + ": a second connection reopened");
          assertNotEquals(Transport.CONNECTING, c.status().transport());
        }
      }
    }
  }
}
