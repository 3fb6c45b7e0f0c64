package io.github.ringd.client;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Serves a scripted watch stream per connection of ring r (the bytes of connection i; the last
 * repeats), holding each stream open once its script ends in a blank line, as ringd does; records
 * the Last-Event-ID of each connection.
 */
final class FakeRingd implements AutoCloseable {
  private final List<byte[]> scripts;
  private final List<String> resumes = new ArrayList<>();
  private final HttpServer server;
  private final ExecutorService pool =
      Executors.newCachedThreadPool(
          r -> {
            Thread t = new Thread(r, "fake-ringd");
            t.setDaemon(true);
            return t;
          });
  private final CountDownLatch closing = new CountDownLatch(1);

  FakeRingd(List<byte[]> scripts) {
    this.scripts = List.copyOf(scripts);
    try {
      server =
          HttpServer.create(
              new InetSocketAddress(InetAddress.getByAddress(new byte[] {127, 0, 0, 1}), 0), 16);
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

  /** The Last-Event-ID of each connection so far, "" for none. */
  synchronized List<String> resumes() {
    return List.copyOf(resumes);
  }

  private void handle(HttpExchange ex) throws IOException {
    try (ex) {
      if (!ex.getRequestURI().getPath().equals("/v1/rings/r/watch")) {
        ex.sendResponseHeaders(404, -1);
        return;
      }
      byte[] body;
      synchronized (this) {
        String id = ex.getRequestHeaders().getFirst("Last-Event-ID");
        resumes.add(id == null ? "" : id);
        body = scripts.get(Math.min(resumes.size(), scripts.size()) - 1);
      }
      ex.getResponseHeaders().set("Content-Type", "text/event-stream");
      ex.sendResponseHeaders(200, 0);
      OutputStream out = ex.getResponseBody();
      out.write(body);
      out.flush();
      int n = body.length;
      if (n >= 2 && body[n - 1] == '\n' && body[n - 2] == '\n') {
        try {
          closing.await(); // hold the stream open, as ringd does
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }
  }

  @Override
  public void close() {
    closing.countDown();
    server.stop(0);
    pool.shutdownNow();
  }
}
