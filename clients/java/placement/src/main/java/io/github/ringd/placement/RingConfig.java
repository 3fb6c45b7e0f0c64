package io.github.ringd.placement;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A ring config (spec 2.1): the algorithm, its hash and its parameters. Get one with {@link
 * #defaults(Algorithm)}, which fills in every default, and change what differs through {@link
 * #toBuilder()}. A config is checked when a placement is built ({@link #validate()}).
 */
public final class RingConfig {
  /** Caps the materialized size of a layout (2.4). */
  public static final int MAX_POINTS = 1 << 23;

  /** The largest maglev table_size. */
  public static final int MAX_TABLE_SIZE = 1 << 24;

  /** The largest envoy_maglev table_size, Envoy's bound (a prime). */
  public static final int MAX_ENVOY_TABLE_SIZE = 5_000_011;

  /** maglev's and envoy_maglev's table_size when none is given. */
  public static final int DEFAULT_TABLE_SIZE = 65_537;

  /** ring's points per unit of weight when none is given. */
  public static final int DEFAULT_VNODES_PER_WEIGHT = 160;

  /** The default preference list length. */
  public static final int DEFAULT_REPLICATION_FACTOR = 3;

  /** table's partition count when none is given. */
  public static final int DEFAULT_PARTITIONS = 1 << 16;

  /** envoy_ring_hash's fewest ring entries when none is given. */
  public static final int DEFAULT_MINIMUM_RING_SIZE = 1024;

  /** envoy_ring_hash's most ring entries when none is given: gRPC's cap. */
  public static final int DEFAULT_MAXIMUM_RING_SIZE = 4096;

  /** The largest minimum_ring_size and maximum_ring_size, Envoy's bound (2^23). */
  public static final int MAX_RING_SIZE = 1 << 23;

  static final int MIN_PARTITIONS = 1 << 8;
  static final int MAX_PARTITIONS = 1 << 20;
  static final int MAX_VNODES = 10_000;
  static final int MAX_REPLICATION = 64;

  private final Algorithm algorithm;
  private final HashFunction hash;
  private final int vnodesPerWeight;
  private final int tableSize;
  private final int replicationFactor;
  private final boolean zoneAware;
  private final int partitions;
  private final boolean avalanche;
  private final @Nullable String hashTag;
  private final int minimumRingSize;
  private final int maximumRingSize;

  private RingConfig(Builder b) {
    algorithm = b.algorithm;
    hash = b.hash;
    vnodesPerWeight = b.vnodesPerWeight;
    tableSize = b.tableSize;
    replicationFactor = b.replicationFactor;
    zoneAware = b.zoneAware;
    partitions = b.partitions;
    avalanche = b.avalanche;
    hashTag = b.hashTag;
    minimumRingSize = b.minimumRingSize;
    maximumRingSize = b.maximumRingSize;
  }

  /**
   * The config a ring of algorithm {@code a} gets when no other field is given: its default hash,
   * 160 vnodes per weight, table_size 65,537, replication factor 3, no zones, 65,536 partitions,
   * avalanche for haproxy only, no hash tag, and ring sizes 1,024 to 4,096.
   */
  public static RingConfig defaults(Algorithm a) {
    return builder(a).build();
  }

  /** A builder starting from {@link #defaults(Algorithm)}. */
  public static Builder builder(Algorithm a) {
    return new Builder(a);
  }

  /** A builder starting from this config. */
  public Builder toBuilder() {
    return new Builder(this);
  }

  /** The algorithm that places keys. */
  public Algorithm algorithm() {
    return algorithm;
  }

  /** The hash of keys (and, for most algorithms, of points). */
  public HashFunction hash() {
    return hash;
  }

  /** ring's points per unit of weight (1..=10,000; validated whatever the algorithm). */
  public int vnodesPerWeight() {
    return vnodesPerWeight;
  }

  /** The table length of maglev and envoy_maglev, a prime. */
  public int tableSize() {
    return tableSize;
  }

  /** The default preference list length (1..=64). */
  public int replicationFactor() {
    return replicationFactor;
  }

  /** Whether preference lists spread over zones first. */
  public boolean zoneAware() {
    return zoneAware;
  }

  /** table's partition count, a power of two in 2^8..=2^20. */
  public int partitions() {
    return partitions;
  }

  /** Whether haproxy key hashes pass through HAProxy's full_hash. */
  public boolean avalanche() {
    return avalanche;
  }

  /** twemproxy's hash_tag, two characters such as {@code {}}, or null for none. */
  public @Nullable String hashTag() {
    return hashTag;
  }

  /** envoy_ring_hash's minimum_ring_size. */
  public int minimumRingSize() {
    return minimumRingSize;
  }

  /** envoy_ring_hash's maximum_ring_size. */
  public int maximumRingSize() {
    return maximumRingSize;
  }

  /**
   * Runs check 1 of spec 2.4 in its order (a malformed hash tag first: the server refuses it as it
   * reads the field).
   *
   * @throws PlacementException naming the first refusal
   */
  public void validate() {
    ConfigCheck.validate(this);
  }

  /** vnodes_per_weight, replication_factor and partitions, whatever the algorithm, in order. */
  void checkCounts() {
    ConfigCheck.checkCounts(this);
  }

  static boolean validPartitions(long p) {
    return p >= MIN_PARTITIONS && p <= MAX_PARTITIONS && (p & (p - 1)) == 0;
  }

  /** Trial division, enough below 2^24 (2.4 check 1). */
  static boolean isPrime(long n) {
    if (n < 2) {
      return false;
    }
    if (n % 2 == 0) {
      return n == 2;
    }
    for (long d = 3; d * d <= n; d += 2) {
      if (n % d == 0) {
        return false;
      }
    }
    return true;
  }

  /**
   * A hash_tag is two ASCII characters from '!' to '~' other than '"', '\'' and '\\' (2.1), so it
   * goes into nutcracker's YAML as it is.
   */
  static void checkHashTag(String tag) {
    if (tag.length() != 2) {
      throw refuse(
          PlacementException.Reason.INVALID_HASH_TAG,
          "\"" + Strings.excerpt(tag) + "\" must be exactly two characters, as \"{}\"");
    }
    for (int i = 0; i < 2; i++) {
      char c = tag.charAt(i);
      if (c < '!' || c > '~' || c == '"' || c == '\'' || c == '\\') {
        throw refuse(
            PlacementException.Reason.INVALID_HASH_TAG,
            "\"" + tag + "\" must be printable ASCII other than a space, a quote or a backslash");
      }
    }
  }

  private static PlacementException refuse(PlacementException.Reason r, String message) {
    return new PlacementException(r, message);
  }

  @Override
  public boolean equals(@Nullable Object o) {
    if (!(o instanceof RingConfig c)) {
      return false;
    }
    return algorithm == c.algorithm
        && hash == c.hash
        && vnodesPerWeight == c.vnodesPerWeight
        && tableSize == c.tableSize
        && replicationFactor == c.replicationFactor
        && zoneAware == c.zoneAware
        && partitions == c.partitions
        && avalanche == c.avalanche
        && Objects.equals(hashTag, c.hashTag)
        && minimumRingSize == c.minimumRingSize
        && maximumRingSize == c.maximumRingSize;
  }

  @Override
  public int hashCode() {
    return Objects.hash(
        algorithm,
        hash,
        vnodesPerWeight,
        tableSize,
        replicationFactor,
        zoneAware,
        partitions,
        avalanche,
        hashTag,
        minimumRingSize,
        maximumRingSize);
  }

  @Override
  public String toString() {
    return "RingConfig{algorithm="
        + algorithm
        + ", hash="
        + hash
        + ", vnodes_per_weight="
        + vnodesPerWeight
        + ", table_size="
        + tableSize
        + ", replication_factor="
        + replicationFactor
        + ", zone_aware="
        + zoneAware
        + ", partitions="
        + partitions
        + ", avalanche="
        + avalanche
        + ", hash_tag="
        + hashTag
        + ", minimum_ring_size="
        + minimumRingSize
        + ", maximum_ring_size="
        + maximumRingSize
        + "}";
  }

  /** Builds a {@link RingConfig}; nothing is checked until a placement is built. */
  public static final class Builder {
    private Algorithm algorithm;
    private HashFunction hash;
    private int vnodesPerWeight = DEFAULT_VNODES_PER_WEIGHT;
    private int tableSize = DEFAULT_TABLE_SIZE;
    private int replicationFactor = DEFAULT_REPLICATION_FACTOR;
    private boolean zoneAware;
    private int partitions = DEFAULT_PARTITIONS;
    private boolean avalanche;
    private @Nullable String hashTag;
    private int minimumRingSize = DEFAULT_MINIMUM_RING_SIZE;
    private int maximumRingSize = DEFAULT_MAXIMUM_RING_SIZE;

    private Builder(Algorithm a) {
      algorithm = Objects.requireNonNull(a, "algorithm");
      hash = a.defaultHash();
      avalanche = a == Algorithm.HAPROXY;
    }

    private Builder(RingConfig c) {
      algorithm = c.algorithm;
      hash = c.hash;
      vnodesPerWeight = c.vnodesPerWeight;
      tableSize = c.tableSize;
      replicationFactor = c.replicationFactor;
      zoneAware = c.zoneAware;
      partitions = c.partitions;
      avalanche = c.avalanche;
      hashTag = c.hashTag;
      minimumRingSize = c.minimumRingSize;
      maximumRingSize = c.maximumRingSize;
    }

    /** Sets the algorithm; the hash and avalanche keep what they were. */
    public Builder algorithm(Algorithm a) {
      algorithm = Objects.requireNonNull(a, "algorithm");
      return this;
    }

    /** Sets the hash. */
    public Builder hash(HashFunction h) {
      hash = Objects.requireNonNull(h, "hash");
      return this;
    }

    /** Sets ring's points per unit of weight. */
    public Builder vnodesPerWeight(int v) {
      vnodesPerWeight = v;
      return this;
    }

    /** Sets maglev's and envoy_maglev's table size. */
    public Builder tableSize(int m) {
      tableSize = m;
      return this;
    }

    /** Sets the default preference list length. */
    public Builder replicationFactor(int r) {
      replicationFactor = r;
      return this;
    }

    /** Sets whether preference lists spread over zones first. */
    public Builder zoneAware(boolean z) {
      zoneAware = z;
      return this;
    }

    /** Sets table's partition count. */
    public Builder partitions(int p) {
      partitions = p;
      return this;
    }

    /** Sets haproxy's avalanche. */
    public Builder avalanche(boolean a) {
      avalanche = a;
      return this;
    }

    /** Sets twemproxy's hash tag (null for none). */
    public Builder hashTag(@Nullable String tag) {
      hashTag = tag;
      return this;
    }

    /** Sets envoy_ring_hash's minimum_ring_size. */
    public Builder minimumRingSize(int n) {
      minimumRingSize = n;
      return this;
    }

    /** Sets envoy_ring_hash's maximum_ring_size. */
    public Builder maximumRingSize(int n) {
      maximumRingSize = n;
      return this;
    }

    /** The config. */
    public RingConfig build() {
      return new RingConfig(this);
    }
  }
}
