package io.github.ringd.client;

import java.util.Locale;

/** What kind of client acks, as {@code GET …/clients} shows it. */
public enum ClientKind {
  /** An application routing keys itself (the default). */
  LIBRARY,
  /** A proxy whose configuration an agent rewrites. */
  PROXY;

  /** The name on the wire: {@code library} or {@code proxy}. */
  public String wireName() {
    return name().toLowerCase(Locale.ROOT);
  }
}
