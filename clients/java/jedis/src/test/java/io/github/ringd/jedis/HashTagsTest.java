package io.github.ringd.jedis;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.HostAndPort;

class HashTagsTest {
  @Test
  void placesTheFirstNonEmptyTagAsRedisClusterDoes() {
    String[][] cases = {
      {"user:{42}:cart", "42"},
      {"{a}{b}", "a"},
      {"plain", "plain"},
      {"{}x{y}", "{}x{y}"}, // an empty first tag: the whole key
      {"{open", "{open"},
      {"a}b{c}", "c"},
      {"x{{y}}", "{y"},
    };
    for (String[] c : cases) {
      assertEquals(c[1], HashTags.of(c[0]).toString(), c[0]);
      assertArrayEquals(
          c[1].getBytes(StandardCharsets.UTF_8),
          HashTags.of(c[0].getBytes(StandardCharsets.UTF_8)),
          c[0]);
    }
  }

  @Test
  void readsAddresses() {
    assertEquals(new HostAndPort("127.0.0.1", 6379), Addresses.parse("127.0.0.1:6379"));
    assertEquals(new HostAndPort("::1", 6380), Addresses.parse("[::1]:6380"));
    assertEquals(new HostAndPort("redis-a", 1), Addresses.parse("redis-a:1"));
    for (String bad :
        new String[] {"", "host", ":1", "h:", "h:0", "h:65536", "::1:6379", "[::1]"}) {
      assertNull(Addresses.parse(bad), bad);
    }
    assertNull(Addresses.parse(null));
  }
}
