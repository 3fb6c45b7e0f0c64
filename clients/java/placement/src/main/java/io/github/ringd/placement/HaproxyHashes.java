package io.github.ringd.placement;

/**
 * HAProxy 2.6's key hashes (spec 3.6, HAProxy's {@code src/hash.c}) and its avalanche, bit for bit:
 * each maps the bytes of a key, taken as unsigned, to a u32 (held in an int; every operation wraps
 * modulo 2^32 as Java's int arithmetic does). The fourth, crc32, is {@link Crc32}.
 */
final class HaproxyHashes {
  private HaproxyHashes() {}

  /** sdbm: {@code h = c + (h << 6) + (h << 16) − h}, from 0. */
  static int sdbm(byte[] data, int off, int len) {
    int h = 0;
    for (int i = off, end = off + len; i < end; i++) {
      h = (data[i] & 0xff) + (h << 6) + (h << 16) - h;
    }
    return h;
  }

  /** djb2: {@code h = h × 33 + c}, from 5381. */
  static int djb2(byte[] data, int off, int len) {
    int h = 5381;
    for (int i = off, end = off + len; i < end; i++) {
      h = h * 33 + (data[i] & 0xff);
    }
    return h;
  }

  /**
   * wt6, Willy Tarreau's hash. A rotation by 0 is the identity, which is what HAProxy's shift by 32
   * gives on x86 (3.6); {@link Integer#rotateLeft} by 0 is the identity too.
   */
  static int wt6(byte[] data, int off, int len) {
    int h0 = 0xa53c965a;
    int h1 = 0x5ca6953a;
    int s0 = 6;
    int s1 = 18;
    for (int i = off, end = off + len; i < end; i++) {
      int c = data[i] & 0xff;
      h0 = ~(h0 ^ c);
      h1 = ~(h1 + c);
      int r0 = Integer.rotateLeft(h1, s0);
      int r1 = Integer.rotateLeft(h0, s1);
      h0 = r0;
      h1 = r1;
      int t = ((h0 >>> 16) ^ h1) & 0xffff;
      s0 = t & 31;
      s1 = t >>> 11;
    }
    return h0 ^ h1;
  }

  /** HAProxy's {@code full_hash}: Bob Jenkins' integer mix, then a multiplication; a bijection. */
  static int fullHash(int a) {
    a = (a + 0x7ed55d16) + (a << 12);
    a = (a ^ 0xc761c23c) ^ (a >>> 19);
    a = (a + 0x165667b1) + (a << 5);
    a = (a + 0xd3a2646c) ^ (a << 9);
    a = (a + 0xfd7046c5) + (a << 3);
    a = (a ^ 0xb55a4f09) ^ (a >>> 16);
    return a * (int) 3221225473L;
  }
}
