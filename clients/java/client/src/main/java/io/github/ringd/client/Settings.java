package io.github.ringd.client;

import java.net.http.HttpClient;
import java.time.Duration;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import javax.net.ssl.SSLContext;
import org.jspecify.annotations.Nullable;

/** What a builder set; {@link RingClient} and {@link Member} read the fields that concern them. */
final class Settings {
  static final Pattern RING_NAME = Pattern.compile("^[a-z0-9][a-z0-9._-]{0,62}$");
  static final Pattern ID_NAME = Pattern.compile("^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$");

  @Nullable String token;
  @Nullable String clientId;
  boolean ack = true;
  Duration ackInterval = Duration.ofSeconds(60);
  ClientKind kind = ClientKind.LIBRARY;
  WatchMode mode = WatchMode.AUTO;
  Duration backoffMin = Duration.ofMillis(100);
  Duration backoffMax = Duration.ofSeconds(10);
  Duration longPollWait = Duration.ofSeconds(30);
  Duration idleTimeout = Duration.ofSeconds(60);
  Duration sseRetry = Duration.ofMinutes(5);
  Duration requestTimeout = Duration.ofSeconds(10);
  boolean timeoutSet;
  @Nullable SSLContext sslContext;
  @Nullable HttpClient httpClient;
  @Nullable Consumer<ClientEvent> observer;
  Duration leaseTtl = Duration.ofSeconds(10);

  static void check(boolean ok, String message) {
    if (!ok) {
      throw new IllegalArgumentException(message);
    }
  }

  static boolean positive(Duration d) {
    return !d.isNegative() && !d.isZero();
  }

  void checkBackoff() {
    check(
        positive(backoffMin) && backoffMax.compareTo(backoffMin) >= 0,
        "the backoff must be more than zero, its maximum at least its minimum");
  }

  static void checkRing(String ring) {
    check(
        ring != null && RING_NAME.matcher(ring).matches(),
        "ring name "
            + ring
            + ": 1-63 characters of a-z 0-9 . _ -, starting with a letter or digit");
  }

  /**
   * The client every request goes through: the one given, else one of HTTP/1.1 (ringd serves
   * HTTP/1.1; the default would add an h2c upgrade to every plain request) with the TLS context
   * given. Its connect timeout is the request timeout; request time limits are per request, since a
   * watch stream stays open for hours.
   */
  HttpClient http() {
    if (httpClient != null) {
      return httpClient;
    }
    HttpClient.Builder b =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(requestTimeout)
            .followRedirects(HttpClient.Redirect.NEVER);
    if (sslContext != null) {
      b.sslContext(sslContext);
    }
    return b.build();
  }
}
