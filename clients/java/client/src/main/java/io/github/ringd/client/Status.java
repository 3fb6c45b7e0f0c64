package io.github.ringd.client;

import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * What a {@link RingClient}'s watch is doing, for health checks, metrics and tests: one consistent
 * reading. Counters only grow.
 *
 * @param version the version routed on; 0 before the first
 * @param fingerprint that version's verified fingerprint; null before the first
 * @param acked the newest version whose ack the server accepted while it was still the one routed
 *     on; 0 for none
 * @param deleted the server said the ring was deleted and no new ring of that name has appeared;
 *     the client keeps routing on {@code version}
 * @param transport how new versions arrive now
 * @param server the server the watch is connected to, null for none
 * @param lastError the most recent failure (connection, refusal, verification), null until the
 *     first; success does not clear it
 * @param lastErrorAt when {@code lastError} happened
 * @param applied versions verified and swapped in
 * @param refused versions refused (verification failed, or the placement core or the decoder
 *     refused them)
 * @param reconnects watch attempts that ended in failure and were made again
 * @param tableDownloads table versions built by downloading the table
 * @param tableMovesApplied table versions built from the previous version and the version's moves
 * @param acks acks the server accepted
 * @param ackFailures acks that failed
 */
public record Status(
    long version,
    @Nullable String fingerprint,
    long acked,
    boolean deleted,
    Transport transport,
    @Nullable String server,
    @Nullable RingdException lastError,
    @Nullable Instant lastErrorAt,
    long applied,
    long refused,
    long reconnects,
    long tableDownloads,
    long tableMovesApplied,
    long acks,
    long ackFailures) {

  /** The status being changed, under the client's lock. */
  static final class Mutable {
    long version;
    @Nullable String fingerprint;
    long acked;
    boolean deleted;
    Transport transport = Transport.CONNECTING;
    @Nullable String server;
    @Nullable RingdException lastError;
    @Nullable Instant lastErrorAt;
    long applied;
    long refused;
    long reconnects;
    long tableDownloads;
    long tableMovesApplied;
    long acks;
    long ackFailures;

    void error(RingdException e) {
      lastError = e;
      lastErrorAt = Instant.now();
    }

    Status freeze() {
      return new Status(
          version,
          fingerprint,
          acked,
          deleted,
          transport,
          server,
          lastError,
          lastErrorAt,
          applied,
          refused,
          reconnects,
          tableDownloads,
          tableMovesApplied,
          acks,
          ackFailures);
    }
  }
}
