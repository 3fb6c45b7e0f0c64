package io.github.ringd.client;

import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLHandshakeException;
import org.jspecify.annotations.Nullable;

/**
 * Sends requests to a set of equivalent ringd servers: every instance in front of the same store
 * answers the same. The last one that answered is tried first; the others follow in the order
 * given. Thread-safe.
 */
final class Endpoints {
  /**
   * The largest plain answer (a snapshot of a 10,000-node ring is a few MB, a table at 2^20
   * partitions a few more), so a broken server cannot make the client allocate without end.
   */
  static final int MAX_BODY = 256 << 20;

  private static final int MAX_PROBLEM = 1 << 20;

  /** An open answer (2xx or 304) and the server that gave it; the caller closes its body. */
  record Opened(HttpResponse<InputStream> response, String server) {}

  /** A whole answer read into memory; its body is not copied, and no one changes it. */
  static final class Answer {
    private final int status;
    private final HttpHeaders headers;
    private final byte[] body;
    private final String server;

    Answer(int status, HttpHeaders headers, byte[] body, String server) {
      this.status = status;
      this.headers = headers;
      this.body = body;
      this.server = server;
    }

    int status() {
      return status;
    }

    HttpHeaders headers() {
      return headers;
    }

    byte[] body() {
      return body;
    }

    String server() {
      return server;
    }
  }

  private final List<String> urls;
  private final @Nullable String token;
  private final HttpClient http;
  private final long timeoutNanos;
  private final AtomicInteger preferred = new AtomicInteger();

  Endpoints(List<String> urls, @Nullable String token, HttpClient http, Duration timeout) {
    this.urls = parseUrls(urls);
    this.token = token == null || token.isEmpty() ? null : token;
    this.http = http;
    this.timeoutNanos = timeout.toNanos();
  }

  /**
   * Splits comma-separated lists (as RINGD_ADDR is), trims, checks the scheme and drops a trailing
   * slash.
   */
  static List<String> parseUrls(List<String> given) {
    List<String> out = new ArrayList<>();
    for (String item : given) {
      for (String raw : item.split(",", -1)) {
        String u = raw.strip();
        while (u.endsWith("/")) {
          u = u.substring(0, u.length() - 1);
        }
        if (u.isEmpty()) {
          continue;
        }
        String rest =
            u.startsWith("http://")
                ? u.substring(7)
                : u.startsWith("https://") ? u.substring(8) : null;
        boolean ok =
            rest != null && !rest.isEmpty() && rest.chars().noneMatch(Character::isWhitespace);
        if (ok) {
          try {
            URI.create(u + "/v1");
          } catch (IllegalArgumentException e) {
            ok = false;
          }
        }
        Settings.check(ok, "server URL " + u + ": use http://host:port or https://host:port");
        out.add(u);
      }
    }
    Settings.check(!out.isEmpty(), "no server URL given");
    return List.copyOf(out);
  }

  List<String> urls() {
    return urls;
  }

  /** The server tried first: the one that answered last. */
  String first() {
    return urls.get(Math.floorMod(preferred.get(), urls.size()));
  }

  /** Makes the server after url the next one tried, if url is the preferred one. */
  void demote(String url) {
    int i = urls.indexOf(url);
    if (i >= 0) {
      preferred.compareAndSet(i, (i + 1) % urls.size());
    }
  }

  /**
   * Sends a request to the preferred server, then to each other one while the failure says nothing
   * about the request itself: no connection, or 502, 503, 504 (a 503 at-capacity included, so a
   * watch refused by a full instance is tried on the others at once). A request that reached a
   * server but got no answer is tried elsewhere only if it is a GET, since it may have taken
   * effect. The answer's headers must come within limitNanos, over every server.
   *
   * @throws ApiException for an answer other than 2xx and 304
   * @throws UnreachableException when no server answered
   * @throws InterruptedException when the client closed meanwhile
   */
  Opened open(
      String method,
      String path,
      byte @Nullable [] body,
      Map<String, String> headers,
      long limitNanos,
      Inflight inflight)
      throws InterruptedException {
    long deadline = System.nanoTime() + limitNanos;
    int start = preferred.get();
    RingdException last = null;
    for (int i = 0; i < urls.size(); i++) {
      int idx = Math.floorMod(start + i, urls.size());
      String server = urls.get(idx);
      HttpRequest.Builder rb =
          HttpRequest.newBuilder(URI.create(server + path))
              .method(
                  method,
                  body == null
                      ? HttpRequest.BodyPublishers.noBody()
                      : HttpRequest.BodyPublishers.ofByteArray(body));
      headers.forEach(rb::header);
      if (body != null) {
        rb.header("Content-Type", "application/json");
      }
      if (token != null) {
        rb.header("Authorization", "Bearer " + token);
      }
      CompletableFuture<HttpResponse<InputStream>> cf =
          http.sendAsync(rb.build(), HttpResponse.BodyHandlers.ofInputStream());
      AutoCloseable cancel = () -> cf.cancel(true);
      inflight.track(cancel);
      HttpResponse<InputStream> resp;
      try {
        resp = cf.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (TimeoutException e) {
        cf.cancel(true);
        last =
            new UnreachableException(
                urls,
                new HttpTimeoutException(
                    "no answer within " + Duration.ofNanos(limitNanos) + " from " + server));
        break; // the time allowed is spent
      } catch (InterruptedException e) {
        cf.cancel(true);
        throw e;
      } catch (CancellationException e) {
        // Only close() cancels a request still awaited (Inflight): the thread is to stop, as when
        // interrupted, rather than die of an uncaught exception on the application's stderr.
        throw new InterruptedException("closed");
      } catch (ExecutionException e) {
        if (inflight.closed()) {
          throw new InterruptedException("closed");
        }
        Throwable cause = e.getCause() == null ? e : e.getCause();
        last = new UnreachableException(urls, cause);
        if ("GET".equals(method) || notSent(cause)) {
          continue;
        }
        throw last;
      } finally {
        inflight.untrack(cancel);
      }
      int status = resp.statusCode();
      if (status / 100 == 2 || status == 304) {
        preferred.set(idx);
        return new Opened(resp, server);
      }
      ApiException api = problemOf(resp, server + path);
      if (status >= 502 && status <= 504) {
        last = api;
        continue;
      }
      preferred.set(idx);
      throw api;
    }
    if (last == null) {
      last = new UnreachableException(urls, new HttpTimeoutException("no time left"));
    }
    throw last;
  }

  /** Whether a transport failure happened before the request could be sent. */
  private static boolean notSent(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof ConnectException
          || c instanceof HttpConnectTimeoutException
          || c instanceof SSLHandshakeException) {
        return true;
      }
    }
    return false;
  }

  /** Turns an error answer into an ApiException, reading its problem document, and closes it. */
  private static ApiException problemOf(HttpResponse<InputStream> resp, String url) {
    Duration retryAfter =
        resp.headers().firstValue("Retry-After").map(Endpoints::retryAfter).orElse(null);
    Problem problem = null;
    try (InputStream in = resp.body()) {
      byte[] raw = in.readNBytes(MAX_PROBLEM);
      Map<String, @Nullable Object> m = Json.object(raw);
      String type = Json.string(m, "type");
      if (type != null && type.startsWith("urn:")) {
        Long st = Json.integer(m, "status");
        problem =
            new Problem(
                type,
                orEmpty(Json.string(m, "title")),
                st == null ? resp.statusCode() : st.intValue(),
                orEmpty(Json.string(m, "detail")),
                Json.string(m, "field"));
      }
    } catch (IOException e) {
      // No problem document (a proxy's own error page): the status alone says it.
    }
    return new ApiException(resp.statusCode(), url, problem, retryAfter);
  }

  private static String orEmpty(@Nullable String s) {
    return s == null ? "" : s;
  }

  /**
   * A Retry-After in delta-seconds (RFC 9110 10.2.3: digits only, here with surrounding spaces
   * allowed); the HTTP-date form, a sign, a fraction or garbage count as none (null). A wait too
   * long for a Duration of nanoseconds is the longest one; it is cut to the backoff's maximum.
   */
  static @Nullable Duration retryAfter(String value) {
    String v = value.strip();
    if (v.isEmpty() || !v.chars().allMatch(c -> c >= '0' && c <= '9')) {
      return null;
    }
    if (v.length() > 11) {
      return Duration.ofNanos(Long.MAX_VALUE);
    }
    return Duration.ofSeconds(Long.parseLong(v));
  }

  /**
   * {@link #open} within limitNanos (0: the request timeout) for the answer and its whole body.
   *
   * @throws MalformedException for a body over {@link #MAX_BODY} or one cut short
   */
  Answer call(
      String method,
      String path,
      byte @Nullable [] body,
      Map<String, String> headers,
      long limitNanos,
      Inflight inflight)
      throws InterruptedException {
    long limit = limitNanos > 0 ? limitNanos : timeoutNanos;
    long deadline = System.nanoTime() + limit;
    Opened o = open(method, path, body, headers, limit, inflight);
    InputStream in = o.response().body();
    ScheduledFuture<?> timer =
        Scheduler.after(deadline - System.nanoTime(), () -> Inflight.quietly(in));
    inflight.track(in);
    try {
      byte[] raw = in.readNBytes(MAX_BODY + 1);
      if (raw.length > MAX_BODY) {
        throw new MalformedException(o.server() + path, "body over " + MAX_BODY + " bytes", null);
      }
      return new Answer(o.response().statusCode(), o.response().headers(), raw, o.server());
    } catch (IOException e) {
      if (inflight.closed()) {
        throw new InterruptedException("closed");
      }
      if (timer.isDone()) {
        throw new UnreachableException(
            urls,
            new HttpTimeoutException(
                "no whole answer within " + Duration.ofNanos(limit) + " from " + o.server()));
      }
      throw new MalformedException(o.server() + path, "reading the body: " + e, e);
    } finally {
      timer.cancel(false);
      inflight.untrack(in);
      Inflight.quietly(in);
    }
  }

  /** {@link #call} with a JSON body (null for none) and the request timeout. */
  Answer send(String method, String path, @Nullable Object json, Inflight inflight)
      throws InterruptedException {
    return call(method, path, json == null ? null : Json.write(json), Map.of(), 0, inflight);
  }
}
