package io.github.ringd.spymemcached;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnknownHostException;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * A node's address as ringd holds it, {@code host:port} ({@code [v6]:port} for an IPv6 literal),
 * read without a name lookup so that routing never waits on DNS.
 *
 * @param host the host name or IP literal, without brackets
 * @param port 1 to 65,535
 * @param literal the host's address when the host is an IP literal, else null
 */
record Endpoint(String host, int port, @Nullable InetAddress literal) {

  /**
   * The endpoint of a ringd address.
   *
   * @throws IllegalArgumentException when the address is not host:port
   */
  static Endpoint parse(String address) {
    String host;
    String port;
    if (address.startsWith("[")) {
      int close = address.indexOf(']');
      if (close < 0 || close + 1 >= address.length() || address.charAt(close + 1) != ':') {
        throw new IllegalArgumentException("not [host]:port: " + address);
      }
      host = address.substring(1, close);
      port = address.substring(close + 2);
    } else {
      int colon = address.lastIndexOf(':');
      if (colon <= 0 || address.indexOf(':') != colon) {
        throw new IllegalArgumentException("not host:port: " + address);
      }
      host = address.substring(0, colon);
      port = address.substring(colon + 1);
    }
    if (host.isEmpty()
        || port.isEmpty()
        || port.length() > 5
        || !port.chars().allMatch(c -> c >= '0' && c <= '9')) {
      throw new IllegalArgumentException("not host:port: " + address);
    }
    int p = Integer.parseInt(port);
    if (p < 1 || p > 65_535) {
      throw new IllegalArgumentException("port out of range: " + address);
    }
    return new Endpoint(host, p, literalOf(host));
  }

  /** The host's address when it is an IPv4 or IPv6 literal (no lookup is made), else null. */
  private static @Nullable InetAddress literalOf(String host) {
    boolean v4 = host.chars().allMatch(c -> (c >= '0' && c <= '9') || c == '.');
    boolean v6 = host.indexOf(':') >= 0;
    if (!v4 && !v6) {
      return null;
    }
    try {
      // A literal is parsed, never looked up.
      return InetAddress.getByName(host);
    } catch (UnknownHostException e) {
      throw new IllegalArgumentException("not an IP address: " + host, e);
    }
  }

  /**
   * Whether a connection's address is this endpoint: the same port, and the same IP when this host
   * is a literal (and the connection's address is resolved), else the same host name.
   */
  boolean matches(SocketAddress address) {
    if (!(address instanceof InetSocketAddress isa) || isa.getPort() != port) {
      return false;
    }
    if (literal != null && isa.getAddress() != null) {
      return literal.equals(isa.getAddress());
    }
    return isa.getHostString().toLowerCase(Locale.ROOT).equals(host.toLowerCase(Locale.ROOT));
  }

  /** The socket address to connect to; a host name is looked up here (or left unresolved). */
  InetSocketAddress socketAddress() {
    return literal != null
        ? new InetSocketAddress(literal, port)
        : new InetSocketAddress(host, port);
  }

  @Override
  public String toString() {
    return host.indexOf(':') >= 0 ? "[" + host + "]:" + port : host + ":" + port;
  }
}
