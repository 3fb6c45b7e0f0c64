package io.github.ringd.placement;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Reading configs, nodes and bucket orders from JSON: defaults, and refusals in document order (2.4
 * check 0, then check 1).
 */
class JsonReadTest {
  private static final PlacementException.Reason NONE = null;

  private static PlacementException.Reason configRefusal(String json) {
    try {
      PlacementJson.config(json.getBytes(StandardCharsets.UTF_8));
      return NONE;
    } catch (PlacementException e) {
      return e.reason();
    }
  }

  @Test
  void configRefusals() {
    Map<String, PlacementException.Reason> cases = new LinkedHashMap<>();
    cases.put("{\"algorithm\": \"chord\"}", PlacementException.Reason.UNKNOWN_ALGORITHM);
    cases.put("{\"hash\": \"crc64\"}", PlacementException.Reason.UNKNOWN_HASH);
    cases.put(
        "{\"hash\": \"crc64\", \"algorithm\": \"chord\"}", PlacementException.Reason.UNKNOWN_HASH);
    cases.put(
        "{\"algorithm\": \"ketama\", \"hash\": \"sha256\"}",
        PlacementException.Reason.HASH_NOT_SUPPORTED);
    cases.put("{\"hash\": \"sdbm\"}", PlacementException.Reason.HASH_NOT_ACCEPTED);
    cases.put(
        "{\"algorithm\": \"nginx\", \"hash\": \"md5\"}",
        PlacementException.Reason.HASH_NOT_ACCEPTED);
    cases.put("{\"avalanche\": true}", PlacementException.Reason.AVALANCHE_NOT_SUPPORTED);
    cases.put("{\"hash_tag\": \"{}\"}", PlacementException.Reason.HASH_TAG_NOT_SUPPORTED);
    cases.put(
        "{\"algorithm\": \"twemproxy\", \"hash_tag\": \"{\"}",
        PlacementException.Reason.INVALID_HASH_TAG);
    cases.put(
        "{\"algorithm\": \"twemproxy\", \"hash_tag\": \"{\\\"\"}",
        PlacementException.Reason.INVALID_HASH_TAG);
    cases.put(
        "{\"algorithm\": \"twemproxy\", \"hash_tag\": \"\"}",
        PlacementException.Reason.INVALID_HASH_TAG);
    cases.put("{\"vnodes_per_weight\": 0}", PlacementException.Reason.VNODES_OUT_OF_RANGE);
    cases.put(
        "{\"vnodes_per_weight\": 1099511627776}", PlacementException.Reason.VNODES_OUT_OF_RANGE);
    cases.put(
        "{\"vnodes_per_weight\": 99999999999999999999999}",
        PlacementException.Reason.VNODES_OUT_OF_RANGE);
    cases.put("{\"replication_factor\": 65}", PlacementException.Reason.REPLICATION_OUT_OF_RANGE);
    cases.put(
        "{\"hash\": \"sdbm\", \"replication_factor\": 0}",
        PlacementException.Reason.REPLICATION_OUT_OF_RANGE);
    cases.put("{\"partitions\": 300}", PlacementException.Reason.PARTITIONS_OUT_OF_RANGE);
    cases.put("{\"partitions\": 2097152}", PlacementException.Reason.PARTITIONS_OUT_OF_RANGE);
    cases.put("{\"vnodes_per_weight\": 1.5}", PlacementException.Reason.INVALID_JSON);
    cases.put("{\"vnodes_per_weight\": \"2\"}", PlacementException.Reason.INVALID_JSON);
    cases.put("{\"zone_aware\": 1}", PlacementException.Reason.INVALID_JSON);
    cases.put("[]", PlacementException.Reason.INVALID_JSON);
    cases.put("{\"hash\": \"md5\", \"hash\": \"xxh3\"}", PlacementException.Reason.INVALID_JSON);
    cases.put("{\"algorithm\": \"chord\", \"x\": }", PlacementException.Reason.INVALID_JSON);
    cases.put("{} {}", PlacementException.Reason.INVALID_JSON);
    cases.put(
        "{\"algorithm\": \"maglev\", \"table_size\": 10}",
        PlacementException.Reason.TABLE_SIZE_NOT_PRIME);
    cases.put(
        "{\"algorithm\": \"envoy_ring_hash\", \"hash\": \"xxh3\"}",
        PlacementException.Reason.HASH_NOT_ACCEPTED);
    cases.put("{\"hash\": \"xxh64\"}", PlacementException.Reason.HASH_NOT_ACCEPTED);
    cases.put(
        "{\"algorithm\": \"envoy_ring_hash\", \"minimum_ring_size\": 0}",
        PlacementException.Reason.RING_SIZE_OUT_OF_RANGE);
    cases.put(
        "{\"algorithm\": \"envoy_ring_hash\", \"maximum_ring_size\": 8388609}",
        PlacementException.Reason.RING_SIZE_OUT_OF_RANGE);
    cases.put(
        "{\"algorithm\": \"envoy_ring_hash\", \"maximum_ring_size\": -1}",
        PlacementException.Reason.RING_SIZE_OUT_OF_RANGE);
    cases.put(
        "{\"algorithm\": \"envoy_ring_hash\", \"minimum_ring_size\": 99999999999999999999999}",
        PlacementException.Reason.RING_SIZE_OUT_OF_RANGE);
    cases.put(
        "{\"algorithm\": \"envoy_ring_hash\", \"minimum_ring_size\": 1.5}",
        PlacementException.Reason.INVALID_JSON);
    cases.put(
        "{\"algorithm\": \"ring\", \"maximum_ring_size\": 0}",
        PlacementException.Reason.RING_SIZE_OUT_OF_RANGE);
    cases.put(
        "{\"algorithm\": \"envoy_ring_hash\", \"minimum_ring_size\": 4097}",
        PlacementException.Reason.RING_SIZES_INVERTED);
    cases.put(
        "{\"algorithm\": \"envoy_ring_hash\", \"minimum_ring_size\": 5000, \"maximum_ring_size\": 0}",
        PlacementException.Reason.RING_SIZE_OUT_OF_RANGE);
    cases.put(
        "{\"algorithm\": \"envoy_ring_hash\", \"hash\": \"md5\", \"minimum_ring_size\": 0}",
        PlacementException.Reason.HASH_NOT_ACCEPTED);
    cases.put(
        "{\"algorithm\": \"envoy_ring_hash\", \"minimum_ring_size\": 0, \"partitions\": 3}",
        PlacementException.Reason.PARTITIONS_OUT_OF_RANGE);
    cases.forEach((json, want) -> assertEquals(want, configRefusal(json), json));
  }

  @Test
  void configDefaultsFollowTheAlgorithm() {
    // table_size is not checked outside maglev and envoy_maglev; unknown fields are ignored.
    RingConfig c =
        PlacementJson.config(
            "{\"algorithm\": \"haproxy\", \"table_size\": 10, \"membership\": {\"mode\": \"auto\"}}"
                .getBytes(StandardCharsets.UTF_8));
    assertEquals(HashFunction.SDBM, c.hash());
    assertTrue(c.avalanche());
    assertEquals(3, c.replicationFactor());
    assertEquals(65_536, c.partitions());
    assertEquals(10, c.tableSize());
    RingConfig e =
        PlacementJson.config(
            "{\"algorithm\": \"envoy_ring_hash\"}".getBytes(StandardCharsets.UTF_8));
    assertEquals(RingConfig.defaults(Algorithm.ENVOY_RING_HASH), e);
    assertEquals(HashFunction.XXH64, e.hash());
    assertEquals(1024, e.minimumRingSize());
    assertEquals(4096, e.maximumRingSize());
    assertFalse(e.avalanche());
    RingConfig r =
        PlacementJson.config(
            "{\"minimum_ring_size\": 5000, \"maximum_ring_size\": 10}"
                .getBytes(StandardCharsets.UTF_8));
    assertEquals(Algorithm.RING, r.algorithm());
    assertEquals(5000, r.minimumRingSize());
    assertEquals(10, r.maximumRingSize());
    RingConfig nulls =
        PlacementJson.config(
            "{\"hash_tag\": null, \"hash\": null}".getBytes(StandardCharsets.UTF_8));
    assertEquals(RingConfig.defaults(Algorithm.RING), nulls, "null is absent");
  }

  private static PlacementException.Reason nodeRefusal(String json) {
    try {
      PlacementJson.node(json.getBytes(StandardCharsets.UTF_8));
      return NONE;
    } catch (PlacementException e) {
      return e.reason();
    }
  }

  @Test
  void nodeJsonRefusals() {
    Map<String, PlacementException.Reason> cases = new LinkedHashMap<>();
    cases.put("{\"weight\": 2}", PlacementException.Reason.EMPTY_NODE_ID);
    cases.put("{\"id\": \"a\", \"hash_key\": \"\"}", PlacementException.Reason.INVALID_HASH_KEY);
    cases.put("{\"id\": \"a\", \"zone\": \"\"}", PlacementException.Reason.INVALID_ZONE);
    cases.put("{\"id\": \"a\", \"state\": \"gone\"}", PlacementException.Reason.INVALID_STATE);
    cases.put(
        "{\"id\": \"a\", \"ramp\": 0, \"weight\": 0}", PlacementException.Reason.RAMP_OUT_OF_RANGE);
    cases.put("{\"id\": \"a\", \"weight\": \"2\"}", PlacementException.Reason.INVALID_JSON);
    cases.put("{\"id\": \"a\", \"address\": \"\"}", PlacementException.Reason.INVALID_ADDRESS);
    cases.put("{\"id\": \"a\", \"id\": \"b\"}", PlacementException.Reason.INVALID_JSON);
    cases.forEach((json, want) -> assertEquals(want, nodeRefusal(json), json));
    Node n =
        PlacementJson.node(
            "{\"id\": \"a\", \"zone\": null, \"weight\": null, \"labels\": {\"x\": 1}}"
                .getBytes(StandardCharsets.UTF_8));
    assertEquals(Node.of("a"), n, "null is absent, labels are ignored");
    assertNull(n.zone());
    // The first bad node in input order, whatever the config.
    PlacementException e =
        assertThrows(
            PlacementException.class,
            () ->
                PlacementJson.nodes(
                    "[{\"id\": \"a\"}, {\"id\": \"b\", \"weight\": 0}, {\"id\": \"\"}]"
                        .getBytes(StandardCharsets.UTF_8)));
    assertEquals(PlacementException.Reason.WEIGHT_OUT_OF_RANGE, e.reason());
  }

  @Test
  void bucketJson() {
    List<BucketRun> runs =
        PlacementJson.buckets(
            "[\"a\", \"a\", null, [\"b\", 3], [null, 2], \"c\"]".getBytes(StandardCharsets.UTF_8));
    assertEquals(
        List.of(
            new BucketRun("a", 2),
            new BucketRun(null, 1),
            new BucketRun("b", 3),
            new BucketRun(null, 2),
            new BucketRun("c", 1)),
        runs);
    for (String bad :
        new String[] {
          "{}", "[1]", "[[\"a\"]]", "[[\"a\", 0]]", "[\"\"]", "[[\"a\", 1.5]]", "[[\"a\", 1, 2]]"
        }) {
      assertThrows(
          PlacementException.class,
          () -> PlacementJson.buckets(bad.getBytes(StandardCharsets.UTF_8)),
          bad);
    }
  }
}
