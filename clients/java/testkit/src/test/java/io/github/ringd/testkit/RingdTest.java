package io.github.ringd.testkit;

import static io.github.ringd.testkit.RingHandle.remove;
import static io.github.ringd.testkit.RingHandle.upsert;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The kit against a real ringd: create, change, batch lookups, restart. */
class RingdTest {
  @Test
  void createsChangesAndLooksUp() {
    try (Ringd s = Ringd.start()) {
      assertTrue(s.url().startsWith("http://127.0.0.1:"), s.url());
      RingHandle r = s.ring("t");
      assertEquals(1, r.create(Map.of("algorithm", "ring")));
      long v = r.change(upsert("a", 1), upsert(Map.of("id", "b", "weight", 2)));
      assertEquals(2, v);
      List<byte[]> keys = new ArrayList<>();
      for (int i = 0; i < RingHandle.MAX_LOOKUP_KEYS + 5; i++) {
        keys.add(("k" + i).getBytes(StandardCharsets.UTF_8));
      }
      keys.add(new byte[] {(byte) 0xff, 0, (byte) 0xfe}); // not UTF-8
      List<String> owners = r.lookup(v, keys);
      assertEquals(keys.size(), owners.size());
      Set<String> seen = Set.copyOf(owners);
      assertEquals(Set.of("a", "b"), seen, "both nodes own some of 10,006 keys");
      // The one-key form agrees with the batch, and GET …/lookup with it.
      assertEquals(owners.get(7), r.lookup(v, keys.get(7)));
      assertEquals(owners.get(7), r.get("/lookup?key=k7&version=2").path("owner").asText());
      List<List<String>> lists = r.replicas(v, keys.subList(0, 3), 2);
      for (int i = 0; i < 3; i++) {
        assertEquals(2, lists.get(i).size());
        assertEquals(owners.get(i), lists.get(i).get(0));
      }
      assertNull(r.lookup(1, keys.get(0)), "version 1 has no node");
      assertEquals(3, r.change(remove("a")));
      assertEquals(List.of("b", "b"), r.lookup(3, keys.subList(0, 2)));
    }
  }

  @Test
  void restartKeepsThePortAndTheData() {
    try (Ringd s = Ringd.start()) {
      RingHandle r = s.ring("r");
      r.create(Map.of());
      r.change(upsert("a"));
      String url = s.url();
      long pid = s.pid();
      s.restart();
      assertEquals(url, s.url());
      assertTrue(s.pid() != pid);
      assertEquals(3, s.ring("r").change(upsert("b")));
      assertTrue(s.log().length() > 0, "the log is kept");
    }
  }
}
