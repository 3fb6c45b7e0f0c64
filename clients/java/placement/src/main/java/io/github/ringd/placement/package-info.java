/**
 * ringd's placement core: it turns a ring config and a node set (plus the state some algorithms
 * keep) into a {@link io.github.ringd.placement.Placement} that answers, bit for bit as the server
 * does, who owns a key, its preference list, each node's ownership, and the canonical encoding and
 * fingerprint. docs/placement-spec.md in the ringd repository is the normative definition; section
 * numbers in comments refer to it.
 *
 * <p>All eleven algorithms are implemented: ring, ketama, maglev, jump, rendezvous, table, the
 * proxy modes nginx, haproxy and twemproxy, and the xDS modes envoy_ring_hash and envoy_maglev,
 * with every hash each accepts.
 *
 * <p>A client builds the placement of a ring version from its snapshot, verified against the
 * snapshot's fingerprint:
 *
 * <pre>{@code
 * Snapshot s = Snapshot.parse(body); // GET /v1/rings/{ring}/snapshot
 * Placement p = s.placement(TableSource.none()); // FingerprintMismatchException if it disagrees
 * String owner = p.owner("user:42");
 * List<String> replicas = p.preferenceList(key, p.replicationFactor());
 * }</pre>
 *
 * <p>A table snapshot carries no table: give {@link io.github.ringd.placement.TableSource#encoding}
 * the body of {@code GET …/snapshots/{v}/table}, or {@link
 * io.github.ringd.placement.TableSource#previous} the previous version's placement to apply the
 * snapshot's moves to. {@link io.github.ringd.placement.Placement#decode} builds a placement from
 * such an encoding alone (thin mode), for any algorithm; {@link
 * io.github.ringd.placement.Placement#build} from a config and nodes directly.
 *
 * <p>Refusals are {@link io.github.ringd.placement.PlacementException}s whose {@link
 * io.github.ringd.placement.PlacementException#reason() reason} names the server's refusal.
 * Placements are immutable and safe to share between threads; their lookups allocate nothing.
 */
package io.github.ringd.placement;
