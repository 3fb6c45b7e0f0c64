package io.github.ringd.client;

import static io.github.ringd.client.Live.fast;
import static io.github.ringd.client.Live.waitFor;
import static io.github.ringd.testkit.RingHandle.upsert;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.github.ringd.testkit.RingHandle;
import io.github.ringd.testkit.Ringd;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/** A gated rollout held by this client's acks. */
class RolloutTest {
  private static final String ID = "java-gated";

  /**
   * Runs two rollouts with {@code gate: 1}. While the client follows and acks, the first walks its
   * ramp to the end, the client acking every step's version. Once it has stopped (its last ack
   * still live), the second commits its first step and waits, naming the client as lagging; a
   * client started again under the same id applies and acks the step, and the rollout goes on to
   * the end.
   */
  @Test
  void rolloutIsGatedOnThisClientsAcks() {
    try (Ringd s = Ringd.start()) {
      RingHandle r = s.ring("r");
      r.create(Map.of("algorithm", "ring"));
      long v = r.change(upsert("a", 1), upsert("b", 1), upsert("c", 1));
      Set<Long> acked = ConcurrentHashMap.newKeySet();
      RingClient c = follow(s, acked);
      c.awaitStatus(st -> st.acked() == v, Duration.ofSeconds(20));

      // 1. Followed and acked: the rollout runs to the end.
      long first = startRollout(r, upsert("d", 1));
      JsonNode done = rolloutWhen(r, first, x -> x.path("state").asText().equals("done"));
      List<Long> steps = stepVersions(done);
      assertEquals(List.of(v + 1, v + 2, v + 3), steps);
      long last = steps.get(steps.size() - 1);
      c.awaitStatus(st -> st.acked() == last, Duration.ofSeconds(20));
      assertTrue(acked.containsAll(steps), "acked " + acked + ", steps " + steps);
      checkClientEntry(r, last, c.status().fingerprint());

      // 2. The client stops; its ack stays live, so the next rollout's first step waits for it.
      c.close();
      long second = startRollout(r, upsert("e", 1));
      JsonNode waiting =
          rolloutWhen(
              r,
              second,
              x ->
                  x.path("state").asText().equals("waiting_for_gate")
                      && x.path("step").asInt() == 1);
      long stepOne = stepVersions(waiting).get(0);
      assertEquals(last + 1, stepOne);
      Live.sleep(1500);
      JsonNode still = r.get("/rollouts/" + second);
      JsonNode gate = still.path("gate");
      assertEquals("waiting_for_gate", still.path("state").asText(), still::toString);
      assertEquals(1, still.path("step").asInt(), still::toString);
      assertEquals("[\"" + ID + "\"]", gate.path("lagging").toString(), still::toString);
      assertEquals(stepOne, gate.path("version").asLong(), still::toString);
      assertEquals(1, gate.path("live").asInt(), still::toString);
      assertEquals(0, gate.path("acked").asInt(-1), still::toString);
      checkClientEntry(r, last, null);

      // 3. Back under the same id: it applies and acks each step, and the rollout finishes.
      try (RingClient again = follow(s, acked)) {
        done = rolloutWhen(r, second, x -> x.path("state").asText().equals("done"));
        steps = stepVersions(done);
        long end = steps.get(steps.size() - 1);
        assertEquals(stepOne, steps.get(0));
        assertEquals(stepOne + 2, end);
        again.awaitStatus(st -> st.acked() == end, Duration.ofSeconds(20));
        checkClientEntry(r, end, again.status().fingerprint());
        assertEquals(end, r.get("").path("version").asLong());
      }
    }
  }

  private static RingClient follow(Ringd s, Set<Long> acked) {
    return fast(s.url(), "r", ID)
        .observer(
            e -> {
              if (e.kind() == ClientEvent.Kind.ACKED && e.error() == null) {
                acked.add(e.version());
              }
            })
        .build();
  }

  /** Starts a three-step rollout of ops gated on every live client; returns its id. */
  @SafeVarargs
  private static long startRollout(RingHandle r, Map<String, Object>... ops) {
    List<Map<String, Object>> list = new ArrayList<>();
    for (Map<String, Object> op : ops) {
      list.add(op);
    }
    return r.call(
            "POST",
            "/rollouts",
            Map.of("ops", list, "policy", Map.of("steps", 3, "gate", 1, "gate_timeout", "5m")),
            201)
        .path("id")
        .asLong();
  }

  private static JsonNode rolloutWhen(RingHandle r, long id, Predicate<JsonNode> cond) {
    JsonNode[] out = new JsonNode[1];
    waitFor(
        "rollout " + id,
        Duration.ofSeconds(30),
        () -> {
          out[0] = r.get("/rollouts/" + id);
          return cond.test(out[0]);
        });
    return out[0];
  }

  /** The versions the rollout's committed steps made. */
  private static List<Long> stepVersions(JsonNode rollout) {
    List<Long> out = new ArrayList<>();
    for (JsonNode step : rollout.path("plan")) {
      if (step.path("version").isNumber()) {
        out.add(step.path("version").asLong());
      }
    }
    assertTrue(!out.isEmpty(), () -> "no committed step in " + rollout);
    return out;
  }

  /** GET …/clients lists this client alone, at version v (with fingerprint fp unless null). */
  private static void checkClientEntry(RingHandle r, long v, String fp) {
    JsonNode clients = r.get("/clients").path("clients");
    assertEquals(1, clients.size(), clients::toString);
    JsonNode got = clients.get(0);
    assertEquals(ID, got.path("client_id").asText(), got::toString);
    assertEquals(v, got.path("version").asLong(), got::toString);
    assertEquals(false, got.path("divergent").asBoolean(true), got::toString);
    if (fp != null) {
      assertEquals(fp, got.path("fingerprint").asText(), got::toString);
    }
  }
}
