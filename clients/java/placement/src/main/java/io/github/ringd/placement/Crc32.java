package io.github.ringd.placement;

/**
 * The standard CRC-32 (spec 3.5: IEEE 802.3, reflected polynomial 0xEDB88320, initial value and
 * final XOR 0xFFFFFFFF): nginx's only hash, one of HAProxy's and twemproxy's crc32a.
 *
 * <p>{@link java.util.zip.CRC32} is an object with state, so a lookup would allocate one or keep
 * one per thread, and it cannot resume from a given CRC, which nginx's chained points need (5.7).
 * This is a slicing-by-8 table CRC over a range of an array: no allocation, and resumable, since
 * feeding bytes in pieces gives what feeding them at once gives.
 */
final class Crc32 {
  private Crc32() {}

  /** Eight tables of 256 entries: TABLE[k * 256 + b] is b's CRC advanced by k more zero bytes. */
  private static final int[] TABLE = tables();

  private static int[] tables() {
    int[] t = new int[8 * 256];
    for (int b = 0; b < 256; b++) {
      int c = b;
      for (int k = 0; k < 8; k++) {
        c = (c & 1) != 0 ? (c >>> 1) ^ 0xEDB88320 : c >>> 1;
      }
      t[b] = c;
    }
    for (int b = 0; b < 256; b++) {
      for (int k = 1; k < 8; k++) {
        int prev = t[(k - 1) * 256 + b];
        t[k * 256 + b] = (prev >>> 8) ^ t[prev & 0xff];
      }
    }
    return t;
  }

  /** CRC32 of the len bytes of data from off, as a u32 in an int. */
  static int of(byte[] data, int off, int len) {
    return update(0, data, off, len);
  }

  /**
   * The CRC-32 of the bytes already fed (whose CRC-32 is crc, 0 for none) followed by the len bytes
   * of data from off: zlib's {@code crc32(crc, data, len)}.
   */
  static int update(int crc, byte[] data, int off, int len) {
    final int[] t = TABLE;
    int c = ~crc;
    int i = off;
    int end = off + len;
    for (; i + 8 <= end; i += 8) {
      int lo =
          c
              ^ ((data[i] & 0xff)
                  | (data[i + 1] & 0xff) << 8
                  | (data[i + 2] & 0xff) << 16
                  | (data[i + 3] & 0xff) << 24);
      c =
          t[7 * 256 + (lo & 0xff)]
              ^ t[6 * 256 + ((lo >>> 8) & 0xff)]
              ^ t[5 * 256 + ((lo >>> 16) & 0xff)]
              ^ t[4 * 256 + (lo >>> 24)]
              ^ t[3 * 256 + (data[i + 4] & 0xff)]
              ^ t[2 * 256 + (data[i + 5] & 0xff)]
              ^ t[256 + (data[i + 6] & 0xff)]
              ^ t[data[i + 7] & 0xff];
    }
    for (; i < end; i++) {
      c = (c >>> 8) ^ t[(c ^ data[i]) & 0xff];
    }
    return ~c;
  }

  /** The CRC-32 after feeding the four bytes of LE32(v) to a CRC of crc: nginx's chain (5.7). */
  static int updateLe32(int crc, int v) {
    final int[] t = TABLE;
    int c = ~crc ^ v;
    c =
        t[3 * 256 + (c & 0xff)]
            ^ t[2 * 256 + ((c >>> 8) & 0xff)]
            ^ t[256 + ((c >>> 16) & 0xff)]
            ^ t[c >>> 24];
    return ~c;
  }
}
