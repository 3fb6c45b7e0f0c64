package io.github.ringd.benchmarks;

import io.github.ringd.client.RingClient;
import io.github.ringd.client.WatchMode;
import io.github.ringd.testkit.Response;
import io.github.ringd.testkit.RingHandle;
import io.github.ringd.testkit.Ringd;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

/**
 * Propagation: the time from a write's response until the Java {@link RingClient} routes on the
 * version that write made, over Server-Sent Events and over long-polls, on loopback; the measure of
 * the Rust client's {@code benches/load/client_latency.rs} and the Go client's {@code
 * BenchmarkPropagation}, so the three compare.
 *
 * <p>It starts {@code ringd serve} ({@code RINGD_BIN}, else {@code target/release/ringd}) on a free
 * loopback port with a fresh SQLite store, creates a 100-node {@code ring}, then per watch mode
 * makes sequential single-node changes ({@code PUT …/nodes/{id}} flipping one node's weight between
 * 1 and 2, so every change moves keys). Each is timed from the moment its response has been read
 * until the client's {@link io.github.ringd.client.VersionListener} hears the version, which it
 * does right after the atomic swap (after parsing the snapshot, rebuilding the 16,000-point
 * placement and comparing its fingerprint). The server sends a version to watchers before it
 * answers the write, so a version the client held before the response was read counts as 0 ms.
 * Percentiles are the Rust tool's: the sorted latency at index ⌊n·p⌋, so p99 of 100 is the maximum.
 *
 * <p>Usage: {@code java -cp … io.github.ringd.benchmarks.Propagation [changes]} (default 100).
 */
public final class Propagation {
  private static final int NODES = 100;
  private static final Duration MISSED_AFTER = Duration.ofSeconds(10);

  private final RingHandle ring;
  private final int[] weights = new int[NODES];
  private int next;

  private Propagation(RingHandle ring) {
    this.ring = ring;
    Arrays.fill(weights, 1);
  }

  /**
   * One watch mode's measure: the latencies in ns, sorted, how many were 0 (before the response),
   * and the changes never seen.
   */
  record Result(WatchMode mode, List<Long> sorted, int beforeResponse, int missed) {
    /** The table row, in the Rust tool's columns. */
    String row() {
      String name = mode == WatchMode.SSE ? "SSE" : "long-poll";
      int n = sorted.size();
      if (n == 0) {
        return String.format(Locale.ROOT, "| %s | 0 | — | — | — | — | %d |", name, missed);
      }
      return String.format(
          Locale.ROOT,
          "| %s | %d | %s | %s | %s | %d | %d |",
          name,
          n,
          ms(percentile(sorted, 0.50)),
          ms(percentile(sorted, 0.99)),
          ms(sorted.get(n - 1)),
          beforeResponse,
          missed);
    }
  }

  public static void main(String[] args) {
    int changes = args.length > 0 ? Integer.parseInt(args[0]) : 100;
    try (Ringd server = Ringd.start()) {
      System.out.printf(
          Locale.ROOT,
          "ringd %s, a %d-node ring, %d changes per mode: from the PUT response until the Java"
              + " client routes on the version%n%n",
          server.url(),
          NODES,
          changes);
      System.out.println("| mode | changes | p50 | p99 | max | before the response | missed |");
      System.out.println("|---|---:|---:|---:|---:|---:|---:|");
      for (Result r : measure(server, changes, changes)) {
        System.out.println(r.row());
      }
    }
  }

  /**
   * Creates the ring on server, then per mode runs warmup untimed changes and changes timed ones.
   */
  static List<Result> measure(Ringd server, int changes, int warmup) {
    RingHandle ring = server.ring("propagation");
    ring.create(Map.of("algorithm", "ring"));
    List<Map<String, Object>> ops = new ArrayList<>();
    for (int i = 0; i < NODES; i++) {
      ops.add(RingHandle.upsert(Map.of("id", id(i), "address", address(i))));
    }
    ring.change(ops);
    Propagation p = new Propagation(ring);
    WatchMode[] modes = {WatchMode.SSE, WatchMode.LONG_POLL};
    // A JVM compiles the verification path (the JSON parser, the ring's build, SHA-256) only after
    // it has run it a while; the first hundred versions measure the interpreter. One untimed round
    // per mode leaves steady state, which is what a long-lived service runs in.
    for (WatchMode mode : modes) {
      p.scenario(server.url(), mode, warmup);
    }
    List<Result> out = new ArrayList<>();
    for (WatchMode mode : modes) {
      out.add(p.scenario(server.url(), mode, changes));
    }
    return out;
  }

  /** Runs changes changes with a client in mode watching. */
  private Result scenario(String url, WatchMode mode, int changes) {
    Map<Long, Long> seen = new ConcurrentHashMap<>();
    long[] latencies = new long[changes];
    int n = 0;
    int before = 0;
    int missed = 0;
    try (RingClient client =
        RingClient.builder(List.of(url), ring.name())
            .watchMode(mode)
            .clientId("propagation-" + mode.name().toLowerCase(Locale.ROOT))
            .addListener((now, prev) -> seen.putIfAbsent(now.version(), System.nanoTime()))
            .build()) {
      client.awaitReady(Duration.ofSeconds(30));
      for (int c = 0; c < changes; c++) {
        long version = change();
        long read = System.nanoTime();
        long deadline = read + MISSED_AFTER.toNanos();
        Long at;
        while ((at = seen.get(version)) == null && System.nanoTime() < deadline) {
          // Polls at the Rust tool's 200 µs: a waiting thread must not take a vCPU from the
          // client's verification it is timing.
          LockSupport.parkNanos(200_000);
        }
        if (at == null) {
          missed++;
        } else if (at <= read) {
          before++;
          latencies[n++] = 0;
        } else {
          latencies[n++] = at - read;
        }
      }
    }
    long[] sorted = Arrays.copyOf(latencies, n);
    Arrays.sort(sorted);
    return new Result(mode, Arrays.stream(sorted).boxed().toList(), before, missed);
  }

  /** Flips the next node's weight; the version the change made, once its response is read. */
  private long change() {
    int i = next;
    next = (i + 1) % NODES;
    weights[i] = 3 - weights[i];
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("address", address(i));
    body.put("weight", weights[i]);
    Response r = ring.request("PUT", "/nodes/" + id(i), body);
    if (r.status() / 100 != 2) {
      throw new IllegalStateException("PUT node " + id(i) + ": " + r.status() + " " + r.text());
    }
    return r.json().get("version").asLong();
  }

  static long percentile(List<Long> sorted, double p) {
    return sorted.get(Math.min((int) (sorted.size() * p), sorted.size() - 1));
  }

  private static String ms(long nanos) {
    return String.format(Locale.ROOT, "%.2f ms", nanos / 1e6);
  }

  private static String id(int i) {
    return String.format(Locale.ROOT, "node-%03d", i);
  }

  private static String address(int i) {
    return "10.0." + (i / 250) + "." + (i % 250) + ":11211";
  }
}
