package io.github.ringd.client;

import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * What a {@link Member} reports.
 *
 * @param state where it stands
 * @param leaseId the lease held, or last held (kept when lost or left); null before the first
 * @param deadline the lease's deadline as ringd last answered it
 * @param version the ring's version after the last registration
 * @param server the server that answered last
 * @param heartbeats successful registrations and renewals
 * @param losses lost leases; a loss is followed at once by a new registration, so a reader may see
 *     REGISTERED again without having seen LOST: this count says it happened
 * @param lastError the most recent failure, cleared by the next success; in FAILED, the refusal
 *     that stopped it
 */
public record MemberStatus(
    MemberState state,
    @Nullable String leaseId,
    @Nullable Instant deadline,
    long version,
    @Nullable String server,
    long heartbeats,
    long losses,
    @Nullable RingdException lastError) {
  static MemberStatus initial() {
    return new MemberStatus(MemberState.JOINING, null, null, 0, null, 0, 0, null);
  }
}
