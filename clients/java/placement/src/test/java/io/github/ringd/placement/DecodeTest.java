package io.github.ringd.placement;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** Thin mode's decoder (9.2): it refuses what no placement encodes, and never crashes. */
class DecodeTest {
  /** data decoded against its own hash, so that only the decoder's checks can refuse it. */
  static Placement decodeOwn(byte[] data) {
    return Placement.decode(data, Encoding.fingerprint(data));
  }

  /** The encodings of the vector files up to limit bytes (the nodes-1000 files left out). */
  static List<byte[]> smallEncodings(int limit) throws IOException {
    List<byte[]> out = new ArrayList<>();
    try (Stream<Path> files = Files.list(VectorFiles.dir())) {
      for (Path f : files.sorted().toList()) {
        String name = f.getFileName().toString();
        if (!name.endsWith(".json") || name.contains("nodes-1000")) {
          continue;
        }
        byte[] enc = VectorFiles.build(VectorFiles.read(f)).encode();
        if (enc.length <= limit) {
          out.add(enc);
        }
      }
    }
    return out;
  }

  @Test
  void refusesWhatNoPlacementEncodes() {
    Placement p =
        Placement.build(
            RingConfig.defaults(Algorithm.JUMP),
            List.of(Node.of("a"), Node.of("b"), Node.of("c").withWeight(2)));
    byte[] good = p.encode();
    assertArrayEquals(good, decodeOwn(good).encode());
    assertThrows(
        FingerprintMismatchException.class,
        () -> Placement.decode(good, Encoding.fingerprint(new byte[0])));
    Map<String, UnaryOperator<byte[]>> changes = new LinkedHashMap<>();
    changes.put("magic", b -> set(b, 0, 'X'));
    changes.put("version", b -> set(b, 7, 2));
    changes.put("algorithm", b -> set(b, 8, 12));
    changes.put("algorithm 0", b -> set(b, 8, 0));
    changes.put("hash", b -> set(b, 9, 99));
    changes.put("hash not accepted", b -> set(b, 9, HashFunction.SDBM.code()));
    changes.put("jump with xxh64", b -> set(b, 9, HashFunction.XXH64.code()));
    changes.put("zone_aware", b -> set(b, 10, 2));
    changes.put("flags", b -> set(b, 11, 2));
    changes.put("ramped but no ramp", b -> set(b, 11, 1));
    changes.put("replication 0", b -> set(b, 12, 0));
    changes.put("replication 65", b -> set(b, 12, 65));
    changes.put("ids out of order", b -> set(b, 21, 'b'));
    changes.put("bad id", b -> set(b, 21, '-'));
    changes.put("id above ASCII", b -> set(b, 21, 0xe9));
    changes.put("weight 0", b -> set(b, 23, 0));
    changes.put(
        "weight 2^32 − 1", b -> set(set(set(set(b, 23, 0xff), 24, 0xff), 25, 0xff), 26, 0xff));
    changes.put("a trailing byte", b -> java.util.Arrays.copyOf(b, b.length + 1));
    changes.put("cut short", b -> java.util.Arrays.copyOf(b, b.length - 1));
    changes.put("bucket past nodes", b -> set(b, b.length - 4, 9));
    changes.put("wrong bucket count", b -> set(b, b.length - 20, 3));
    changes.put(
        "a trailing hole",
        b ->
            set(
                set(set(set(b, b.length - 4, 0xff), b.length - 3, 0xff), b.length - 2, 0xff),
                b.length - 1,
                0xff));
    changes.forEach(
        (name, change) -> {
          byte[] b = change.apply(good.clone());
          PlacementException e = assertThrows(PlacementException.class, () -> decodeOwn(b), name);
          assertEquals(PlacementException.Reason.INVALID_ENCODING, e.reason(), name);
        });
  }

  private static byte[] set(byte[] b, int i, int v) {
    b[i] = (byte) v;
    return b;
  }

  @Test
  void refusesUnsortedPointsAndSlotsPastTheNodes() {
    Placement ring =
        Placement.build(
            RingConfig.builder(Algorithm.RING).vnodesPerWeight(2).build(),
            List.of(Node.of("a"), Node.of("b")));
    byte[] enc = ring.encode();
    // The body is a u32 count, then (u64, u32) points: swap the first two positions.
    int body = enc.length - 4 - 4 * 12;
    byte[] swapped = enc.clone();
    System.arraycopy(enc, body + 4 + 12, swapped, body + 4, 8);
    System.arraycopy(enc, body + 4, swapped, body + 4 + 12, 8);
    assertEquals(
        PlacementException.Reason.INVALID_ENCODING,
        assertThrows(PlacementException.class, () -> decodeOwn(swapped)).reason());
    Placement maglev =
        Placement.build(
            RingConfig.builder(Algorithm.MAGLEV).tableSize(7).build(),
            List.of(Node.of("a"), Node.of("b")));
    byte[] m = maglev.encode();
    m[m.length - 4] = 2; // the last slot names node 2 of 2
    assertEquals(
        PlacementException.Reason.INVALID_ENCODING,
        assertThrows(PlacementException.class, () -> decodeOwn(m)).reason());
  }

  @Test
  void neverCrashesOnCutOrFlippedEncodings() throws IOException {
    for (byte[] enc : smallEncodings(4096)) {
      for (int n = 0; n < enc.length; n++) {
        byte[] cut = java.util.Arrays.copyOf(enc, n);
        assertThrows(PlacementException.class, () -> decodeOwn(cut), "a " + n + "-byte prefix");
      }
      for (int i = 0; i < enc.length; i += 1 + enc.length / 64) {
        byte[] b = enc.clone();
        b[i] ^= 0x5a;
        try {
          // Some flips leave a valid encoding (a position in a body): then it is canonical.
          assertArrayEquals(b, decodeOwn(b).encode(), "byte " + i + " flipped");
        } catch (PlacementException e) {
          assertEquals(PlacementException.Reason.INVALID_ENCODING, e.reason(), "byte " + i);
        }
      }
    }
  }
}
