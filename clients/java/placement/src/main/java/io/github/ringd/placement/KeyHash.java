package io.github.ringd.placement;

import org.jspecify.annotations.Nullable;

/**
 * Section 4's key hash for one placement: 64 bits, or 32 (zero-extended) for ketama and the proxy
 * modes. It is a small immutable value switched on at every lookup rather than a lambda, so that a
 * lookup is a direct call that allocates nothing.
 */
final class KeyHash {
  private final Algorithm algorithm;
  private final HashFunction hash;
  private final boolean avalanche; // haproxy: full_hash after the hash
  private final byte @Nullable [] tag; // twemproxy: hash only the tagged part

  KeyHash(Algorithm algorithm, HashFunction hash, boolean avalanche, @Nullable String tag) {
    this.algorithm = algorithm;
    this.hash = hash;
    this.avalanche = avalanche;
    this.tag = tag == null ? null : Strings.utf8(tag);
  }

  boolean avalanche() {
    return avalanche;
  }

  @Nullable String tag() {
    return tag == null ? null : new String(tag, java.nio.charset.StandardCharsets.US_ASCII);
  }

  long sum(byte[] key, int off, int len) {
    return switch (algorithm) {
      case KETAMA -> Hashes.md5First32(key, off, len);
      case NGINX -> ProxyKeyHash.nginx(key, off, len);
      case HAPROXY -> ProxyKeyHash.haproxy(hash, avalanche, key, off, len);
      case TWEMPROXY -> ProxyKeyHash.twemproxy(hash, tag, key, off, len);
      default -> Hashes.hash64(hash, key, off, len);
    };
  }

  /**
   * The key hash of a key held as characters, hashed as their UTF-8 bytes (an unpaired surrogate as
   * '?', as String.getBytes encodes it) from a per-thread buffer, so that nothing is allocated.
   */
  long sum(CharSequence key) {
    Hashes.Scratch s = Hashes.scratch();
    int n = key.length();
    if (s.key.length < 3 * n) {
      s.key = new byte[Math.max(3 * n, 2 * s.key.length)];
    }
    byte[] b = s.key;
    int j = 0;
    for (int i = 0; i < n; i++) {
      char c = key.charAt(i);
      if (c < 0x80) {
        b[j++] = (byte) c;
      } else if (c < 0x800) {
        b[j++] = (byte) (0xC0 | (c >> 6));
        b[j++] = (byte) (0x80 | (c & 0x3F));
      } else if (Character.isSurrogate(c)) {
        if (Character.isHighSurrogate(c)
            && i + 1 < n
            && Character.isLowSurrogate(key.charAt(i + 1))) {
          int cp = Character.toCodePoint(c, key.charAt(++i));
          b[j++] = (byte) (0xF0 | (cp >> 18));
          b[j++] = (byte) (0x80 | ((cp >> 12) & 0x3F));
          b[j++] = (byte) (0x80 | ((cp >> 6) & 0x3F));
          b[j++] = (byte) (0x80 | (cp & 0x3F));
        } else {
          b[j++] = '?';
        }
      } else {
        b[j++] = (byte) (0xE0 | (c >> 12));
        b[j++] = (byte) (0x80 | ((c >> 6) & 0x3F));
        b[j++] = (byte) (0x80 | (c & 0x3F));
      }
    }
    return sum(b, 0, j);
  }
}
