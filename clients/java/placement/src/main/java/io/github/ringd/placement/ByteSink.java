package io.github.ringd.placement;

import java.util.Arrays;

/** A growable little-endian byte buffer, what the canonical encoding (9.1) is written into. */
final class ByteSink {
  private byte[] buf;
  private int size;

  ByteSink(int capacity) {
    buf = new byte[Math.max(capacity, 16)];
  }

  /** Makes room for n more bytes. */
  void reserve(int n) {
    if (n > buf.length - size) {
      long want = Math.max((long) buf.length * 2, (long) size + n);
      if (want > Integer.MAX_VALUE - 8) {
        throw new IllegalStateException("an encoding of more than 2 GiB");
      }
      buf = Arrays.copyOf(buf, (int) want);
    }
  }

  void u8(int v) {
    reserve(1);
    buf[size++] = (byte) v;
  }

  void u16(int v) {
    reserve(2);
    buf[size++] = (byte) v;
    buf[size++] = (byte) (v >>> 8);
  }

  void u32(long v) {
    reserve(4);
    buf[size++] = (byte) v;
    buf[size++] = (byte) (v >>> 8);
    buf[size++] = (byte) (v >>> 16);
    buf[size++] = (byte) (v >>> 24);
  }

  void u64(long v) {
    reserve(8);
    for (int i = 0; i < 8; i++) {
      buf[size++] = (byte) (v >>> (8 * i));
    }
  }

  void bytes(byte[] b) {
    reserve(b.length);
    System.arraycopy(b, 0, buf, size, b.length);
    size += b.length;
  }

  /** A u8 length, then the bytes (at most 255 of them). */
  void shortBytes(byte[] b) {
    u8(b.length);
    bytes(b);
  }

  int size() {
    return size;
  }

  byte[] toByteArray() {
    return Arrays.copyOf(buf, size);
  }
}
