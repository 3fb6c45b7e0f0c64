package io.github.ringd.placement;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A ring member as placement sees it (spec 2.2). Make one with {@link #of(String)}, which sets the
 * defaults (weight 1, full ramp, active), then change what differs with the {@code with} methods.
 * Construction checks nothing but nulls: {@link #validate()} and {@link Placement#build} apply the
 * spec's rules, so that a refusal names the first bad field as the server does.
 *
 * @param id names the node: 1-128 bytes of {@code [A-Za-z0-9._:-]}, starting with a letter or digit
 * @param hashKey when set, hashed instead of the id (its {@link #label()}), so a replacement
 *     machine can take over the positions of the one it replaces: 1-255 bytes of UTF-8 without
 *     control characters; null for none
 * @param weight 1..=1,000,000
 * @param zone a failure domain, same characters as an id, 1-64 bytes; null for none
 * @param state whether the node owns keys
 * @param ramp the parts per 65,536 of its weight the node takes (1..=65,536)
 * @param address host:port, null for none; it places only under nginx and twemproxy
 */
public record Node(
    String id,
    @Nullable String hashKey,
    int weight,
    @Nullable String zone,
    NodeState state,
    int ramp,
    @Nullable String address) {

  /** A node's ramp when it takes all of its weight. */
  public static final int FULL_RAMP = 65_536;

  /** The largest node weight. */
  public static final int MAX_WEIGHT = 1_000_000;

  private static final int MAX_ID_LENGTH = 128;
  private static final int MAX_ZONE_LENGTH = 64;
  private static final int MAX_HASH_KEY_LENGTH = 255;
  private static final int MAX_ADDRESS_LENGTH = 255;

  /** Checks for nulls only; see {@link #validate()}. */
  public Node {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(state, "state");
  }

  /** An active node of weight 1 at full ramp. */
  public static Node of(String id) {
    return new Node(id, null, 1, null, NodeState.ACTIVE, FULL_RAMP, null);
  }

  /** This node with another hash key (null for none). */
  public Node withHashKey(@Nullable String hashKey) {
    return new Node(id, hashKey, weight, zone, state, ramp, address);
  }

  /** This node with another weight. */
  public Node withWeight(int weight) {
    return new Node(id, hashKey, weight, zone, state, ramp, address);
  }

  /** This node with another zone (null for none). */
  public Node withZone(@Nullable String zone) {
    return new Node(id, hashKey, weight, zone, state, ramp, address);
  }

  /** This node in another state. */
  public Node withState(NodeState state) {
    return new Node(id, hashKey, weight, zone, state, ramp, address);
  }

  /** This node at another ramp. */
  public Node withRamp(int ramp) {
    return new Node(id, hashKey, weight, zone, state, ramp, address);
  }

  /** This node with another address (null for none). */
  public Node withAddress(@Nullable String address) {
    return new Node(id, hashKey, weight, zone, state, ramp, address);
  }

  /** What is hashed to place the node: its hash key if set, else its id. */
  public String label() {
    return hashKey != null ? hashKey : id;
  }

  /** weight × ramp, the weight in parts of 65,536 (2.2). */
  long scaledWeight() {
    return (long) weight * ramp;
  }

  /**
   * Checks the node's own fields against spec 2.2, in the order id, hash_key, zone, weight, ramp,
   * address.
   *
   * @throws PlacementException naming the first bad field
   */
  public void validate() {
    checkId(id);
    if (hashKey != null) {
      checkHashKey(hashKey);
    }
    if (zone != null) {
      checkZone(zone);
    }
    checkWeight(weight);
    checkRamp(ramp);
    if (address != null) {
      checkAddress(address);
    }
  }

  static void checkId(String id) {
    if (id.isEmpty()) {
      throw new PlacementException(
          PlacementException.Reason.EMPTY_NODE_ID, "a node id must not be empty");
    }
    if (id.length() > MAX_ID_LENGTH || !isName(id)) {
      throw new PlacementException(
          PlacementException.Reason.INVALID_NODE_ID,
          "\""
              + Strings.excerpt(id)
              + "\": 1-128 bytes of [A-Za-z0-9._:-], starting with a letter or digit");
    }
  }

  static void checkZone(String zone) {
    if (zone.length() > MAX_ZONE_LENGTH || !isName(zone)) {
      throw new PlacementException(
          PlacementException.Reason.INVALID_ZONE,
          "\""
              + Strings.excerpt(zone)
              + "\": 1-64 bytes of [A-Za-z0-9._:-], starting with a letter or digit");
    }
  }

  /** Whether s is {@code [A-Za-z0-9][A-Za-z0-9._:-]*}, ASCII only. */
  static boolean isName(String s) {
    if (s.isEmpty() || !isAlnum(s.charAt(0))) {
      return false;
    }
    for (int i = 1; i < s.length(); i++) {
      char c = s.charAt(i);
      if (!isAlnum(c) && c != '.' && c != '_' && c != ':' && c != '-') {
        return false;
      }
    }
    return true;
  }

  private static boolean isAlnum(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  }

  static void checkHashKey(String key) {
    if (key.isEmpty()
        || Strings.utf8Length(key) > MAX_HASH_KEY_LENGTH
        || !isWellFormed(key)
        || hasControl(key)) {
      throw new PlacementException(
          PlacementException.Reason.INVALID_HASH_KEY,
          "\"" + Strings.excerpt(key) + "\": 1-255 bytes of UTF-8, no control character");
    }
  }

  static void checkAddress(String address) {
    boolean bad =
        address.isEmpty()
            || Strings.utf8Length(address) > MAX_ADDRESS_LENGTH
            || !isWellFormed(address);
    for (int i = 0; i < address.length() && !bad; ) {
      int cp = address.codePointAt(i);
      bad = Character.getType(cp) == Character.CONTROL || isWhiteSpace(cp);
      i += Character.charCount(cp);
    }
    if (bad) {
      throw new PlacementException(
          PlacementException.Reason.INVALID_ADDRESS,
          "\"" + Strings.excerpt(address) + "\": 1-255 bytes without spaces or control characters");
    }
  }

  /**
   * Unicode's White_Space property, as Rust's char::is_whitespace; Java's Character.isWhitespace
   * leaves out the no-break spaces and U+0085, so the property is spelled out.
   */
  static boolean isWhiteSpace(int cp) {
    return (cp >= 0x09 && cp <= 0x0D)
        || cp == 0x20
        || cp == 0x85
        || cp == 0xA0
        || cp == 0x1680
        || (cp >= 0x2000 && cp <= 0x200A)
        || cp == 0x2028
        || cp == 0x2029
        || cp == 0x202F
        || cp == 0x205F
        || cp == 0x3000;
  }

  /** Whether every surrogate is paired, so the string has a UTF-8 form. */
  static boolean isWellFormed(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (Character.isHighSurrogate(c)) {
        if (i + 1 >= s.length() || !Character.isLowSurrogate(s.charAt(i + 1))) {
          return false;
        }
        i++;
      } else if (Character.isLowSurrogate(c)) {
        return false;
      }
    }
    return true;
  }

  /** A code point of general category Cc (U+0000-U+001F, U+007F-U+009F). */
  private static boolean hasControl(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c <= 0x1F || (c >= 0x7F && c <= 0x9F)) {
        return true;
      }
    }
    return false;
  }

  static void checkWeight(long w) {
    if (w < 1 || w > MAX_WEIGHT) {
      throw new PlacementException(
          PlacementException.Reason.WEIGHT_OUT_OF_RANGE, "weight " + w + " not in 1..=1000000");
    }
  }

  static void checkRamp(long r) {
    if (r < 1 || r > FULL_RAMP) {
      throw new PlacementException(
          PlacementException.Reason.RAMP_OUT_OF_RANGE, "ramp " + r + " not in 1..=65536");
    }
  }
}
