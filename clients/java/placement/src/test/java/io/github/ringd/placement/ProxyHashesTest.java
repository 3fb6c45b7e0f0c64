package io.github.ringd.placement;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The proxies' key hashes against the spec's test values (3.5 to 3.7) and nutcracker's own. */
class ProxyHashesTest {
  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static int crc(String s) {
    byte[] d = b(s);
    return Crc32.of(d, 0, d.length);
  }

  @Test
  void crc32TestValues() {
    assertEquals(0, crc(""));
    assertEquals(907060870, crc("hello"));
    assertEquals(0xcbf43926, crc("123456789"));
    assertEquals(2023312811, crc("node-a"));
  }

  @Test
  void crc32InPiecesEqualsAtOnceAndTheJdk() {
    SplittableRandom rng = new SplittableRandom(31);
    for (int c = 0; c < 500; c++) {
      byte[] data = new byte[rng.nextInt(100)];
      rng.nextBytes(data);
      java.util.zip.CRC32 jdk = new java.util.zip.CRC32();
      jdk.update(data);
      int whole = Crc32.of(data, 0, data.length);
      assertEquals((int) jdk.getValue(), whole, "seed 31, case " + c);
      int cut = data.length == 0 ? 0 : rng.nextInt(data.length + 1);
      int pieces = Crc32.update(Crc32.of(data, 0, cut), data, cut, data.length - cut);
      assertEquals(whole, pieces, "seed 31, case " + c + " cut at " + cut);
      // A range inside a larger array reads only that range.
      byte[] padded = new byte[data.length + 9];
      rng.nextBytes(padded);
      System.arraycopy(data, 0, padded, 4, data.length);
      assertEquals(whole, Crc32.of(padded, 4, data.length), "seed 31, case " + c);
    }
    // The four bytes of LE32(v), as nginx chains its points.
    for (int c = 0; c < 200; c++) {
      int crc = rng.nextInt();
      int v = rng.nextInt();
      byte[] le = {(byte) v, (byte) (v >>> 8), (byte) (v >>> 16), (byte) (v >>> 24)};
      assertEquals(Crc32.update(crc, le, 0, 4), Crc32.updateLe32(crc, v), "seed 31, case " + c);
    }
  }

  private static int[] haproxy(String s) {
    byte[] d = b(s);
    return new int[] {
      HaproxyHashes.sdbm(d, 0, d.length),
      HaproxyHashes.djb2(d, 0, d.length),
      HaproxyHashes.wt6(d, 0, d.length),
      Crc32.of(d, 0, d.length)
    };
  }

  @Test
  void haproxyTestValues() {
    assertEquals("[0, 1505, f99a0360, 0]", hex(haproxy("")));
    assertEquals("[28d19932, f923099, d2e6e6b7, 3610a686]", hex(haproxy("hello")));
    assertEquals("[5921ae76, 1087a399, b84aac1b, 78994dab]", hex(haproxy("node-a")));
    assertEquals(0xab4ed927, HaproxyHashes.fullHash(0));
    assertEquals(0x348681b6, HaproxyHashes.fullHash(1));
    assertEquals(0x49c2008b, HaproxyHashes.fullHash(4096));
    assertEquals(0x7ae088a6, HaproxyHashes.fullHash(HaproxyHashes.sdbm(b("hello"), 0, 5)));
  }

  @Test
  void haproxyHashesReadOnlyTheirRange() {
    byte[] d = b("xxhelloyy");
    assertEquals(0x28d19932, HaproxyHashes.sdbm(d, 2, 5));
    assertEquals(0x0f923099, HaproxyHashes.djb2(d, 2, 5));
    assertEquals(0xd2e6e6b7, HaproxyHashes.wt6(d, 2, 5));
  }

  private static String hex(int[] v) {
    StringBuilder s = new StringBuilder("[");
    for (int i = 0; i < v.length; i++) {
      s.append(i > 0 ? ", " : "").append(Integer.toHexString(v[i]));
    }
    return s.append(']').toString();
  }

  @Test
  void twemproxyPublishedValues() {
    // nutcracker 0.5.0's own test values for "apple" (from libmemcached).
    byte[] d = b("apple");
    int n = d.length;
    assertEquals((int) 2297466611L, TwemproxyHashes.oneAtATime(d, 0, n));
    assertEquals((int) 2838417488L, Crc32.of(d, 0, n));
    assertEquals(67176023, TwemproxyHashes.fnv132(d, 0, n));
    assertEquals(280767167, TwemproxyHashes.fnv1a32(d, 0, n));
    assertEquals(473199127, TwemproxyHashes.fnv164(d, 0, n));
    assertEquals(1488911807, TwemproxyHashes.fnv1a64(d, 0, n));
    assertEquals((int) 3738850110L, TwemproxyHashes.hsieh(d, 0, n));
    assertEquals(1442444624, TwemproxyHashes.jenkins(d, 0, n));
    assertEquals((int) 4142305122L, TwemproxyHashes.murmur2(d, 0, n));
    // 0xFF enters fnv1a_64 sign-extended, as 0xFFFFFFFF.
    int basis = 0x84222325;
    assertEquals((basis ^ 0xffffffff) * 0x1b3, TwemproxyHashes.fnv1a64(new byte[] {-1}, 0, 1));
  }

  @Test
  void dispatchNamesEveryProxyHash() {
    byte[] d = b("apple");
    // nutcracker's published md5 value is md5_32 (3.2); crc32a is the standard CRC-32.
    assertEquals((int) 3195025439L, ProxyKeyHash.hash32(HashFunction.MD5, d, 0, d.length));
    assertEquals((int) 2838417488L, ProxyKeyHash.hash32(HashFunction.CRC32A, d, 0, d.length));
    assertEquals(1488911807, ProxyKeyHash.hash32(HashFunction.FNV1A_64, d, 0, d.length));
    assertEquals((int) 4142305122L, ProxyKeyHash.hash32(HashFunction.MURMUR, d, 0, d.length));
    byte[] hello = b("hello");
    assertEquals(0x0f923099, ProxyKeyHash.hash32(HashFunction.DJB2, hello, 0, 5));
    assertEquals(0x7ae088a6L, ProxyKeyHash.haproxy(HashFunction.SDBM, true, hello, 0, 5));
    assertEquals(0x28d19932L, ProxyKeyHash.haproxy(HashFunction.SDBM, false, hello, 0, 5));
    assertEquals(907060870L, ProxyKeyHash.nginx(hello, 0, 5));
    org.junit.jupiter.api.Assertions.assertThrows(
        IllegalArgumentException.class, () -> ProxyKeyHash.hash32(HashFunction.XXH3, d, 0, 5));
  }

  @Test
  void signExtensionWhereNutcrackerReadsSignedChars() {
    // 0xE9 enters one_at_a_time, the FNVs and hsieh's third tail byte as 0xFFFFFFE9, and the
    // others unsigned: the hashes differ from their unsigned readings exactly where 3.7 says.
    byte[] e9 = {(byte) 0xe9};
    int h = 0;
    h += 0xFFFFFFE9;
    h += h << 10;
    h ^= h >>> 6;
    h += h << 3;
    h ^= h >>> 11;
    h += h << 15;
    assertEquals(h, TwemproxyHashes.oneAtATime(e9, 0, 1));
    int basis = 0x811c9dc5;
    assertEquals((basis ^ 0xFFFFFFE9) * 0x01000193, TwemproxyHashes.fnv1a32(e9, 0, 1));
    long basis64 = 0xcbf29ce484222325L;
    long f = (basis64 * 0x100000001b3L) ^ 0xFFFFFFFFFFFFFFE9L;
    assertEquals((int) f, TwemproxyHashes.fnv164(e9, 0, 1));
    // hsieh's one-byte tail is unsigned: h = 0xE9, then the tail's mix.
    int s = 0xe9;
    s ^= s << 10;
    s += s >>> 1;
    s ^= s << 3;
    s += s >>> 5;
    s ^= s << 4;
    s += s >>> 17;
    s ^= s << 25;
    s += s >>> 6;
    assertEquals(s, TwemproxyHashes.hsieh(e9, 0, 1));
  }
}
