package io.github.ringd.placement;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Refusals: each input spec 2.4 refuses gives its reason, and the first failure in 2.4's order. */
class ErrorsTest {
  private static final PlacementException.Reason NONE = null;

  static PlacementException.Reason refusal(RingConfig c, List<Node> nodes, Stored stored) {
    try {
      Placement.build(c, nodes, stored);
      return NONE;
    } catch (PlacementException e) {
      return e.reason();
    }
  }

  private record Case(RingConfig config, List<Node> nodes, PlacementException.Reason want) {}

  private static Node n(String id) {
    return Node.of(id);
  }

  @Test
  void refusalsCarryTheirReason() {
    PlacementException e =
        assertThrows(
            PlacementException.class,
            () -> Placement.build(RingConfig.defaults(Algorithm.RING), List.of(n("a"), n("a"))));
    assertEquals(PlacementException.Reason.DUPLICATE_NODE_ID, e.reason());
    assertTrue(e.is(PlacementException.Reason.DUPLICATE_NODE_ID));
    assertFalse(e.is(PlacementException.Reason.INVALID_NODE_ID));
    assertTrue(e.getMessage().startsWith("DuplicateNodeId: "), e.getMessage());
    PlacementException required =
        assertThrows(
            PlacementException.class,
            () -> Placement.build(RingConfig.defaults(Algorithm.TABLE), List.of(n("a"))));
    assertEquals(PlacementException.Reason.TABLE_REQUIRED, required.reason());
    assertTrue(required.is(PlacementException.Reason.INVALID_TABLE), "as the server calls it");
  }

  @Test
  void nodeAndConfigRefusals() {
    RingConfig ring = RingConfig.defaults(Algorithm.RING);
    RingConfig nginx = RingConfig.defaults(Algorithm.NGINX);
    RingConfig twemproxy = RingConfig.defaults(Algorithm.TWEMPROXY);
    RingConfig envoy = RingConfig.defaults(Algorithm.ENVOY_RING_HASH);
    Map<String, Case> cases = new LinkedHashMap<>();
    cases.put("empty id", new Case(ring, List.of(n("")), PlacementException.Reason.EMPTY_NODE_ID));
    cases.put(
        "leading dash",
        new Case(ring, List.of(n("-a")), PlacementException.Reason.INVALID_NODE_ID));
    cases.put(
        "id of 129 bytes",
        new Case(ring, List.of(n("x".repeat(129))), PlacementException.Reason.INVALID_NODE_ID));
    cases.put(
        "weight 0",
        new Case(
            ring, List.of(n("a").withWeight(0)), PlacementException.Reason.WEIGHT_OUT_OF_RANGE));
    cases.put(
        "weight 1000001",
        new Case(
            ring,
            List.of(n("a").withWeight(1_000_001)),
            PlacementException.Reason.WEIGHT_OUT_OF_RANGE));
    cases.put(
        "ramp 0",
        new Case(ring, List.of(n("a").withRamp(0)), PlacementException.Reason.RAMP_OUT_OF_RANGE));
    cases.put(
        "ramp 65537",
        new Case(
            ring, List.of(n("a").withRamp(65_537)), PlacementException.Reason.RAMP_OUT_OF_RANGE));
    cases.put(
        "control in key",
        new Case(
            ring,
            List.of(n("a").withHashKey("a\u007fb")),
            PlacementException.Reason.INVALID_HASH_KEY));
    cases.put(
        "lone surrogate in key",
        new Case(
            ring,
            List.of(n("a").withHashKey("a\ud800")),
            PlacementException.Reason.INVALID_HASH_KEY));
    cases.put(
        "key of 256 bytes",
        new Case(
            ring,
            List.of(n("a").withHashKey("é".repeat(128))),
            PlacementException.Reason.INVALID_HASH_KEY));
    cases.put(
        "bad zone",
        new Case(ring, List.of(n("a").withZone("z one")), PlacementException.Reason.INVALID_ZONE));
    cases.put(
        "space in address",
        new Case(
            ring, List.of(n("a").withAddress("a b:1")), PlacementException.Reason.INVALID_ADDRESS));
    cases.put(
        "no-break space in address",
        new Case(
            ring,
            List.of(n("a").withAddress("a\u00a0b:1")),
            PlacementException.Reason.INVALID_ADDRESS));
    cases.put(
        "table_size 3 < 4",
        new Case(
            RingConfig.builder(Algorithm.MAGLEV).tableSize(3).build(),
            List.of(n("a"), n("b"), n("c"), n("d")),
            PlacementException.Reason.TABLE_SIZE_OUT_OF_RANGE));
    cases.put(
        "table_size 4",
        new Case(
            RingConfig.builder(Algorithm.MAGLEV).tableSize(4).build(),
            List.of(),
            PlacementException.Reason.TABLE_SIZE_NOT_PRIME));
    cases.put(
        "table_size 2^24+1",
        new Case(
            RingConfig.builder(Algorithm.MAGLEV).tableSize((1 << 24) + 1).build(),
            List.of(),
            PlacementException.Reason.TABLE_SIZE_OUT_OF_RANGE));
    cases.put(
        "zone missing",
        new Case(
            ring.toBuilder().zoneAware(true).build(),
            List.of(n("a")),
            PlacementException.Reason.MISSING_ZONE));
    cases.put(
        "point cap",
        new Case(
            ring.toBuilder().vnodesPerWeight(10_000).build(),
            List.of(n("a").withWeight(1000)),
            PlacementException.Reason.TOO_MANY_POINTS));
    cases.put(
        "ketama ramp",
        new Case(
            RingConfig.defaults(Algorithm.KETAMA),
            List.of(n("a").withRamp(5)),
            PlacementException.Reason.RAMP_NOT_SUPPORTED));
    cases.put(
        "haproxy weight",
        new Case(
            RingConfig.defaults(Algorithm.HAPROXY),
            List.of(n("a").withWeight(257)),
            PlacementException.Reason.WEIGHT_TOO_HIGH_FOR_PROXY));
    cases.put(
        "nginx no address",
        new Case(nginx, List.of(n("a")), PlacementException.Reason.MISSING_ADDRESS));
    cases.put(
        "nginx unix",
        new Case(
            nginx,
            List.of(n("a").withAddress("unix:80")),
            PlacementException.Reason.ADDRESS_NOT_SERVER));
    cases.put(
        "nginx port 0",
        new Case(
            nginx,
            List.of(n("a").withAddress("h:0")),
            PlacementException.Reason.ADDRESS_NOT_SERVER));
    cases.put(
        "nginx shared",
        new Case(
            nginx,
            List.of(n("a").withAddress("h:1"), n("b").withAddress("h:1")),
            PlacementException.Reason.DUPLICATE_ADDRESS));
    cases.put(
        "twemproxy port 01",
        new Case(
            twemproxy,
            List.of(n("a").withAddress("h:01")),
            PlacementException.Reason.ADDRESS_NOT_SERVER));
    cases.put(
        "twemproxy name",
        new Case(
            twemproxy,
            List.of(n("a").withAddress("h:1").withHashKey("a#b")),
            PlacementException.Reason.INVALID_SERVER_NAME));
    cases.put(
        "twemproxy taken",
        new Case(
            twemproxy,
            List.of(n("a").withAddress("h:11211"), n("b").withAddress("x:1").withHashKey("h")),
            PlacementException.Reason.SERVER_NAME_TAKEN));
    cases.put(
        "envoy no address",
        new Case(envoy, List.of(n("a")), PlacementException.Reason.MISSING_ADDRESS));
    cases.put(
        "envoy host name",
        new Case(
            envoy,
            List.of(n("a").withAddress("cache.local:80")),
            PlacementException.Reason.ADDRESS_NOT_SERVER));
    cases.put(
        "envoy uppercase",
        new Case(
            envoy,
            List.of(n("a").withAddress("[2001:DB8::1]:80")),
            PlacementException.Reason.ADDRESS_NOT_SERVER));
    cases.put(
        "envoy port 0",
        new Case(
            envoy,
            List.of(n("a").withAddress("10.0.0.1:0")),
            PlacementException.Reason.ADDRESS_NOT_SERVER));
    cases.put(
        "envoy label taken",
        new Case(
            envoy,
            List.of(
                n("a").withAddress("10.0.0.1:80"),
                n("b").withHashKey("a").withAddress("10.0.0.2:80")),
            PlacementException.Reason.ENDPOINT_KEY_TAKEN));
    cases.put(
        "envoy tiny share",
        new Case(
            envoy,
            List.of(
                n("a").withAddress("10.0.0.1:80").withRamp(1),
                n("b").withAddress("10.0.0.2:80").withWeight(1_000_000)),
            PlacementException.Reason.WEIGHT_SHARE_TOO_SMALL));
    cases.put(
        "table without one",
        new Case(
            RingConfig.defaults(Algorithm.TABLE),
            List.of(n("a")),
            PlacementException.Reason.TABLE_REQUIRED));
    cases.forEach(
        (name, c) -> assertEquals(c.want(), refusal(c.config(), c.nodes(), Stored.NONE), name));
  }

  @Test
  void theFirstBadNodeInInputOrderIsReported() {
    List<Node> nodes = new ArrayList<>(List.of(n("b").withWeight(0), n("a").withRamp(0)));
    assertEquals(
        PlacementException.Reason.WEIGHT_OUT_OF_RANGE,
        refusal(RingConfig.defaults(Algorithm.RING), nodes, Stored.NONE));
    Collections.reverse(nodes);
    assertEquals(
        PlacementException.Reason.RAMP_OUT_OF_RANGE,
        refusal(RingConfig.defaults(Algorithm.RING), nodes, Stored.NONE));
  }

  @Test
  void storedStateRefusals() {
    List<Node> nodes = List.of(n("a"), n("b").withWeight(2));
    RingConfig jump = RingConfig.defaults(Algorithm.JUMP);
    Map<String, List<BucketRun>> orders = new LinkedHashMap<>();
    orders.put(
        "a stranger", List.of(new BucketRun("a", 1), new BucketRun("c", 1), new BucketRun("b", 2)));
    orders.put("too few", List.of(new BucketRun("a", 1), new BucketRun("b", 1)));
    orders.put(
        "a last hole",
        List.of(new BucketRun("a", 1), new BucketRun("b", 2), new BucketRun(null, 1)));
    orders.put("negative count", List.of(new BucketRun("a", -1)));
    orders.forEach(
        (name, runs) ->
            assertEquals(
                PlacementException.Reason.INVALID_BUCKET_ORDER,
                refusal(jump, nodes, Stored.NONE.withBuckets(runs)),
                name));
    Placement p =
        Placement.build(
            jump,
            nodes,
            Stored.NONE.withBuckets(
                List.of(
                    new BucketRun("b", 1),
                    new BucketRun(null, 1),
                    new BucketRun("a", 1),
                    new BucketRun("b", 1))));
    assertNull(p.bucketOrder().get(1).id(), "a hole inside the order is kept");
    RingConfig haproxy = RingConfig.defaults(Algorithm.HAPROXY);
    Map<String, Map<String, Integer>> ids = new LinkedHashMap<>();
    ids.put("missing", Map.of("a", 1));
    ids.put("shared", Map.of("a", 1, "b", 1));
    ids.put("zero", Map.of("a", 0, "b", 1));
    ids.put("too big", Map.of("a", 1, "b", 1 << 20));
    ids.forEach(
        (name, m) ->
            assertEquals(
                PlacementException.Reason.INVALID_SERVER_IDS,
                refusal(haproxy, nodes, Stored.NONE.withServerIds(m)),
                name));
  }
}
