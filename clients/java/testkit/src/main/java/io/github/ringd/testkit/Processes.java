package io.github.ringd.testkit;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/** What the kit's process starters share: the child's environment, ports, logs, clean-up. */
final class Processes {
  private Processes() {}

  /**
   * Builds a process of command with this JVM's environment less the RINGD_* and proxy variables,
   * so the child serves exactly what the test asks for and loopback requests never go through a
   * proxy.
   */
  static ProcessBuilder builder(List<String> command) {
    ProcessBuilder pb = new ProcessBuilder(command);
    Map<String, String> env = pb.environment();
    env.keySet()
        .removeIf(k -> k.startsWith("RINGD_") || k.toLowerCase(Locale.ROOT).contains("proxy"));
    pb.redirectInput(ProcessBuilder.Redirect.PIPE);
    return pb;
  }

  /** A loopback TCP port nothing listened on a moment ago. */
  static int freePort() {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The text of a log file, "" when it does not exist (yet). */
  static String read(Path file) {
    try {
      return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
    } catch (IOException e) {
      return "(log unreadable: " + e + ")";
    }
  }

  /** Kills p at once (SIGKILL) and waits for it to be gone. */
  static void kill(Process p) {
    p.destroyForcibly();
    try {
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        fail("process " + p.pid() + " did not exit within 30 s of SIGKILL");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** A fresh temporary directory; prefix names what it is for. */
  static Path tempDir(String prefix) {
    try {
      return Files.createTempDirectory(prefix);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Deletes dir and everything in it, ignoring what is already gone. */
  static void deleteTree(Path dir) {
    try (Stream<Path> walk = Files.walk(dir)) {
      walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // A leftover temporary directory is no reason to fail a test.
    }
  }
}
