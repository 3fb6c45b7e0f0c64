package io.github.ringd.jedis;

import org.jspecify.annotations.Nullable;
import redis.clients.jedis.HostAndPort;

/** Reads a node's address, {@code host:port} or {@code [v6]:port}, without a name lookup. */
final class Addresses {
  private Addresses() {}

  /** The host and port of address, null when it is not host:port (or is null). */
  static @Nullable HostAndPort parse(@Nullable String address) {
    if (address == null) {
      return null;
    }
    String host;
    String port;
    if (address.startsWith("[")) {
      int close = address.indexOf(']');
      if (close < 0 || close + 1 >= address.length() || address.charAt(close + 1) != ':') {
        return null;
      }
      host = address.substring(1, close);
      port = address.substring(close + 2);
    } else {
      int colon = address.lastIndexOf(':');
      if (colon <= 0 || address.indexOf(':') != colon) {
        return null;
      }
      host = address.substring(0, colon);
      port = address.substring(colon + 1);
    }
    if (host.isEmpty()
        || port.isEmpty()
        || port.length() > 5
        || !port.chars().allMatch(c -> c >= '0' && c <= '9')) {
      return null;
    }
    int p = Integer.parseInt(port);
    return p >= 1 && p <= 65_535 ? new HostAndPort(host, p) : null;
  }
}
