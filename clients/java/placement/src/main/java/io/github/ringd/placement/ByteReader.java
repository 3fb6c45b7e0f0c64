package io.github.ringd.placement;

/**
 * Reads little-endian integers from an encoding. Past the end it yields zeros and records the
 * failure, so that decoding code checks once, at the end, rather than after every read.
 */
final class ByteReader {
  private static final byte[] ZEROS = new byte[0];

  private final byte[] b;
  private int off;
  private boolean failed;

  ByteReader(byte[] b) {
    this(b, 0);
  }

  ByteReader(byte[] b, int off) {
    this.b = b;
    this.off = off;
  }

  /** Whether some read went past the end. */
  boolean failed() {
    return failed;
  }

  int offset() {
    return off;
  }

  /** How many bytes are left. */
  int remaining() {
    return b.length - off;
  }

  private boolean have(int n) {
    if (n < 0 || n > b.length - off) {
      failed = true;
      off = b.length;
      return false;
    }
    return true;
  }

  int u8() {
    if (!have(1)) {
      return 0;
    }
    return b[off++] & 0xff;
  }

  int u16() {
    if (!have(2)) {
      return 0;
    }
    int v = (b[off] & 0xff) | (b[off + 1] & 0xff) << 8;
    off += 2;
    return v;
  }

  /** A u32 as a long in 0..2^32. */
  long u32() {
    if (!have(4)) {
      return 0;
    }
    long v = le32(b, off);
    off += 4;
    return v;
  }

  long u64() {
    if (!have(8)) {
      return 0;
    }
    long v = le32(b, off) | le32(b, off + 4) << 32;
    off += 8;
    return v;
  }

  /** The next n bytes, or none (and the failure recorded) when fewer are left. */
  byte[] take(int n) {
    if (!have(n)) {
      return ZEROS;
    }
    byte[] s = new byte[n];
    System.arraycopy(b, off, s, 0, n);
    off += n;
    return s;
  }

  /** The rest of the input. */
  byte[] rest() {
    return take(remaining());
  }

  static long le32(byte[] b, int off) {
    return (b[off] & 0xffL)
        | (b[off + 1] & 0xffL) << 8
        | (b[off + 2] & 0xffL) << 16
        | (b[off + 3] & 0xffL) << 24;
  }
}
