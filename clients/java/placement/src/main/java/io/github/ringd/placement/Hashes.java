package io.github.ringd.placement;

import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;
import java.security.DigestException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * The general hashes of spec 3.1 and the primitives of 3.2, over a byte range. None of them
 * allocates after a thread's first call: lookups call them on every key.
 */
final class Hashes {
  private Hashes() {}

  private static final Hasher64 XXH3 = Hashing.xxh3_64();

  private static final long P1 = 0x9E3779B185EBCA87L;
  private static final long P2 = 0xC2B2AE3D27D4EB4FL;
  private static final long P3 = 0x165667B19E3779F9L;
  private static final long P4 = 0x85EBCA77C2B2AE63L;
  private static final long P5 = 0x27D4EB2F165667C5L;

  /** Per-thread digests and buffers, so that md5 and sha256 keys allocate nothing. */
  static final class Scratch {
    final MessageDigest md5 = digest("MD5");
    final MessageDigest sha256 = digest("SHA-256");
    final byte[] digest = new byte[32];

    /** A key's UTF-8 bytes for owner(CharSequence); grown when a longer key comes. */
    byte[] key = new byte[128];

    private static MessageDigest digest(String name) {
      try {
        return MessageDigest.getInstance(name);
      } catch (NoSuchAlgorithmException e) {
        // Every Java platform must provide MD5 and SHA-256.
        throw new IllegalStateException(name + " is missing", e);
      }
    }
  }

  private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

  static Scratch scratch() {
    return SCRATCH.get();
  }

  /**
   * H(f, data) of spec 3.1 for the four general hashes, and XXH64(data, 0) for xxh64 (3.2); other
   * hashes are 32-bit ones the caller dispatches elsewhere.
   */
  static long hash64(HashFunction f, byte[] data, int off, int len) {
    return switch (f) {
      case XXH64 -> xxh64(data, off, len, 0);
      case MD5 -> md5First64(data, off, len);
      case SHA256 -> sha256First64(data, off, len);
      case MURMUR3 -> murmur3H1(data, off, len);
      default -> XXH3.hashBytesToLong(data, off, len);
    };
  }

  static long hash64(HashFunction f, byte[] data) {
    return hash64(f, data, 0, data.length);
  }

  /** The first 8 MD5 digest bytes as a little-endian u64. */
  static long md5First64(byte[] data, int off, int len) {
    Scratch s = SCRATCH.get();
    digestInto(s.md5, data, off, len, s.digest);
    return le64(s.digest, 0);
  }

  /** md5_32 of spec 3.2: the first 4 MD5 digest bytes as a little-endian u32. */
  static long md5First32(byte[] data, int off, int len) {
    Scratch s = SCRATCH.get();
    digestInto(s.md5, data, off, len, s.digest);
    return ByteReader.le32(s.digest, 0);
  }

  /** The full MD5 digest of data into out[0..16], for ketama's and twemproxy's points. */
  static void md5(byte[] data, int off, int len, byte[] out) {
    digestInto(SCRATCH.get().md5, data, off, len, out);
  }

  private static long sha256First64(byte[] data, int off, int len) {
    Scratch s = SCRATCH.get();
    digestInto(s.sha256, data, off, len, s.digest);
    return le64(s.digest, 0);
  }

  private static void digestInto(MessageDigest d, byte[] data, int off, int len, byte[] out) {
    d.update(data, off, len);
    try {
      d.digest(out, 0, d.getDigestLength());
    } catch (DigestException e) {
      // out always holds the digest: only a shorter buffer throws.
      throw new IllegalStateException(e);
    }
  }

  static long le64(byte[] b, int off) {
    return ByteReader.le32(b, off) | ByteReader.le32(b, off + 4) << 32;
  }

  /**
   * Classic XXH64 with a seed (3.2): maglev's permutations use seeds 0 and 1, envoy_ring_hash and
   * envoy_maglev hash keys with seed 0. hash4j 0.25.0 has XXH3 but not XXH64, and this is sixty
   * lines against a dependency; it is checked against 3.3's values and the vector files.
   */
  static long xxh64(byte[] b, int off, int len, long seed) {
    int p = off;
    int end = off + len;
    long h;
    if (len >= 32) {
      long v1 = seed + P1 + P2;
      long v2 = seed + P2;
      long v3 = seed;
      long v4 = seed - P1;
      int limit = end - 32;
      do {
        v1 = round(v1, le64(b, p));
        v2 = round(v2, le64(b, p + 8));
        v3 = round(v3, le64(b, p + 16));
        v4 = round(v4, le64(b, p + 24));
        p += 32;
      } while (p <= limit);
      h =
          Long.rotateLeft(v1, 1)
              + Long.rotateLeft(v2, 7)
              + Long.rotateLeft(v3, 12)
              + Long.rotateLeft(v4, 18);
      h = mergeRound(h, v1);
      h = mergeRound(h, v2);
      h = mergeRound(h, v3);
      h = mergeRound(h, v4);
    } else {
      h = seed + P5;
    }
    h += len;
    for (; p + 8 <= end; p += 8) {
      h ^= round(0, le64(b, p));
      h = Long.rotateLeft(h, 27) * P1 + P4;
    }
    if (p + 4 <= end) {
      h ^= ByteReader.le32(b, p) * P1;
      h = Long.rotateLeft(h, 23) * P2 + P3;
      p += 4;
    }
    for (; p < end; p++) {
      h ^= (b[p] & 0xffL) * P5;
      h = Long.rotateLeft(h, 11) * P1;
    }
    h ^= h >>> 33;
    h *= P2;
    h ^= h >>> 29;
    h *= P3;
    h ^= h >>> 32;
    return h;
  }

  static long xxh64(byte[] b, long seed) {
    return xxh64(b, 0, b.length, seed);
  }

  private static long round(long acc, long input) {
    acc += input * P2;
    acc = Long.rotateLeft(acc, 31);
    return acc * P1;
  }

  private static long mergeRound(long acc, long v) {
    acc ^= round(0, v);
    return acc * P1 + P4;
  }

  private static final long C1 = 0x87c37b91114253d5L;
  private static final long C2 = 0x4cf5ad432745937fL;

  /**
   * MurmurHash3_x64_128's h1 with seed 0 (3.4). hash4j's murmur3_128 gives the same value, but its
   * 64-bit call allocated 32 bytes a lookup (measured with the thread's allocation counter on
   * table-murmur3-partitions), so it is written out here.
   */
  static long murmur3H1(byte[] b, int off, int len) {
    long h1 = 0;
    long h2 = 0;
    int p = off;
    int blocks = off + (len & ~15);
    for (; p < blocks; p += 16) {
      long k1 = le64(b, p);
      long k2 = le64(b, p + 8);
      h1 ^= Long.rotateLeft(k1 * C1, 31) * C2;
      h1 = (Long.rotateLeft(h1, 27) + h2) * 5 + 0x52dce729;
      h2 ^= Long.rotateLeft(k2 * C2, 33) * C1;
      h2 = (Long.rotateLeft(h2, 31) + h1) * 5 + 0x38495ab5;
    }
    int tail = len & 15;
    long k1 = 0;
    long k2 = 0;
    for (int i = Math.min(tail, 8) - 1; i >= 0; i--) {
      k1 = k1 << 8 | (b[p + i] & 0xffL);
    }
    for (int i = tail - 1; i >= 8; i--) {
      k2 = k2 << 8 | (b[p + i] & 0xffL);
    }
    if (tail > 8) {
      h2 ^= Long.rotateLeft(k2 * C2, 33) * C1;
    }
    if (tail > 0) {
      h1 ^= Long.rotateLeft(k1 * C1, 31) * C2;
    }
    h1 ^= len;
    h2 ^= len;
    h1 += h2;
    h2 += h1;
    h1 = fmix64(h1);
    h2 = fmix64(h2);
    return h1 + h2;
  }

  /** MurmurHash3's 64-bit finalizer, a bijection on u64 (3.2). */
  static long fmix64(long k) {
    k ^= k >>> 33;
    k *= 0xff51afd7ed558ccdL;
    k ^= k >>> 33;
    k *= 0xc4ceb9fe1a85ec53L;
    k ^= k >>> 33;
    return k;
  }
}
