package io.github.ringd.testkit;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.net.ssl.SSLContext;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Assumptions;

/**
 * A real {@code ringd serve} on a loopback port, for live tests: the binary named by the {@code
 * RINGD_BIN} environment variable, over a fresh SQLite file in a temporary directory (or a given
 * store, such as a real {@link Etcd}). Starting it skips the calling test when {@code RINGD_BIN} is
 * unset, and fails it, showing the server's log, when the server does not come up. {@link #close}
 * kills it and deletes its directory.
 */
public final class Ringd implements AutoCloseable {
  /** How long the server gets to print its URL. */
  private static final long START_SECONDS = 30;

  private final Path dir;
  private final @Nullable String store;
  private final List<String> extraArgs;
  private @Nullable Process process;
  private String url = "";
  private volatile @Nullable SSLContext sslContext;

  private Ringd(Path dir, @Nullable String store, List<String> extraArgs) {
    this.dir = dir;
    this.store = store;
    this.extraArgs = List.copyOf(extraArgs);
  }

  /**
   * The ringd binary: {@code RINGD_BIN}. Skips the calling test (a JUnit assumption) when it is
   * unset, and fails it when it names no executable file.
   */
  public static Path binary() {
    String bin = System.getenv("RINGD_BIN");
    Assumptions.assumeTrue(
        bin != null && !bin.isEmpty(), "RINGD_BIN is unset: no ringd binary to run live tests on");
    Path path = Path.of(bin).toAbsolutePath();
    if (!Files.isExecutable(path)) {
      fail("RINGD_BIN=" + bin + " is not an executable file");
    }
    return path;
  }

  /**
   * Starts {@code ringd serve --listen 127.0.0.1:0} over a SQLite file in a fresh temporary
   * directory, with extraArgs appended (tokens, TTLs, TLS files).
   */
  public static Ringd start(String... extraArgs) {
    return startOn(null, extraArgs);
  }

  /** Starts ringd over the etcd given ({@code --store etcd://…}), with extraArgs appended. */
  public static Ringd startOnEtcd(Etcd etcd, String... extraArgs) {
    return startOn(etcd.storeUrl(), extraArgs);
  }

  /**
   * Starts ringd over the store URL given ({@code --store}; null for a SQLite file in the server's
   * temporary directory), with extraArgs appended.
   */
  public static Ringd startOn(@Nullable String storeUrl, String... extraArgs) {
    binary();
    Ringd r = new Ringd(Processes.tempDir("ringd-test-"), storeUrl, Arrays.asList(extraArgs));
    try {
      r.launch("127.0.0.1:0");
    } catch (RuntimeException | Error e) {
      Processes.deleteTree(r.dir);
      throw e;
    }
    return r;
  }

  /** The server's base URL, {@code http://127.0.0.1:PORT} (https with TLS). */
  public String url() {
    return url;
  }

  /** The server's process id; it changes on {@link #restart}. */
  public long pid() {
    Process p = process;
    if (p == null) {
      throw new IllegalStateException("ringd is not running");
    }
    return p.pid();
  }

  /** The server's temporary directory: its log, and its SQLite file unless on another store. */
  public Path dir() {
    return dir;
  }

  /** What the server wrote to its log (stderr) so far, across restarts. */
  public String log() {
    return Processes.read(dir.resolve("ringd.log"));
  }

  /**
   * Trusts (and, for mutual TLS, presents) what context holds in the kit's own requests to this
   * server, e.g. {@link Pki#sslContext(boolean)}; {@link #ring} handles made after use it.
   */
  public Ringd trusting(SSLContext context) {
    this.sslContext = context;
    return this;
  }

  /** The REST API of one ring on this server. */
  public RingHandle ring(String name) {
    SSLContext ctx = sslContext;
    return new RingHandle(url, name, null, ctx == null ? KitHttp.plain() : KitHttp.tls(ctx));
  }

  /** Kills the server at once (SIGKILL: no goodbye to its streams). Safe to call again. */
  public synchronized void kill() {
    Process p = process;
    if (p != null) {
      Processes.kill(p);
      process = null;
    }
  }

  /** Kills the server and starts it again on the same port and data. */
  public synchronized void restart() {
    kill();
    String hostPort = url.substring(url.indexOf("://") + 3);
    launch(hostPort);
  }

  /** Kills the server and deletes its directory. */
  @Override
  public synchronized void close() {
    kill();
    Processes.deleteTree(dir);
  }

  @Override
  public String toString() {
    return "ringd at " + url;
  }

  /** Runs the binary on listen and waits for the URL it prints on stdout. */
  private void launch(String listen) {
    List<String> cmd = new ArrayList<>();
    cmd.add(binary().toString());
    cmd.add("serve");
    cmd.add("--listen");
    cmd.add(listen);
    cmd.add("--store");
    cmd.add(store != null ? store : "sqlite://" + dir.resolve("ringd.db"));
    cmd.addAll(extraArgs);
    Path logFile = dir.resolve("ringd.log");
    ProcessBuilder pb = Processes.builder(cmd);
    pb.redirectError(ProcessBuilder.Redirect.appendTo(logFile.toFile()));
    Process p;
    try {
      p = pb.start();
    } catch (IOException e) {
      throw new UncheckedIOException("starting " + cmd, e);
    }
    CompletableFuture<String> printed = new CompletableFuture<>();
    Thread reader = new Thread(() -> readStdout(p, printed), "ringd-stdout-" + p.pid());
    reader.setDaemon(true);
    reader.start();
    try {
      url = printed.get(START_SECONDS, TimeUnit.SECONDS);
      process = p;
    } catch (TimeoutException | ExecutionException e) {
      Processes.kill(p);
      fail("ringd printed no URL within " + START_SECONDS + " s; log:\n" + Processes.read(logFile));
    } catch (InterruptedException e) {
      Processes.kill(p);
      Thread.currentThread().interrupt();
      fail("interrupted while ringd started");
    }
  }

  /**
   * Reads the server's stdout for its {@code ringd listening on URL} line, and on to the end, so
   * the server never blocks on a full pipe.
   */
  private static void readStdout(Process p, CompletableFuture<String> printed) {
    String prefix = "ringd listening on ";
    try (BufferedReader r =
        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line = r.readLine(); line != null; line = r.readLine()) {
        if (line.startsWith(prefix)) {
          printed.complete(line.substring(prefix.length()).trim());
        }
      }
    } catch (IOException e) {
      // The process went away; the starter reports it.
    }
    printed.completeExceptionally(new IOException("ringd's stdout closed before a URL"));
  }
}
