package io.github.ringd.placement;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The test values of spec 3.3. */
class HashesTest {
  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void generalHashes() {
    String[] inputs = {"", "hello", "node-a"};
    long[][] want = {
      {0x2d06800538d394c2L, 0x04b2008fd98c1dd4L, 0x141cfc9842c4b0e3L, 0x0000000000000000L},
      {0x9555e8555c62dcfdL, 0x762a4bbc2a40415dL, 0x0ea3b05fba4df22cL, 0xcbd8a7b341bd9b02L},
      {0xdadea24aa12481feL, 0x5ce83ab35b8aec6cL, 0x0474205af00f5766L, 0x44a5bcec4b0764bfL},
    };
    HashFunction[] fs = {
      HashFunction.XXH3, HashFunction.MD5, HashFunction.SHA256, HashFunction.MURMUR3
    };
    for (int i = 0; i < inputs.length; i++) {
      for (int f = 0; f < fs.length; f++) {
        assertEquals(want[i][f], Hashes.hash64(fs[f], b(inputs[i])), fs[f] + "(" + inputs[i] + ")");
      }
    }
  }

  @Test
  void murmur3IsH1() {
    // h1 of 3.4, past a block and in the tail; and hash4j's murmur3_128 agrees on every length.
    assertEquals(
        0xe34bbc7bbc071b6cL,
        Hashes.hash64(HashFunction.MURMUR3, b("The quick brown fox jumps over the lazy dog")));
    assertEquals(0xcdebd2acb570d6f7L, Hashes.hash64(HashFunction.MURMUR3, b("0123456789abcdefX")));
    SplittableRandom rnd = new SplittableRandom(13);
    for (int len = 0; len < 80; len++) {
      byte[] data = new byte[len];
      rnd.nextBytes(data);
      assertEquals(
          com.dynatrace.hash4j.hashing.Hashing.murmur3_128().hashBytesToLong(data),
          Hashes.murmur3H1(data, 0, len),
          "length " + len + ", seed 13");
    }
  }

  @Test
  void xxh64AndMd5First32() {
    String[] inputs = {"", "hello", "node-a"};
    long[] seed0 = {0xef46db3751d8e999L, 0x26c7827d889f6da3L, 0x05378e2c8885d70bL};
    long[] seed1 = {0xd5afba1336a3be4bL, 0x23dd71cb04d0a1b2L, 0xf7f4751e959874abL};
    long[] md5 = {3649838548L, 708854109L, 1535831148L};
    for (int i = 0; i < inputs.length; i++) {
      byte[] in = b(inputs[i]);
      assertEquals(seed0[i], Hashes.xxh64(in, 0), "XXH64(" + inputs[i] + ", 0)");
      assertEquals(seed1[i], Hashes.xxh64(in, 1), "XXH64(" + inputs[i] + ", 1)");
      assertEquals(seed0[i], Hashes.hash64(HashFunction.XXH64, in), "xxh64 " + inputs[i]);
      assertEquals(md5[i], Hashes.md5First32(in, 0, in.length), "md5_32 " + inputs[i]);
    }
  }

  @Test
  void xxh64AcrossStripesAndTails() {
    // Values of Go's github.com/cespare/xxhash/v2 (what the Go client uses) on the bytes 0, 1, 2,
    // …:
    // lengths around the 32-byte stripe cross every tail (8, 4 and 1 bytes).
    byte[] data = new byte[100];
    for (int i = 0; i < data.length; i++) {
      data[i] = (byte) i;
    }
    int[] lengths = {31, 32, 33, 63, 64, 100};
    long[] want = {
      0xc346d2b59b4d8ee1L,
      0xcbf59c5116ff32b4L,
      0x0c535d1acafb8eadL,
      0xe26aa9e2a95f8e4fL,
      0xf7c67301db6713f0L,
      0x6ac1e58032166597L
    };
    for (int i = 0; i < lengths.length; i++) {
      assertEquals(want[i], Hashes.xxh64(data, 0, lengths[i], 0), "length " + lengths[i]);
    }
    assertEquals(0x9c502a83dcb7c69eL, Hashes.xxh64(data, 5), "seed 5");
    assertEquals(
        0xfbcea83c8a378bf1L, Hashes.xxh64(b("Nobody inspects the spammish repetition"), 0));
    SplittableRandom rnd = new SplittableRandom(7);
    for (int len = 0; len < 100; len++) {
      byte[] buf = new byte[len + 3];
      rnd.nextBytes(buf);
      // Hashing a slice equals hashing a copy of it.
      byte[] copy = java.util.Arrays.copyOfRange(buf, 3, buf.length);
      assertEquals(Hashes.xxh64(copy, 5), Hashes.xxh64(buf, 3, len, 5), "slice of length " + len);
    }
  }

  @Test
  void fmix64() {
    assertEquals(0, Hashes.fmix64(0));
    assertEquals(0xb456bcfc34c2cb2cL, Hashes.fmix64(1));
  }

  @Test
  void slicesHashAsCopies() {
    SplittableRandom rnd = new SplittableRandom(11);
    byte[] data = new byte[300];
    rnd.nextBytes(data);
    for (HashFunction f :
        new HashFunction[] {
          HashFunction.XXH3,
          HashFunction.MD5,
          HashFunction.SHA256,
          HashFunction.MURMUR3,
          HashFunction.XXH64
        }) {
      for (int len : new int[] {0, 1, 7, 16, 17, 33, 200}) {
        byte[] copy = java.util.Arrays.copyOfRange(data, 9, 9 + len);
        assertEquals(Hashes.hash64(f, copy), Hashes.hash64(f, data, 9, len), f + " length " + len);
      }
    }
  }
}
