package io.github.ringd.placement;

import org.jspecify.annotations.Nullable;

/**
 * The key hashes of the proxy modes (spec 4): nginx's CRC-32, HAProxy's four with its optional
 * avalanche, and nutcracker's ten behind its hash tag. Each returns a u32 zero-extended to a long,
 * the key-hash space of those algorithms, and allocates nothing: lookups call them on every key.
 */
final class ProxyKeyHash {
  private ProxyKeyHash() {}

  /**
   * The 32-bit hash f of a proxy mode (nginx's crc32, HAProxy's four, twemproxy's ten), before any
   * avalanche or hash tag, as a u32 in an int.
   */
  static int hash32(HashFunction f, byte[] data, int off, int len) {
    return switch (f) {
      case CRC32, CRC32A -> Crc32.of(data, off, len);
      case SDBM -> HaproxyHashes.sdbm(data, off, len);
      case DJB2 -> HaproxyHashes.djb2(data, off, len);
      case WT6 -> HaproxyHashes.wt6(data, off, len);
      case MD5 -> (int) Hashes.md5First32(data, off, len);
      case FNV1A_64 -> TwemproxyHashes.fnv1a64(data, off, len);
      case FNV1_64 -> TwemproxyHashes.fnv164(data, off, len);
      case FNV1A_32 -> TwemproxyHashes.fnv1a32(data, off, len);
      case FNV1_32 -> TwemproxyHashes.fnv132(data, off, len);
      case ONE_AT_A_TIME -> TwemproxyHashes.oneAtATime(data, off, len);
      case MURMUR -> TwemproxyHashes.murmur2(data, off, len);
      case JENKINS -> TwemproxyHashes.jenkins(data, off, len);
      case HSIEH -> TwemproxyHashes.hsieh(data, off, len);
      // Configs and encodings are validated before a hash is chosen.
      case XXH3, SHA256, MURMUR3, XXH64 ->
          throw new IllegalArgumentException(f + " is not a proxy's 32-bit hash");
    };
  }

  /** nginx's key hash: CRC32(key) (3.5). */
  static long nginx(byte[] key, int off, int len) {
    return Crc32.of(key, off, len) & 0xffffffffL;
  }

  /** A haproxy ring's key hash: f(key), then full_hash when avalanche is on (3.6). */
  static long haproxy(HashFunction f, boolean avalanche, byte[] key, int off, int len) {
    int h = hash32(f, key, off, len);
    if (avalanche) {
      h = HaproxyHashes.fullHash(h);
    }
    return h & 0xffffffffL;
  }

  /**
   * A twemproxy ring's key hash (5.9.3): f over the tagged part of the key, 0 when that part is
   * empty (nutcracker does not hash it). With a tag of characters o and c, the tagged part is the
   * bytes after the first o and before the first c after it, when both are found and the bytes
   * between are not empty; otherwise the whole key. tag is the tag's two ASCII bytes, null for
   * none.
   */
  static long twemproxy(HashFunction f, byte @Nullable [] tag, byte[] key, int off, int len) {
    int start = off;
    int length = len;
    if (tag != null) {
      int end = off + len;
      byte open = tag[0];
      byte close = tag[1];
      int o = off;
      while (o < end && key[o] != open) {
        o++;
      }
      if (o < end) {
        int c = o + 1;
        while (c < end && key[c] != close) {
          c++;
        }
        if (c < end && c > o + 1) {
          start = o + 1;
          length = c - start;
        }
      }
    }
    return length == 0 ? 0 : hash32(f, key, start, length) & 0xffffffffL;
  }
}
