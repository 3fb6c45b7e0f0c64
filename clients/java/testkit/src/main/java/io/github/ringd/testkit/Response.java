package io.github.ringd.testkit;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpHeaders;
import java.nio.charset.StandardCharsets;

/** One answer of the server, read whole. */
public final class Response {
  private final int status;
  private final HttpHeaders headers;
  private final byte[] body;

  Response(int status, HttpHeaders headers, byte[] body) {
    this.status = status;
    this.headers = headers;
    this.body = body.clone();
  }

  /** The HTTP status. */
  public int status() {
    return status;
  }

  /** The response headers. */
  public HttpHeaders headers() {
    return headers;
  }

  /** The body's bytes (a copy). */
  public byte[] body() {
    return body.clone();
  }

  /** The body as UTF-8 text. */
  public String text() {
    return new String(body, StandardCharsets.UTF_8);
  }

  /** The body as a JSON tree; an empty body is a missing node. */
  public JsonNode json() {
    if (body.length == 0) {
      return RingHandle.JSON.missingNode();
    }
    try {
      return RingHandle.JSON.readTree(body);
    } catch (IOException e) {
      throw new UncheckedIOException("not JSON: " + text(), e);
    }
  }

  @Override
  public String toString() {
    return status + " " + text();
  }
}
