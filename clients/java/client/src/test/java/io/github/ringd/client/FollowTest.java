package io.github.ringd.client;

import static io.github.ringd.client.Live.assertRoutesLikeServer;
import static io.github.ringd.client.Live.fast;
import static io.github.ringd.client.Live.waitFor;
import static io.github.ringd.client.Live.waitVersion;
import static io.github.ringd.testkit.RingHandle.remove;
import static io.github.ringd.testkit.RingHandle.upsert;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.ringd.placement.Placement;
import io.github.ringd.testkit.RingHandle;
import io.github.ringd.testkit.Ringd;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.Test;

/** Following a ring over its stream: table moves and downloads, deletion, listeners. */
class FollowTest {
  /**
   * Follows a table ring over its stream through 20 changes: node additions, weight changes,
   * removals and a change of partitions. A version is built from the previous one and its moves
   * exactly when the server sends moves, else from the downloaded table, and every version routes
   * as the server looks up.
   */
  @Test
  void followsATableRingThroughTwentyChanges() {
    try (Ringd s = Ringd.start()) {
      RingHandle r = s.ring("t");
      r.create(Map.of("algorithm", "table", "partitions", 4096));
      for (String id : List.of("a", "b", "c", "d")) {
        r.change(upsert(id, 1));
      }
      ConcurrentLinkedQueue<ClientEvent> events = new ConcurrentLinkedQueue<>();
      List<long[]> told = new ArrayList<>();
      VersionListener listener =
          (now, before) ->
              told.add(new long[] {now.version(), before == null ? 0 : before.version()});
      RingClient c =
          fast(s.url(), "t", "follow")
              .watchMode(WatchMode.SSE)
              .observer(events::add)
              .addListener(listener)
              .build();
      try (c) {
        c.awaitReady(Duration.ofSeconds(20));
        Status st = waitVersion(c, 5);
        // Nothing held yet: the table is downloaded.
        assertEquals(1, st.tableDownloads(), st::toString);
        assertEquals(0, st.tableMovesApplied(), st::toString);
        assertEquals(Transport.SSE, st.transport());
        assertEquals(s.url(), st.server());
        assertRoutesLikeServer(r, c, 5, 0);

        List<List<Map<String, Object>>> changes =
            List.of(
                List.of(upsert("e", 1)),
                List.of(upsert("b", 3)),
                List.of(upsert("f", 2)),
                List.of(remove("a")),
                List.of(upsert("g", 1)),
                List.of(upsert("c", 2)),
                List.of(upsert("h", 1)),
                List.of(upsert("i", 1)),
                List.of(Map.of("op", "update_config", "config", Map.of("partitions", 1024))),
                List.of(upsert("j", 1)),
                List.of(remove("e")),
                List.of(upsert("k", 4)),
                List.of(upsert("d", 2)),
                List.of(upsert("l", 1)),
                List.of(remove("f")),
                List.of(upsert("m", 1)),
                List.of(upsert("n", 1), upsert("o", 1)),
                List.of(upsert("b", 1)),
                List.of(remove("g")),
                List.of(upsert("p", 2)));
        long moves = 0;
        long downloads = 1;
        for (int i = 0; i < changes.size(); i++) {
          long v = r.change(changes.get(i));
          assertEquals(6 + i, v, "change " + i);
          // What the server sent decides how the client must build it.
          if (r.get("/snapshots/" + v).hasNonNull("table_moves")) {
            moves++;
          } else {
            downloads++;
          }
          Status now = waitVersion(c, v);
          assertEquals(moves, now.tableMovesApplied(), () -> "v" + v + " " + now);
          assertEquals(downloads, now.tableDownloads(), () -> "v" + v + " " + now);
          assertEquals(0, now.refused(), () -> "v" + v + " " + now);
          assertRoutesLikeServer(r, c, v, v - 1);
        }
        // The partitions change cannot be reached by moves; most others are.
        assertTrue(moves >= 15 && downloads >= 2, "moves " + moves + ", downloads " + downloads);
        st = c.status();
        assertEquals(21, st.applied());
        assertEquals(25, st.version());
        assertNull(st.lastError(), st::toString);
      }
      // The observer and the listener saw every version applied, in order.
      List<ClientEvent> applied = new ArrayList<>();
      for (ClientEvent e : events) {
        if (e.kind() == ClientEvent.Kind.APPLIED) {
          applied.add(e);
        }
      }
      assertEquals(21, applied.size());
      assertEquals(21, told.size());
      for (int i = 0; i < applied.size(); i++) {
        assertEquals(5 + i, applied.get(i).version(), applied.get(i)::toString);
        assertEquals(i == 0 ? 0 : 4 + i, applied.get(i).from(), applied.get(i)::toString);
        assertEquals(5 + i, told.get(i)[0]);
        assertEquals(i == 0 ? 0 : 4 + i, told.get(i)[1]);
      }
    }
  }

  /**
   * Deletes the ring under a stream: the client says so and keeps its last version; the ring
   * created again arrives as a reset, which replaces it.
   */
  @Test
  void keepsRoutingOnADeletedRingUntilItIsRecreated() {
    try (Ringd s = Ringd.start();
        RingClient c = fast(s.url(), "r", "deleted").build()) {
      RingHandle r = s.ring("r");
      r.create(Map.of());
      r.change(upsert("a", 1));
      r.change(upsert("b", 1));
      Status st = waitVersion(c, 3);
      String fp3 = st.fingerprint();
      r.call("DELETE", "", null, 204);
      waitFor("the client to see the deletion", Duration.ofSeconds(10), () -> c.status().deleted());
      assertEquals(3, c.status().version());
      assertEquals(fp3, c.status().fingerprint());
      String o = c.owner("k");
      assertTrue("a".equals(o) || "b".equals(o), "owner " + o + " after the deletion");
      // Created again: version 1 of a new history, one node.
      r.create(Map.of());
      r.change(upsert("z", 1));
      waitFor(
          "the new ring",
          Duration.ofSeconds(10),
          () -> c.status().version() == 2 && !c.status().deleted());
      assertEquals("z", c.owner("k"));
      assertEquals(0, c.status().refused(), c.status()::toString);
    }
  }

  /** A listener added while a version is held is told of it at once, then of the next. */
  @Test
  void aLateListenerHearsTheVersionHeldFirst() {
    try (Ringd s = Ringd.start();
        RingClient c = fast(s.url(), "r", "late").ack(false).build()) {
      RingHandle r = s.ring("r");
      r.create(Map.of());
      long v = r.change(upsert("a", 1));
      waitVersion(c, v);
      List<String> heard = new ArrayList<>();
      c.addListener(
          (Placement now, Placement before) ->
              heard.add(now.version() + "<" + (before == null ? 0 : before.version())));
      assertEquals(List.of("2<0"), heard);
      waitVersion(c, r.change(upsert("b", 1)));
      assertEquals(List.of("2<0", "3<2"), heard);
      assertFalse(c.status().deleted());
    }
  }
}
