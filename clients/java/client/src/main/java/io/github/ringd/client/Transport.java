package io.github.ringd.client;

/** How a {@link RingClient} currently hears about new versions. */
public enum Transport {
  /** Not connected: starting, or between attempts. */
  CONNECTING,
  /** A Server-Sent Events stream. */
  SSE,
  /** Repeated long-polls. */
  LONG_POLL
}
