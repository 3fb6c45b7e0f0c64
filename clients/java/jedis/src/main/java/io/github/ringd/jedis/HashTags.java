package io.github.ringd.jedis;

import java.util.Arrays;

/**
 * Redis Cluster's hash tags: a key with a non-empty {@code {...}} is placed by what is between its
 * first <code>&#123;</code> and the first <code>&#125;</code> after it, so related keys share a
 * server.
 */
final class HashTags {
  private HashTags() {}

  /** The part of key that is placed: its hash tag, else the whole key. */
  static CharSequence of(String key) {
    int open = key.indexOf('{');
    if (open < 0) {
      return key;
    }
    int close = key.indexOf('}', open + 1);
    return close > open + 1 ? key.substring(open + 1, close) : key;
  }

  /** {@link #of(String)} for a key held as bytes. */
  static byte[] of(byte[] key) {
    int open = indexOf(key, (byte) '{', 0);
    if (open < 0) {
      return key;
    }
    int close = indexOf(key, (byte) '}', open + 1);
    return close > open + 1 ? Arrays.copyOfRange(key, open + 1, close) : key;
  }

  private static int indexOf(byte[] b, byte v, int from) {
    for (int i = from; i < b.length; i++) {
      if (b[i] == v) {
        return i;
      }
    }
    return -1;
  }
}
