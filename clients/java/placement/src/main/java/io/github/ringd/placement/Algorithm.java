package io.github.ringd.placement;

import java.util.List;

/**
 * A placement algorithm (spec 2.1). Its {@link #code()} is its code in the canonical encoding
 * (9.1).
 */
public enum Algorithm {
  /** The virtual-node ring with 64-bit positions (5.1). */
  RING(1, "ring"),
  /** libketama's continuum (5.2). */
  KETAMA(2, "ketama"),
  /** The Maglev lookup table with Envoy's weighted fill (5.3). */
  MAGLEV(3, "maglev"),
  /** Jump consistent hash over a persisted bucket order (5.4). */
  JUMP(4, "jump"),
  /** Weighted highest random weight in integers (5.5). */
  RENDEZVOUS(5, "rendezvous"),
  /** A stored partition table (5.6). */
  TABLE(6, "table"),
  /** nginx's {@code hash $key consistent} (5.7). */
  NGINX(7, "nginx"),
  /** HAProxy 2.6's {@code hash-type consistent} (5.8). */
  HAPROXY(8, "haproxy"),
  /** nutcracker 0.5.0's {@code distribution: ketama} (5.9). */
  TWEMPROXY(9, "twemproxy"),
  /** The ring of Envoy's RING_HASH load balancer and gRPC's ring_hash, entry for entry (5.10). */
  ENVOY_RING_HASH(10, "envoy_ring_hash"),
  /** The table of Envoy's MAGLEV load balancer, slot for slot (5.11). */
  ENVOY_MAGLEV(11, "envoy_maglev");

  private static final Algorithm[] BY_CODE = values();

  private static final List<HashFunction> GENERAL =
      List.of(HashFunction.XXH3, HashFunction.MD5, HashFunction.SHA256, HashFunction.MURMUR3);
  private static final List<HashFunction> KETAMA_HASHES = List.of(HashFunction.MD5);
  private static final List<HashFunction> NGINX_HASHES = List.of(HashFunction.CRC32);
  private static final List<HashFunction> HAPROXY_HASHES =
      List.of(HashFunction.SDBM, HashFunction.DJB2, HashFunction.WT6, HashFunction.CRC32);
  private static final List<HashFunction> TWEMPROXY_HASHES =
      List.of(
          HashFunction.FNV1A_64,
          HashFunction.MD5,
          HashFunction.CRC32A,
          HashFunction.ONE_AT_A_TIME,
          HashFunction.MURMUR,
          HashFunction.JENKINS,
          HashFunction.HSIEH,
          HashFunction.FNV1_64,
          HashFunction.FNV1A_32,
          HashFunction.FNV1_32);
  private static final List<HashFunction> ENVOY_HASHES = List.of(HashFunction.XXH64);

  private final int code;
  private final String wireName;

  Algorithm(int code, String wireName) {
    this.code = code;
    this.wireName = wireName;
  }

  /** The algorithm's code in the canonical encoding (9.1). */
  public int code() {
    return code;
  }

  /** The algorithm's name as the JSON and the spec write it, such as {@code envoy_ring_hash}. */
  public String wireName() {
    return wireName;
  }

  @Override
  public String toString() {
    return wireName;
  }

  /**
   * The algorithm named {@code name}.
   *
   * @throws PlacementException of reason {@link PlacementException.Reason#UNKNOWN_ALGORITHM}
   */
  public static Algorithm parse(String name) {
    for (Algorithm a : BY_CODE) {
      if (a.wireName.equals(name)) {
        return a;
      }
    }
    throw new PlacementException(
        PlacementException.Reason.UNKNOWN_ALGORITHM,
        "\"" + Strings.excerpt(name) + "\" is not an algorithm");
  }

  /** The algorithm of an encoding code, or null when no algorithm has it. */
  static Algorithm ofCode(int code) {
    return code >= 1 && code <= BY_CODE.length ? BY_CODE[code - 1] : null;
  }

  /** The hashes the algorithm takes, its default first (2.1). */
  public List<HashFunction> acceptedHashes() {
    return switch (this) {
      case KETAMA -> KETAMA_HASHES;
      case NGINX -> NGINX_HASHES;
      case HAPROXY -> HAPROXY_HASHES;
      case TWEMPROXY -> TWEMPROXY_HASHES;
      case ENVOY_RING_HASH, ENVOY_MAGLEV -> ENVOY_HASHES;
      default -> GENERAL;
    };
  }

  /** The hash a ring of this algorithm gets when none is given. */
  public HashFunction defaultHash() {
    return acceptedHashes().get(0);
  }

  boolean accepts(HashFunction h) {
    return acceptedHashes().contains(h);
  }

  /** Whether the algorithm hashes a node's address instead of its label (2.2, 9.1). */
  boolean placesByAddress() {
    return this == NGINX || this == TWEMPROXY;
  }

  /** Whether every active node needs an address (2.4 check 3a). */
  boolean needsAddress() {
    return placesByAddress() || isXds();
  }

  /** Whether a ring of the algorithm is served over xDS (5.10.1). */
  boolean isXds() {
    return this == ENVOY_RING_HASH || this == ENVOY_MAGLEV;
  }

  /** Whether the algorithm fills a Maglev table of table_size slots (2.1). */
  boolean usesTableSize() {
    return this == MAGLEV || this == ENVOY_MAGLEV;
  }

  /** The largest table_size the algorithm takes (2.1). */
  int maxTableSize() {
    return this == ENVOY_MAGLEV ? RingConfig.MAX_ENVOY_TABLE_SIZE : RingConfig.MAX_TABLE_SIZE;
  }

  /** Whether a node may be below full ramp (2.4 check 4). */
  boolean takesRamps() {
    return this == RING || this == RENDEZVOUS || this == MAGLEV || isXds();
  }
}
