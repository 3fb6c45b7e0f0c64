package io.github.ringd.placement;

import java.nio.charset.StandardCharsets;

/** Helpers for the byte-order and UTF-8 rules of the spec. */
final class Strings {
  private Strings() {}

  /** s shortened for an error message, on a code point boundary. */
  static String excerpt(String s) {
    final int limit = 64;
    if (s.length() <= limit) {
      return s;
    }
    int cut = limit;
    if (Character.isLowSurrogate(s.charAt(cut))) {
      cut--;
    }
    return s.substring(0, cut) + "…";
  }

  static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** The UTF-8 length of s in bytes. */
  static int utf8Length(String s) {
    int n = 0;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x80) {
        n++;
      } else if (c < 0x800) {
        n += 2;
      } else if (Character.isHighSurrogate(c)
          && i + 1 < s.length()
          && Character.isLowSurrogate(s.charAt(i + 1))) {
        n += 4;
        i++;
      } else {
        n += 3;
      }
    }
    return n;
  }

  /**
   * Compares two strings as their UTF-8 bytes compare, the spec's byte order (2.3). Code-point
   * order is UTF-8 byte order; String.compareTo is UTF-16 order, which differs above U+FFFF.
   */
  static int compareBytes(String a, String b) {
    int i = 0;
    int j = 0;
    while (i < a.length() && j < b.length()) {
      int ca = a.codePointAt(i);
      int cb = b.codePointAt(j);
      if (ca != cb) {
        return Integer.compare(ca, cb);
      }
      i += Character.charCount(ca);
      j += Character.charCount(cb);
    }
    return Integer.compare(a.length() - i, b.length() - j);
  }
}
