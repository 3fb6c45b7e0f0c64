package io.github.ringd.client;

import java.time.Duration;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * An error status from ringd, with the problem document when the server sent one (a proxy's own
 * error page has none: then only the status and URL are known).
 */
public final class ApiException extends RingdException {
  private static final long serialVersionUID = 1L;

  private final int status;
  private final String url;
  private final transient @Nullable Problem problem;
  private final transient @Nullable Duration retryAfter;

  /** The answer status from url, with its problem document and Retry-After, if any. */
  public ApiException(
      int status, String url, @Nullable Problem problem, @Nullable Duration retryAfter) {
    super(message(status, url, problem));
    this.status = status;
    this.url = url;
    this.problem = problem;
    this.retryAfter = retryAfter;
  }

  private static String message(int status, String url, @Nullable Problem p) {
    if (p == null) {
      return "ringd answered " + status + " from " + url;
    }
    return "ringd refused " + url + ": " + status + " " + p.slug() + ": " + p.detail();
  }

  /** The HTTP status. */
  public int status() {
    return status;
  }

  /** The URL asked. */
  public String url() {
    return url;
  }

  /** The problem document; empty when the answer had none. */
  public Optional<Problem> problem() {
    return Optional.ofNullable(problem);
  }

  /** The problem's slug ({@code unauthorized}, {@code ring-not-found}), "" without one. */
  public String slug() {
    return problem == null ? "" : problem.slug();
  }

  /** The problem's detail, "" without one. */
  public String detail() {
    return problem == null ? "" : problem.detail();
  }

  /**
   * The wait the answer's Retry-After asked for, in delta-seconds; empty when it had none (the
   * HTTP-date form counts as none). ringd sends one with a watch refused at its --max-watchers (503
   * at-capacity, 1 to 10 s) and with a 503 unavailable.
   */
  public Optional<Duration> retryAfter() {
    return Optional.ofNullable(retryAfter);
  }

  /** Whether this is the 401 of a missing or wrong token. */
  public boolean isUnauthorized() {
    return status == 401;
  }

  /** Whether this is the 403 of a token that may not do that (the read token for a write). */
  public boolean isForbidden() {
    return status == 403;
  }

  /** Whether the ring does not exist (404 ring-not-found). */
  public boolean isRingNotFound() {
    return status == 404 && "ring-not-found".equals(slug());
  }

  /** Whether the lease expired, was released or never existed (404 lease-not-found). */
  public boolean isLeaseNotFound() {
    return status == 404 && "lease-not-found".equals(slug());
  }
}
