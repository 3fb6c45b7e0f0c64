package io.github.ringd.placement;

/** A hash function (spec 3). Its {@link #code()} is its code in the canonical encoding (9.1). */
public enum HashFunction {
  /** XXH3-64 with seed 0 (3.1). */
  XXH3(1, "xxh3"),
  /** MD5's first 8 bytes, little-endian (3.1); for ketama and twemproxy keys its first 4 (3.2). */
  MD5(2, "md5"),
  /** SHA-256's first 8 bytes, little-endian (3.1). */
  SHA256(3, "sha256"),
  /** MurmurHash3_x64_128's h1 with seed 0 (3.1). */
  MURMUR3(4, "murmur3"),
  /** The standard CRC-32 (3.5), nginx's and one of HAProxy's. */
  CRC32(5, "crc32"),
  /** HAProxy's sdbm (3.6). */
  SDBM(6, "sdbm"),
  /** HAProxy's djb2 (3.6). */
  DJB2(7, "djb2"),
  /** HAProxy's wt6 (3.6). */
  WT6(8, "wt6"),
  /** twemproxy's fnv1a_64, a 32-bit hash despite its name (3.7). */
  FNV1A_64(9, "fnv1a_64"),
  /** twemproxy's fnv1_64 (3.7). */
  FNV1_64(10, "fnv1_64"),
  /** twemproxy's fnv1a_32 (3.7). */
  FNV1A_32(11, "fnv1a_32"),
  /** twemproxy's fnv1_32 (3.7). */
  FNV1_32(12, "fnv1_32"),
  /** twemproxy's crc32a, the standard CRC-32 (3.7). */
  CRC32A(13, "crc32a"),
  /** twemproxy's one_at_a_time (3.7). */
  ONE_AT_A_TIME(14, "one_at_a_time"),
  /** twemproxy's murmur, MurmurHash2 (3.7). */
  MURMUR(15, "murmur"),
  /** twemproxy's jenkins, lookup3's hashlittle (3.7). */
  JENKINS(16, "jenkins"),
  /** twemproxy's hsieh, SuperFastHash (3.7). */
  HSIEH(17, "hsieh"),
  /** Classic XXH64 with seed 0 (3.2), the only hash of envoy_ring_hash and envoy_maglev. */
  XXH64(18, "xxh64");

  private static final HashFunction[] BY_CODE = values();

  private final int code;
  private final String wireName;

  HashFunction(int code, String wireName) {
    this.code = code;
    this.wireName = wireName;
  }

  /** The hash's code in the canonical encoding (9.1). */
  public int code() {
    return code;
  }

  /** The hash's name as the JSON and the spec write it, such as {@code fnv1a_64}. */
  public String wireName() {
    return wireName;
  }

  @Override
  public String toString() {
    return wireName;
  }

  /**
   * The hash named {@code name}.
   *
   * @throws PlacementException of reason {@link PlacementException.Reason#UNKNOWN_HASH}
   */
  public static HashFunction parse(String name) {
    for (HashFunction h : BY_CODE) {
      if (h.wireName.equals(name)) {
        return h;
      }
    }
    throw new PlacementException(
        PlacementException.Reason.UNKNOWN_HASH, "\"" + Strings.excerpt(name) + "\" is not a hash");
  }

  /** The hash of an encoding code, or null when no hash has it. */
  static HashFunction ofCode(int code) {
    return code >= 1 && code <= BY_CODE.length ? BY_CODE[code - 1] : null;
  }
}
