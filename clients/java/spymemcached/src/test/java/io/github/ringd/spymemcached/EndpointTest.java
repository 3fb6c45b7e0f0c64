package io.github.ringd.spymemcached;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;

class EndpointTest {
  private static final byte[] V6_LOOPBACK = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};

  /** An IPv4 address from its octets, with no lookup (as a literal in the node's address is). */
  private static InetAddress v4(int a, int b, int c, int d) throws Exception {
    return InetAddress.getByAddress(new byte[] {(byte) a, (byte) b, (byte) c, (byte) d});
  }

  @Test
  void readsHostPortAndBracketedIpv6() throws Exception {
    Endpoint a = Endpoint.parse("127.0.0.1:11211");
    assertEquals("127.0.0.1", a.host());
    assertEquals(11211, a.port());
    assertEquals(v4(127, 0, 0, 1), a.literal());
    Endpoint b = Endpoint.parse("[::1]:11212");
    assertEquals("::1", b.host());
    assertEquals(11212, b.port());
    assertEquals("[::1]:11212", b.toString());
    Endpoint c = Endpoint.parse("cache-a.internal:11211");
    assertNull(c.literal(), "a host name is not looked up");
    assertEquals("cache-a.internal:11211", c.toString());
  }

  @Test
  void refusesWhatIsNotHostPort() {
    for (String bad :
        new String[] {
          "",
          "host",
          ":11211",
          "host:",
          "host:0",
          "host:65536",
          "host:1a",
          "::1:11211",
          "[::1]",
          "[::1]11211",
          "/tmp/memcached.sock",
          "host:123456"
        }) {
      assertThrows(IllegalArgumentException.class, () -> Endpoint.parse(bad), bad);
    }
  }

  @Test
  void matchesAConnectionByIpOrByName() throws Exception {
    Endpoint ip = Endpoint.parse("127.0.0.1:11211");
    assertTrue(ip.matches(new InetSocketAddress(v4(127, 0, 0, 1), 11211)));
    assertTrue(ip.matches(new InetSocketAddress("localhost", 11211)), "resolved to 127.0.0.1");
    assertFalse(ip.matches(new InetSocketAddress(v4(127, 0, 0, 1), 11212)), "another port");
    assertFalse(ip.matches(new InetSocketAddress(v4(127, 0, 0, 2), 11211)), "another IP");
    Endpoint name = Endpoint.parse("Cache-A.internal:11211");
    assertTrue(name.matches(InetSocketAddress.createUnresolved("cache-a.internal", 11211)));
    assertFalse(name.matches(InetSocketAddress.createUnresolved("cache-b.internal", 11211)));
    assertTrue(
        Endpoint.parse("[::1]:11211")
            .matches(new InetSocketAddress(InetAddress.getByAddress(V6_LOOPBACK), 11211)));
  }
}
