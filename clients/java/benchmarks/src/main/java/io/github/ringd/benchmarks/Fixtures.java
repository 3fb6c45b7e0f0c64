package io.github.ringd.benchmarks;

import io.github.ringd.placement.Node;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * The keys and node names every contender is measured on: the same for each library, built from a
 * fixed seed so that two runs time the same lookups.
 */
final class Fixtures {
  /** The seed of the keys. */
  static final long KEY_SEED = 0x5EED_0F_4B_E75L;

  /** The length of a key in bytes. */
  static final int KEY_LENGTH = 16;

  /**
   * The bytes a key is drawn from: printable ASCII without space, so a key is a valid memcached key
   * and its UTF-8 bytes are its chars, for the locators that take a String.
   */
  private static final byte[] ALPHABET =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"
          .getBytes(StandardCharsets.US_ASCII);

  private Fixtures() {}

  /** {@code count} random keys of {@link #KEY_LENGTH} bytes from {@link #KEY_SEED}. */
  static byte[][] keys(int count) {
    SplittableRandom random = new SplittableRandom(KEY_SEED);
    byte[][] keys = new byte[count][KEY_LENGTH];
    for (byte[] key : keys) {
      for (int j = 0; j < KEY_LENGTH; j++) {
        key[j] = ALPHABET[random.nextInt(ALPHABET.length)];
      }
    }
    return keys;
  }

  /** The keys as Strings, for the locators that take one (their UTF-8 is the same bytes). */
  static String[] strings(byte[][] keys) {
    String[] out = new String[keys.length];
    for (int i = 0; i < keys.length; i++) {
      out[i] = new String(keys[i], StandardCharsets.US_ASCII);
    }
    return out;
  }

  /** The id of node {@code i}: {@code node-0000}, {@code node-0001}, ... */
  static String nodeId(int i) {
    return String.format(Locale.ROOT, "node-%04d", i);
  }

  /** {@code n} node ids, index = bucket for the bucket hashers. */
  static String[] nodeIds(int n) {
    String[] ids = new String[n];
    for (int i = 0; i < n; i++) {
      ids[i] = nodeId(i);
    }
    return ids;
  }

  /** {@code n} active ringd nodes of weight 1, named as {@link #nodeIds}. */
  static List<Node> ringdNodes(int n) {
    List<Node> nodes = new ArrayList<>(n);
    for (String id : nodeIds(n)) {
      nodes.add(Node.of(id));
    }
    return nodes;
  }

  /** A power of two at least 1, so a key index wraps with a mask. */
  static int checkPowerOfTwo(int count) {
    if (count <= 0 || Integer.bitCount(count) != 1) {
      throw new IllegalArgumentException("key count " + count + " is not a power of two");
    }
    return count;
  }
}
