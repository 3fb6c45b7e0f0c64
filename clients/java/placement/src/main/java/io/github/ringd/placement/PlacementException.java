package io.github.ringd.placement;

/**
 * A refusal of the placement core: an invalid config or node set, a malformed encoding or JSON, a
 * table snapshot without its table, or a placement that does not hash to its fingerprint. Its
 * {@link #reason()} names the refusal as the server's placement core does (spec 2.4), so a refusal
 * can be matched across languages.
 */
public class PlacementException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * Why the placement core refused an input. Its {@link #wireName()} is the name of the Rust
   * PlacementError variant the server reports for the same input.
   */
  public enum Reason {
    /** A node id is the empty string. */
    EMPTY_NODE_ID("EmptyNodeId"),
    /** A node id too long, or with a bad character. */
    INVALID_NODE_ID("InvalidNodeId"),
    /** Two nodes share an id. */
    DUPLICATE_NODE_ID("DuplicateNodeId"),
    /** A hash_key empty, over 255 bytes, or with a control character. */
    INVALID_HASH_KEY("InvalidHashKey"),
    /** A zone empty, over 64 bytes, or with a bad character. */
    INVALID_ZONE("InvalidZone"),
    /** A weight of 0 or over 1,000,000. */
    WEIGHT_OUT_OF_RANGE("WeightOutOfRange"),
    /** A ramp of 0 or over 65,536. */
    RAMP_OUT_OF_RANGE("RampOutOfRange"),
    /** An address that breaks spec 2.2's rule. */
    INVALID_ADDRESS("InvalidAddress"),
    /** A node state other than active, draining or joining. */
    INVALID_STATE("InvalidState"),
    /** An algorithm name not in spec 2.1. */
    UNKNOWN_ALGORITHM("UnknownAlgorithm"),
    /** A hash name not in spec 2.1. */
    UNKNOWN_HASH("UnknownHash"),
    /** Ketama with a hash other than md5. */
    HASH_NOT_SUPPORTED("HashNotSupported"),
    /** A hash the algorithm does not take. */
    HASH_NOT_ACCEPTED("HashNotAccepted"),
    /** Avalanche on under an algorithm other than haproxy. */
    AVALANCHE_NOT_SUPPORTED("AvalancheNotSupported"),
    /** A hash_tag that is not two allowed characters. */
    INVALID_HASH_TAG("InvalidHashTag"),
    /** A hash_tag under an algorithm other than twemproxy. */
    HASH_TAG_NOT_SUPPORTED("HashTagNotSupported"),
    /** Vnodes_per_weight outside 1..=10,000. */
    VNODES_OUT_OF_RANGE("VnodesOutOfRange"),
    /** Replication_factor outside 1..=64. */
    REPLICATION_OUT_OF_RANGE("ReplicationOutOfRange"),
    /** Partitions not a power of two in 2^8..=2^20. */
    PARTITIONS_OUT_OF_RANGE("PartitionsOutOfRange"),
    /**
     * A maglev or envoy_maglev table_size below 2, above 2^24 (above 5,000,011 for envoy_maglev) or
     * below the active node count.
     */
    TABLE_SIZE_OUT_OF_RANGE("TableSizeOutOfRange"),
    /** A maglev or envoy_maglev table_size that is not prime. */
    TABLE_SIZE_NOT_PRIME("TableSizeNotPrime"),
    /** Zone_aware and an active node without a zone. */
    MISSING_ZONE("MissingZone"),
    /** A minimum_ring_size or maximum_ring_size outside 1..=2^23. */
    RING_SIZE_OUT_OF_RANGE("RingSizeOutOfRange"),
    /** An envoy_ring_hash minimum_ring_size above its maximum_ring_size. */
    RING_SIZES_INVERTED("RingSizesInverted"),
    /**
     * An algorithm that needs addresses (nginx, twemproxy, envoy_ring_hash, envoy_maglev) and an
     * active node without one.
     */
    MISSING_ADDRESS("MissingAddress"),
    /**
     * An address the proxy would not take as a server (for envoy_ring_hash and envoy_maglev, one
     * that is not a canonical IP:port).
     */
    ADDRESS_NOT_SERVER("AddressNotServer"),
    /** Two active nginx, envoy_ring_hash or envoy_maglev nodes share an address. */
    DUPLICATE_ADDRESS("DuplicateAddress"),
    /**
     * Two active envoy_ring_hash or envoy_maglev nodes with one label, which Envoy and gRPC would
     * hash alike.
     */
    ENDPOINT_KEY_TAKEN("EndpointKeyTaken"),
    /**
     * An active envoy_ring_hash or envoy_maglev node whose share of the endpoints' 2^31 weight
     * rounds to 0.
     */
    WEIGHT_SHARE_TOO_SMALL("WeightShareTooSmall"),
    /** A twemproxy hash_key nutcracker could not read back. */
    INVALID_SERVER_NAME("InvalidServerName"),
    /** Two active twemproxy nodes with one server name. */
    SERVER_NAME_TAKEN("ServerNameTaken"),
    /** A ramp below full under an algorithm that takes none. */
    RAMP_NOT_SUPPORTED("RampNotSupported"),
    /** A haproxy node above HAProxy's weight 256. */
    WEIGHT_TOO_HIGH_FOR_PROXY("WeightTooHighForProxy"),
    /** The point cap of spec 2.4 exceeded. */
    TOO_MANY_POINTS("TooManyPoints"),
    /** Partitions × replicas above the cap of spec 2.4. */
    TABLE_TOO_LARGE("TableTooLarge"),
    /** Haproxy server ids that do not fit the nodes. */
    INVALID_SERVER_IDS("InvalidServerIds"),
    /** A jump bucket order that does not fit the nodes. */
    INVALID_BUCKET_ORDER("InvalidBucketOrder"),
    /** A stored table or moves that do not fit the config and nodes. */
    INVALID_TABLE("InvalidTable"),
    /** A canonical encoding that does not decode or is not canonical. */
    INVALID_ENCODING("InvalidEncoding"),
    /**
     * A document that is not JSON, or a field of the wrong JSON type (the server refuses both while
     * parsing).
     */
    INVALID_JSON("InvalidJson"),
    /** A snapshot without a field it must carry. */
    INVALID_SNAPSHOT("InvalidSnapshot"),
    /**
     * A table snapshot without its table; download …/snapshots/{v}/table or apply the moves to
     * version v − 1. Matching it also matches ErrInvalidTable, as the server calls it.
     */
    TABLE_REQUIRED("TableRequired"),
    /**
     * The rebuilt placement does not hash to the advertised fingerprint. Never route on such a
     * placement.
     */
    FINGERPRINT_MISMATCH("FingerprintMismatch");

    private final String wireName;

    Reason(String wireName) {
      this.wireName = wireName;
    }

    /** The name the server reports, such as {@code DuplicateNodeId}. */
    public String wireName() {
      return wireName;
    }
  }

  private final Reason reason;

  /** A refusal of reason {@code reason}, explained for people by {@code message}. */
  public PlacementException(Reason reason, String message) {
    super(reason.wireName() + ": " + message);
    this.reason = reason;
  }

  /** Why the input was refused. */
  public Reason reason() {
    return reason;
  }

  /**
   * Whether this refusal is of reason {@code r}. A {@link Reason#TABLE_REQUIRED} refusal also is of
   * {@link Reason#INVALID_TABLE}, as the server calls it.
   */
  public boolean is(Reason r) {
    return reason == r || (reason == Reason.TABLE_REQUIRED && r == Reason.INVALID_TABLE);
  }
}
