package io.github.ringd.placement;

/**
 * nutcracker 0.5.0's key hashes (spec 3.7), bit for bit, quirks included: each maps bytes to a u32
 * (held in an int; int arithmetic wraps modulo 2^32 as the spec's does). nutcracker reads the key
 * through a signed C {@code char} in several of them, so there a byte from 0x80 up enters
 * sign-extended, which is exactly what widening a Java {@code byte} to int does; where the C code
 * reads unsigned bytes, {@code b & 0xff}. The other two, md5 and crc32a, are md5_32 (3.2) and
 * {@link Crc32}.
 */
final class TwemproxyHashes {
  private TwemproxyHashes() {}

  /** fnv1a_64: the 64-bit FNV basis and prime cut to their low 32 bits; a 32-bit hash. */
  static int fnv1a64(byte[] data, int off, int len) {
    int h = 0x84222325;
    for (int i = off, end = off + len; i < end; i++) {
      h = (h ^ data[i]) * 0x1b3;
    }
    return h;
  }

  /** fnv1_64: 64-bit FNV-1 over bytes sign-extended to 64 bits; the low 32 bits. */
  static int fnv164(byte[] data, int off, int len) {
    long h = 0xcbf29ce484222325L;
    for (int i = off, end = off + len; i < end; i++) {
      h = (h * 0x100000001b3L) ^ data[i];
    }
    return (int) h;
  }

  static int fnv1a32(byte[] data, int off, int len) {
    int h = 0x811c9dc5;
    for (int i = off, end = off + len; i < end; i++) {
      h = (h ^ data[i]) * 0x01000193;
    }
    return h;
  }

  static int fnv132(byte[] data, int off, int len) {
    int h = 0x811c9dc5;
    for (int i = off, end = off + len; i < end; i++) {
      h = (h * 0x01000193) ^ data[i];
    }
    return h;
  }

  static int oneAtATime(byte[] data, int off, int len) {
    int h = 0;
    for (int i = off, end = off + len; i < end; i++) {
      h += data[i];
      h += h << 10;
      h ^= h >>> 6;
    }
    h += h << 3;
    h ^= h >>> 11;
    h += h << 15;
    return h;
  }

  /** murmur: MurmurHash2 (32-bit) seeded with 0xdeadbeef × length, over unsigned bytes. */
  static int murmur2(byte[] data, int off, int len) {
    final int m = 0x5bd1e995;
    int h = (0xdeadbeef * len) ^ len;
    int i = off;
    int end = off + len;
    for (; i + 4 <= end; i += 4) {
      int k = le32(data, i);
      k *= m;
      k ^= k >>> 24;
      k *= m;
      h = (h * m) ^ k;
    }
    if (i < end) {
      for (int s = 0; i < end; i++, s += 8) {
        h ^= (data[i] & 0xff) << s;
      }
      h *= m;
    }
    h ^= h >>> 13;
    h *= m;
    h ^= h >>> 15;
    return h;
  }

  /** jenkins: Bob Jenkins' lookup3 {@code hashlittle(key, len, 13)}, over unsigned bytes. */
  static int jenkins(byte[] data, int off, int len) {
    int a = 0xdeadbeef + len + 13;
    int b = a;
    int c = a;
    if (len == 0) {
      return c;
    }
    int i = off;
    int rest = len;
    for (; rest > 12; i += 12, rest -= 12) {
      a += le32(data, i);
      b += le32(data, i + 4);
      c += le32(data, i + 8);
      a -= c;
      a ^= Integer.rotateLeft(c, 4);
      c += b;
      b -= a;
      b ^= Integer.rotateLeft(a, 6);
      a += c;
      c -= b;
      c ^= Integer.rotateLeft(b, 8);
      b += a;
      a -= c;
      a ^= Integer.rotateLeft(c, 16);
      c += b;
      b -= a;
      b ^= Integer.rotateLeft(a, 19);
      a += c;
      c -= b;
      c ^= Integer.rotateLeft(b, 4);
      b += a;
    }
    // The last block, 1 to 12 bytes, zero-padded.
    a += lePartial(data, i, Math.min(rest, 4));
    b += lePartial(data, i + 4, Math.max(0, Math.min(rest - 4, 4)));
    c += lePartial(data, i + 8, Math.max(0, rest - 8));
    c ^= b;
    c -= Integer.rotateLeft(b, 14);
    a ^= c;
    a -= Integer.rotateLeft(c, 11);
    b ^= a;
    b -= Integer.rotateLeft(a, 25);
    c ^= b;
    c -= Integer.rotateLeft(b, 16);
    a ^= c;
    a -= Integer.rotateLeft(c, 4);
    b ^= a;
    b -= Integer.rotateLeft(a, 14);
    c ^= b;
    c -= Integer.rotateLeft(b, 24);
    return c;
  }

  /**
   * hsieh: Paul Hsieh's SuperFastHash from 0 (not from the length); the empty key gives 0. Only the
   * third byte of a 3-byte tail is sign-extended.
   */
  static int hsieh(byte[] data, int off, int len) {
    if (len == 0) {
      return 0;
    }
    int h = 0;
    int i = off;
    int end = off + len;
    for (; i + 4 <= end; i += 4) {
      h += le16(data, i);
      int tmp = (le16(data, i + 2) << 11) ^ h;
      h = (h << 16) ^ tmp;
      h += h >>> 11;
    }
    switch (end - i) {
      case 3 -> {
        h += le16(data, i);
        h ^= h << 16;
        h ^= data[i + 2] << 18;
        h += h >>> 11;
      }
      case 2 -> {
        h += le16(data, i);
        h ^= h << 11;
        h += h >>> 17;
      }
      case 1 -> {
        h += data[i] & 0xff;
        h ^= h << 10;
        h += h >>> 1;
      }
      default -> {}
    }
    h ^= h << 3;
    h += h >>> 5;
    h ^= h << 4;
    h += h >>> 17;
    h ^= h << 25;
    h += h >>> 6;
    return h;
  }

  private static int le32(byte[] b, int i) {
    return (b[i] & 0xff)
        | (b[i + 1] & 0xff) << 8
        | (b[i + 2] & 0xff) << 16
        | (b[i + 3] & 0xff) << 24;
  }

  private static int le16(byte[] b, int i) {
    return (b[i] & 0xff) | (b[i + 1] & 0xff) << 8;
  }

  /** n (0 to 4) bytes from i, little-endian, the missing high bytes 0. */
  private static int lePartial(byte[] b, int i, int n) {
    int v = 0;
    for (int k = 0; k < n; k++) {
      v |= (b[i + k] & 0xff) << (8 * k);
    }
    return v;
  }
}
