package io.github.ringd.client;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A reverse proxy in front of a ringd, which a test can shut down (cutting its streams), make
 * refuse event streams (406, as a proxy that does not pass them), or make answer 503 to everything.
 * Streams pass through chunk by chunk.
 */
final class TestProxy implements AutoCloseable {
  private static final Set<String> HOP =
      Set.of("connection", "content-length", "transfer-encoding", "host", "keep-alive", "upgrade");

  final AtomicBoolean refuseStreams = new AtomicBoolean();
  final AtomicBoolean down = new AtomicBoolean();
  final AtomicLong watches = new AtomicLong();
  final AtomicLong fetches = new AtomicLong();
  private final String target;
  private final HttpServer server;
  private final ExecutorService pool =
      Executors.newCachedThreadPool(
          r -> {
            Thread t = new Thread(r, "test-proxy");
            t.setDaemon(true);
            return t;
          });
  private final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  TestProxy(String target) {
    this.target = target;
    try {
      server =
          HttpServer.create(
              new InetSocketAddress(InetAddress.getByAddress(new byte[] {127, 0, 0, 1}), 0), 64);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    server.createContext("/", this::handle);
    server.setExecutor(pool);
    server.start();
  }

  String url() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  private void handle(HttpExchange ex) throws IOException {
    try (ex) {
      String path = ex.getRequestURI().getRawPath();
      if (down.get()) {
        plain(ex, 503, "down");
        return;
      }
      if (path.contains("/snapshots/")) {
        fetches.incrementAndGet();
      }
      if (path.endsWith("/watch")) {
        watches.incrementAndGet();
        if (refuseStreams.get()) {
          plain(ex, 406, "no event streams here");
          return;
        }
      }
      String query = ex.getRequestURI().getRawQuery();
      HttpRequest.Builder rb =
          HttpRequest.newBuilder(URI.create(target + path + (query == null ? "" : "?" + query)));
      byte[] body = ex.getRequestBody().readAllBytes();
      rb.method(
          ex.getRequestMethod(),
          body.length == 0
              ? HttpRequest.BodyPublishers.noBody()
              : HttpRequest.BodyPublishers.ofByteArray(body));
      for (Map.Entry<String, List<String>> h : ex.getRequestHeaders().entrySet()) {
        if (!HOP.contains(h.getKey().toLowerCase(java.util.Locale.ROOT))) {
          for (String v : h.getValue()) {
            rb.header(h.getKey(), v);
          }
        }
      }
      HttpResponse<InputStream> resp;
      try {
        resp = http.send(rb.build(), HttpResponse.BodyHandlers.ofInputStream());
      } catch (IOException e) {
        plain(ex, 502, "upstream: " + e);
        return;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      resp.headers()
          .map()
          .forEach(
              (k, vs) -> {
                if (!HOP.contains(k.toLowerCase(java.util.Locale.ROOT))) {
                  ex.getResponseHeaders().put(k, vs);
                }
              });
      int status = resp.statusCode();
      boolean noBody = status == 304 || status == 204;
      ex.sendResponseHeaders(status, noBody ? -1 : 0);
      try (InputStream in = resp.body()) {
        if (noBody) {
          return;
        }
        OutputStream out = ex.getResponseBody();
        byte[] buf = new byte[16 << 10];
        for (int n = in.read(buf); n >= 0; n = in.read(buf)) {
          out.write(buf, 0, n);
          out.flush(); // pass events on as they come
        }
      }
    }
  }

  private static void plain(HttpExchange ex, int status, String text) throws IOException {
    byte[] b = text.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", "text/plain");
    ex.sendResponseHeaders(status, b.length);
    ex.getResponseBody().write(b);
  }

  /** Shuts the proxy down, cutting every connection. Safe to call again. */
  void shutdown() {
    server.stop(0);
    pool.shutdownNow();
  }

  @Override
  public void close() {
    shutdown();
  }
}
