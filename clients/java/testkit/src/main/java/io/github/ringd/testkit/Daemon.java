package io.github.ringd.testkit;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;

/**
 * A server process a test routes keys to (redis-server, memcached), listening on a loopback port.
 * {@link #close} (or {@link #stop}) kills it.
 */
public final class Daemon implements AutoCloseable {
  private final String host;
  private final int port;
  private final Process process;
  private final Path dir;

  private Daemon(int port, Process process, Path dir) {
    this.host = "127.0.0.1";
    this.port = port;
    this.process = process;
    this.dir = dir;
  }

  /**
   * Runs bin with the arguments args(port) on a free loopback port and waits until that port
   * accepts connections. It tries another port when the process exits first (another process may
   * have taken the port between the probe and the start), up to three times. bin is looked up on
   * the PATH; a missing one fails the test, naming the Debian package.
   */
  public static Daemon start(String bin, IntFunction<List<String>> args) {
    Path exe = onPath(bin);
    String lastOutput = "";
    for (int attempt = 0; attempt < 3; attempt++) {
      int port = Processes.freePort();
      Path dir = Processes.tempDir(bin + "-test-");
      List<String> cmd = new ArrayList<>();
      cmd.add(exe.toString());
      cmd.addAll(args.apply(port));
      Path log = dir.resolve("out.log");
      ProcessBuilder pb = Processes.builder(cmd).directory(dir.toFile()).redirectErrorStream(true);
      pb.redirectOutput(log.toFile());
      Process p;
      try {
        p = pb.start();
      } catch (IOException e) {
        Processes.deleteTree(dir);
        throw new UncheckedIOException("starting " + cmd, e);
      }
      if (waitListening(port, p, 10_000)) {
        return new Daemon(port, p, dir);
      }
      Processes.kill(p);
      lastOutput = Processes.read(log);
      Processes.deleteTree(dir);
    }
    fail(bin + " did not listen after three tries; its last output:\n" + lastOutput);
    throw new AssertionError("unreachable");
  }

  /** redis-server on a free loopback port, persistence off. */
  public static Daemon redis() {
    return start(
        "redis-server",
        port ->
            List.of(
                "--port",
                Integer.toString(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no"));
  }

  /** memcached on a free loopback port (TCP only, 64 MB); as root it runs as root. */
  public static Daemon memcached() {
    boolean root = "root".equals(System.getProperty("user.name"));
    return start(
        "memcached",
        port -> {
          List<String> a =
              new ArrayList<>(
                  List.of("-p", Integer.toString(port), "-l", "127.0.0.1", "-U", "0", "-m", "64"));
          if (root) {
            a.add("-u");
            a.add("root");
          }
          return a;
        });
  }

  private static Path onPath(String bin) {
    String path = System.getenv("PATH");
    for (String d : (path == null ? "" : path).split(File.pathSeparator, -1)) {
      Path candidate = Path.of(d.isEmpty() ? "." : d, bin);
      if (Files.isExecutable(candidate)) {
        return candidate;
      }
    }
    throw new AssertionError(bin + " is not installed (Debian: apt-get install " + bin + ")");
  }

  private static boolean waitListening(int port, Process p, long millis) {
    long deadline = System.nanoTime() + millis * 1_000_000;
    while (System.nanoTime() < deadline && p.isAlive()) {
      try (Socket s = new Socket()) {
        s.connect(
            new InetSocketAddress(InetAddress.getByAddress(new byte[] {127, 0, 0, 1}), port), 200);
        return true;
      } catch (IOException e) {
        try {
          Thread.sleep(20);
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          return false;
        }
      }
    }
    return false;
  }

  /** The loopback host it listens on, 127.0.0.1. */
  public String host() {
    return host;
  }

  /** Its port. */
  public int port() {
    return port;
  }

  /** host:port. */
  public String address() {
    return host + ":" + port;
  }

  /** Kills it now (SIGKILL), to take a server down under its clients. Safe to call again. */
  public void stop() {
    Processes.kill(process);
  }

  @Override
  public void close() {
    stop();
    Processes.deleteTree(dir);
  }
}
