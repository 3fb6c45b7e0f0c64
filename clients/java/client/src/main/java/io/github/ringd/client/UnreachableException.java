package io.github.ringd.client;

import java.util.List;

/** A request no server answered: every URL was tried; the cause is the last transport error. */
public final class UnreachableException extends RingdException {
  private static final long serialVersionUID = 1L;

  private final List<String> urls;

  /** No server of urls answered; cause is the last failure. */
  public UnreachableException(List<String> urls, Throwable cause) {
    super("no ringd server reachable (" + String.join(",", urls) + "): " + cause, cause);
    this.urls = List.copyOf(urls);
  }

  /** The servers tried. */
  public List<String> urls() {
    return urls;
  }
}
