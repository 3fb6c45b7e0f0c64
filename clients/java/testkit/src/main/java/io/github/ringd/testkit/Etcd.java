package io.github.ringd.testkit;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * A real single-member etcd on free loopback ports with a temporary data directory, as the Rust and
 * Go tests start it. The {@code etcd} binary is {@code ETCD_BIN}, else {@code etcd} on the PATH; a
 * missing one fails the test (never a skip: a missing etcd must not turn the etcd tests green).
 * {@link #close} kills it and deletes its directory.
 */
public final class Etcd implements AutoCloseable {
  private static final Duration START = Duration.ofSeconds(30);

  private final Path dir;
  private final int clientPort;
  private final Process process;

  private Etcd(Path dir, int clientPort, Process process) {
    this.dir = dir;
    this.clientPort = clientPort;
    this.process = process;
  }

  /** The etcd binary: ETCD_BIN, else the first {@code etcd} on the PATH. */
  public static Path binary() {
    String env = System.getenv("ETCD_BIN");
    if (env != null && !env.isEmpty()) {
      return Path.of(env);
    }
    String path = System.getenv("PATH");
    for (String d : (path == null ? "" : path).split(File.pathSeparator, -1)) {
      Path candidate = Path.of(d.isEmpty() ? "." : d, "etcd");
      if (Files.isExecutable(candidate)) {
        return candidate;
      }
    }
    throw new AssertionError(
        "no etcd on PATH (Debian: apt-get install etcd-server; or set ETCD_BIN)");
  }

  /** Starts etcd and waits until its /health says it serves requests. */
  public static Etcd start() {
    Path bin = binary();
    Path dir = Processes.tempDir("etcd-test-");
    int client = Processes.freePort();
    int peer = Processes.freePort();
    String clientUrl = "http://127.0.0.1:" + client;
    String peerUrl = "http://127.0.0.1:" + peer;
    ProcessBuilder pb =
        Processes.builder(
            List.of(
                bin.toString(),
                "--name=test",
                "--data-dir=" + dir.resolve("data"),
                "--listen-client-urls=" + clientUrl,
                "--advertise-client-urls=" + clientUrl,
                "--listen-peer-urls=" + peerUrl,
                "--initial-advertise-peer-urls=" + peerUrl,
                "--initial-cluster=test=" + peerUrl,
                "--logger=zap",
                "--log-level=warn"));
    Path log = dir.resolve("etcd.log");
    pb.redirectErrorStream(true).redirectOutput(log.toFile());
    Process p;
    try {
      p = pb.start();
    } catch (IOException e) {
      Processes.deleteTree(dir);
      throw new UncheckedIOException("starting " + bin, e);
    }
    Etcd etcd = new Etcd(dir, client, p);
    long deadline = System.nanoTime() + START.toNanos();
    HttpRequest health =
        HttpRequest.newBuilder(URI.create(clientUrl + "/health"))
            .timeout(Duration.ofSeconds(2))
            .build();
    while (true) {
      if (!p.isAlive()) {
        String text = Processes.read(log);
        etcd.close();
        fail("etcd exited with " + p.exitValue() + ":\n" + text);
      }
      try {
        HttpResponse<String> r = KitHttp.plain().send(health, HttpResponse.BodyHandlers.ofString());
        // {"health":"true"} once the member has a leader: until then ringd cannot open it.
        if (r.statusCode() == 200 && r.body().contains("\"true\"")) {
          return etcd;
        }
      } catch (IOException e) {
        // Not listening yet.
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        etcd.close();
        throw new AssertionError("interrupted while etcd started", e);
      }
      if (System.nanoTime() > deadline) {
        String text = Processes.read(log);
        etcd.close();
        fail("etcd did not answer within " + START + ":\n" + text);
      }
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        etcd.close();
        throw new AssertionError("interrupted while etcd started", e);
      }
    }
  }

  /** The client endpoint, {@code http://127.0.0.1:PORT}. */
  public String endpoint() {
    return "http://127.0.0.1:" + clientPort;
  }

  /** The store URL {@code ringd serve --store} takes, {@code etcd://127.0.0.1:PORT}. */
  public String storeUrl() {
    return "etcd://127.0.0.1:" + clientPort;
  }

  /** What etcd logged so far. */
  public String log() {
    return Processes.read(dir.resolve("etcd.log"));
  }

  /** Kills etcd and deletes its data. */
  @Override
  public void close() {
    Processes.kill(process);
    Processes.deleteTree(dir);
  }
}
