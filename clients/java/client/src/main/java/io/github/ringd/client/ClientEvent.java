package io.github.ringd.client;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * What a {@link RingClient}'s observer is told: a version applied or refused, a connection made or
 * lost, an ack, a deletion. Lets an application export metrics or logs without the client depending
 * on a metrics library.
 *
 * @param kind what happened; the other fields are set as it says
 * @param version the version concerned
 * @param from the version held before an {@link Kind#APPLIED}, 0 for none
 * @param reset whether an {@link Kind#APPLIED} replaced the client's history (the ring was
 *     recreated, or the client fell behind the retained history)
 * @param server the server concerned, if any
 * @param transport the transport of a {@link Kind#CONNECTED}
 * @param error the failure, if any
 * @param took how long verifying (and completing a table) took, for an {@link Kind#APPLIED}
 */
public record ClientEvent(
    Kind kind,
    long version,
    long from,
    boolean reset,
    @Nullable String server,
    @Nullable Transport transport,
    @Nullable RingdException error,
    Duration took) {
  /** What a {@link ClientEvent} reports. */
  public enum Kind {
    /** A version was verified and swapped in (version, from, reset, took). */
    APPLIED,
    /** A version was refused (version, error). */
    REFUSED,
    /** The watch connected (server, transport). */
    CONNECTED,
    /** A watch attempt ended in failure (server, error). */
    DISCONNECTED,
    /** An ack was sent (version; error when it failed). */
    ACKED,
    /** The server says the ring was deleted (version: the one held). */
    DELETED
  }

  static ClientEvent of(Kind kind, long version, @Nullable RingdException error) {
    return new ClientEvent(kind, version, 0, false, null, null, error, Duration.ZERO);
  }
}
