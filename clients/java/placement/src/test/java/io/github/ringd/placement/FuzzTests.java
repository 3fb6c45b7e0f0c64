package io.github.ringd.placement;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.charset.StandardCharsets;

/**
 * Fuzzed decoders: whatever the input, they return or throw {@link PlacementException}, and what
 * decodes re-encodes to itself. Without JAZZER_FUZZ set, each runs its seed inputs (in
 * src/test/resources) as a regression test.
 */
class FuzzTests {
  @FuzzTest(maxDuration = "10s")
  void decode(byte[] data) {
    Placement p;
    try {
      p = Placement.decode(data, Encoding.fingerprint(data));
    } catch (PlacementException e) {
      return;
    }
    // Whatever decodes answers lookups and re-encodes to itself.
    p.owner("key");
    p.owner("key".getBytes(StandardCharsets.UTF_8));
    p.preferenceList("key".getBytes(StandardCharsets.UTF_8), 3);
    p.ownership();
    assertArrayEquals(data, p.encode(), "decode ∘ encode");
    Placement again = Placement.decode(p.encode(), p.fingerprint());
    assertEquals(p.fingerprint(), again.fingerprint());
  }

  @FuzzTest(maxDuration = "10s")
  void snapshot(byte[] json) {
    Snapshot s;
    try {
      s = Snapshot.parse(json);
    } catch (PlacementException e) {
      return;
    }
    try {
      Placement p = s.placement(TableSource.none());
      assertEquals(s.fingerprint(), p.fingerprint());
      assertEquals(s.version(), p.version());
      p.owner("key");
    } catch (PlacementException e) {
      // A snapshot that parses may still be refused: never anything else.
    }
  }
}
