package io.github.ringd.testkit;

import java.net.http.HttpClient;
import java.time.Duration;
import javax.net.ssl.SSLContext;

/** The HTTP clients the kit's own requests go through. */
final class KitHttp {
  private KitHttp() {}

  /** One client for every plain-HTTP server: HttpClient is meant to be shared. */
  private static final HttpClient PLAIN = builder().build();

  /** The client for plain-HTTP servers. */
  static HttpClient plain() {
    return PLAIN;
  }

  /** A client trusting (and presenting) what context holds. */
  static HttpClient tls(SSLContext context) {
    return builder().sslContext(context).build();
  }

  /**
   * HTTP/1.1, as ringd serves it: the default (HTTP/2) would add an h2c upgrade to every plain
   * request. No proxy: every server a test runs is on loopback.
   */
  private static HttpClient.Builder builder() {
    return HttpClient.newBuilder()
        .version(HttpClient.Version.HTTP_1_1)
        .proxy(HttpClient.Builder.NO_PROXY)
        .connectTimeout(Duration.ofSeconds(10));
  }
}
