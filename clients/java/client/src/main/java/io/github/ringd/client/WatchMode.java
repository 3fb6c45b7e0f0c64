package io.github.ringd.client;

/** How a {@link RingClient} hears about new versions. */
public enum WatchMode {
  /**
   * Streams (Server-Sent Events), and long-polls while the stream is unusable, e.g. behind a proxy
   * that buffers or refuses event streams, trying the stream again every SSE retry.
   */
  AUTO,
  /** Streams only. */
  SSE,
  /** Long-polls only. */
  LONG_POLL
}
