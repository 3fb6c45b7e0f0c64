package io.github.ringd.placement;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** Snapshot parsing, verification against the fingerprint, and the table sources. */
class SnapshotTest {
  private static final String ZEROS = "0".repeat(64);

  /** The moves (partition, slot, node index) with u16 indices (9.4). */
  static byte[] movesOf(int[]... moves) {
    ByteBuffer b = ByteBuffer.allocate(4 + 7 * moves.length).order(ByteOrder.LITTLE_ENDIAN);
    b.putInt(moves.length);
    for (int[] m : moves) {
      b.putInt(m[0]).put((byte) m[1]).putShort((short) m[2]);
    }
    return b.array();
  }

  @Test
  void tableMovesExample() {
    // 9.4: partition 5, slot 0 to node index 2.
    assertEquals(
        "AQAAAAUAAAAAAgA=", Base64.getEncoder().encodeToString(movesOf(new int[] {5, 0, 2})));
  }

  private static Snapshot tableSnapshot(JsonNode v, long version, String fp, byte[] moves) {
    VectorFiles.Inputs in = VectorFiles.inputs(v);
    return Snapshot.of("r", version, in.config(), in.nodes(), fp, null, null, 0, moves);
  }

  @Test
  void tableFromMoves() {
    JsonNode v = VectorFiles.read("table-weighted.json");
    Placement prev = VectorFiles.build(v).withVersion(6);
    VectorFiles.Inputs in = VectorFiles.inputs(v);
    // Version 7 swaps partition 5's primary and second replica.
    List<List<String>> rows = new ArrayList<>();
    prev.tableRows().forEach(r -> rows.add(new ArrayList<>(r)));
    List<String> row5 = rows.get(5);
    row5.set(0, row5.set(1, row5.get(0)));
    Placement next = Placement.build(in.config(), in.nodes(), Stored.NONE.withTableRows(rows));
    List<String> ids = next.nodes().stream().map(Node::id).toList();
    int first = ids.indexOf(row5.get(0));
    int second = ids.indexOf(row5.get(1));
    byte[] moves = movesOf(new int[] {5, 0, first}, new int[] {5, 1, second});
    Placement p =
        tableSnapshot(v, 7, next.fingerprint(), moves).placement(TableSource.previous(prev));
    assertEquals(next.fingerprint(), p.fingerprint());
    assertEquals(7, p.version());
    Map<String, Object[]> cases = new LinkedHashMap<>();
    cases.put(
        "changed twice", new Object[] {7L, movesOf(new int[] {5, 0, 1}, new int[] {5, 0, 2})});
    cases.put("past the partitions", new Object[] {7L, movesOf(new int[] {256, 0, 1})});
    cases.put("past the replicas", new Object[] {7L, movesOf(new int[] {5, 3, 1})});
    cases.put("no such node", new Object[] {7L, movesOf(new int[] {5, 0, 6})});
    cases.put("a node twice in a row", new Object[] {7L, movesOf(new int[] {5, 0, first})});
    cases.put(
        "cut short", new Object[] {7L, java.util.Arrays.copyOf(movesOf(new int[] {5, 0, 1}), 8)});
    cases.put("not the next version", new Object[] {9L, moves});
    cases.forEach(
        (name, c) -> {
          Snapshot s = tableSnapshot(v, (long) c[0], next.fingerprint(), (byte[]) c[1]);
          PlacementException e =
              assertThrows(
                  PlacementException.class, () -> s.placement(TableSource.previous(prev)), name);
          assertEquals(PlacementException.Reason.INVALID_TABLE, e.reason(), name);
        });
    Snapshot other = tableSnapshot(v, 7, next.fingerprint(), movesOf());
    assertThrows(
        FingerprintMismatchException.class,
        () -> other.placement(TableSource.previous(prev)),
        "another table");
  }

  @Test
  void tableSnapshotNeedsItsTable() {
    JsonNode v = VectorFiles.read("table-weighted.json");
    Snapshot s = tableSnapshot(v, 7, v.get("fingerprint").asText(), null);
    PlacementException e =
        assertThrows(PlacementException.class, () -> s.placement(TableSource.none()));
    assertEquals(PlacementException.Reason.TABLE_REQUIRED, e.reason());
    assertTrue(e.is(PlacementException.Reason.INVALID_TABLE));
    PlacementException shortOne =
        assertThrows(
            PlacementException.class,
            () ->
                s.placement(
                    TableSource.encoding("RINGDPL\u0001".getBytes(StandardCharsets.US_ASCII))));
    assertEquals(PlacementException.Reason.INVALID_TABLE, shortOne.reason());
    // The download restores the table, verified against the snapshot's fingerprint.
    Placement built = VectorFiles.build(v);
    Placement p = s.placement(TableSource.encoding(built.encode()));
    assertEquals(built.fingerprint(), p.fingerprint());
    assertEquals(7, p.version());
  }

  @Test
  void haproxySnapshotServerIds() {
    RingConfig c = RingConfig.defaults(Algorithm.HAPROXY);
    List<Node> nodes = List.of(Node.of("a"), Node.of("b"));
    String fp = Placement.build(c, nodes).fingerprint();
    Map<String, Integer> ids = Map.of("a", 1, "b", 2);
    Placement p =
        Snapshot.of(null, 3, c, nodes, fp, null, ids, 3, null).placement(TableSource.none());
    assertEquals(Map.of("a", 1L, "b", 2L), p.serverIds());
    Map<String, Consumer<Map<String, Integer>>> changes = new LinkedHashMap<>();
    changes.put("a node missing", m -> m.remove("b"));
    changes.put("a stranger", m -> m.put("c", 2));
    changes.put("shared", m -> m.put("b", 1));
    changes.put("zero", m -> m.put("a", 0));
    changes.forEach(
        (name, change) -> {
          Map<String, Integer> m = new HashMap<>(ids);
          change.accept(m);
          Snapshot s = Snapshot.of(null, 3, c, nodes, fp, null, m, 3, null);
          assertEquals(
              PlacementException.Reason.INVALID_SERVER_IDS,
              assertThrows(PlacementException.class, () -> s.placement(TableSource.none()))
                  .reason(),
              name);
        });
    for (Snapshot s :
        List.of(
            Snapshot.of(null, 3, c, nodes, fp, null, null, 3, null),
            Snapshot.of(null, 3, c, nodes, fp, null, ids, 2, null))) {
      assertEquals(
          PlacementException.Reason.INVALID_SERVER_IDS,
          assertThrows(PlacementException.class, () -> s.placement(TableSource.none())).reason());
    }
  }

  private static ObjectNode okDoc() {
    ObjectNode doc = VectorFiles.JSON.createObjectNode();
    doc.putObject("config").put("algorithm", "ring");
    doc.putArray("nodes");
    doc.put("fingerprint", ZEROS);
    return doc;
  }

  private static PlacementException.Reason parseRefusal(byte[] json) {
    try {
      Snapshot.parse(json);
      return null;
    } catch (PlacementException e) {
      return e.reason();
    }
  }

  @Test
  void parseRefusals() {
    Map<String, Consumer<ObjectNode>> changes = new LinkedHashMap<>();
    Map<String, PlacementException.Reason> want = new LinkedHashMap<>();
    changes.put("no fingerprint", d -> d.remove("fingerprint"));
    want.put("no fingerprint", PlacementException.Reason.INVALID_SNAPSHOT);
    changes.put("uppercase fingerprint", d -> d.put("fingerprint", "A" + ZEROS.substring(1)));
    want.put("uppercase fingerprint", PlacementException.Reason.INVALID_SNAPSHOT);
    changes.put("no nodes", d -> d.remove("nodes"));
    want.put("no nodes", PlacementException.Reason.INVALID_SNAPSHOT);
    changes.put("no config", d -> d.remove("config"));
    want.put("no config", PlacementException.Reason.INVALID_SNAPSHOT);
    changes.put("bad config", d -> d.putObject("config").put("algorithm", "chord"));
    want.put("bad config", PlacementException.Reason.UNKNOWN_ALGORITHM);
    changes.put("bad node", d -> d.putArray("nodes").addObject().put("id", "-x"));
    want.put("bad node", PlacementException.Reason.INVALID_NODE_ID);
    changes.put("bad moves", d -> d.put("table_moves", "not base64!"));
    want.put("bad moves", PlacementException.Reason.INVALID_TABLE);
    changes.put("unpadded moves", d -> d.put("table_moves", "AQAAAAUAAAAAAgA"));
    want.put("unpadded moves", PlacementException.Reason.INVALID_TABLE);
    changes.put("bad buckets", d -> d.putArray("buckets").add(1));
    want.put("bad buckets", PlacementException.Reason.INVALID_BUCKET_ORDER);
    changes.put("bad server ids", d -> d.putArray("server_ids"));
    want.put("bad server ids", PlacementException.Reason.INVALID_JSON);
    changes.put("negative version", d -> d.put("version", -1));
    want.put("negative version", PlacementException.Reason.INVALID_SNAPSHOT);
    changes.put("version as text", d -> d.put("version", "7"));
    want.put("version as text", PlacementException.Reason.INVALID_JSON);
    changes.forEach(
        (name, change) -> {
          ObjectNode doc = okDoc();
          change.accept(doc);
          assertEquals(want.get(name), parseRefusal(VectorFiles.bytes(doc)), name);
        });
    assertEquals(
        PlacementException.Reason.INVALID_JSON,
        parseRefusal(
            ("{\"config\": {}, \"nodes\": [], \"fingerprint\": \"" + ZEROS + "\"} trailing")
                .getBytes(StandardCharsets.UTF_8)),
        "trailing data");
    assertEquals(
        PlacementException.Reason.INVALID_JSON,
        parseRefusal(
            "{\"config\": {\"algorithm\": \"chord\"}, \"nodes\": [], \"x\": [1,}"
                .getBytes(StandardCharsets.UTF_8)),
        "malformed JSON is refused as such, before any field");
  }

  @Test
  void parseKeepsWhatPlaces() {
    ObjectNode doc = okDoc();
    doc.put("ring", "cache");
    doc.put("version", 12);
    doc.putArray("buckets").add("a").addNull().add("b");
    ObjectNode ids = doc.putObject("server_ids");
    ids.putObject("ids").put("a", 1).put("b", 4294967295L);
    ids.put("next", 4294967295L);
    doc.put("table_moves", "AQAAAAUAAAAAAgA=");
    doc.put("created_at", "2026-01-01T00:00:00Z");
    Snapshot s = Snapshot.parse(VectorFiles.bytes(doc));
    assertEquals("cache", s.ring());
    assertEquals(12, s.version());
    assertEquals(Algorithm.RING, s.algorithm());
    assertEquals(ZEROS, s.fingerprint());
    assertEquals(List.of(), s.nodes());
    assertEquals(
        List.of(new BucketRun("a", 1), new BucketRun(null, 1), new BucketRun("b", 1)), s.buckets());
    assertEquals(Map.of("a", 1, "b", -1), s.serverIds(), "u32s in ints");
    assertEquals(4294967295L, s.nextServerId());
    assertArrayEquals(movesOf(new int[] {5, 0, 2}), s.tableMoves());
    Snapshot bare = Snapshot.parse(VectorFiles.bytes(okDoc()));
    assertNull(bare.ring());
    assertNull(bare.buckets());
    assertNull(bare.serverIds());
    assertNull(bare.tableMoves());
  }

  @Test
  void aDoctoredFingerprintIsRefused() {
    RingConfig c = RingConfig.defaults(Algorithm.RING);
    List<Node> nodes = List.of(Node.of("a"), Node.of("b").withWeight(2));
    Placement built = Placement.build(c, nodes);
    char[] fp = built.fingerprint().toCharArray();
    fp[10] = fp[10] == '0' ? '1' : '0';
    String doctored = new String(fp);
    Snapshot s = Snapshot.of("r", 2, c, nodes, doctored, null, null, 0, null);
    FingerprintMismatchException e =
        assertThrows(FingerprintMismatchException.class, () -> s.placement(TableSource.none()));
    assertEquals(doctored, e.expected());
    assertEquals(built.fingerprint(), e.actual());
    FingerprintMismatchException d =
        assertThrows(
            FingerprintMismatchException.class, () -> Placement.decode(built.encode(), doctored));
    assertEquals(built.fingerprint(), d.actual());
    // A changed node set gives another fingerprint: the snapshot's own is then refused.
    Snapshot changed =
        Snapshot.of("r", 2, c, List.of(Node.of("a")), built.fingerprint(), null, null, 0, null);
    assertThrows(FingerprintMismatchException.class, () -> changed.placement(TableSource.none()));
  }
}
