package io.github.ringd.placement;

import static io.github.ringd.placement.ProxyFixtures.utf8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** table (spec 5.6, 9.3, 9.4): partitions, restoring a stored table, the body and the moves. */
class TableLayoutTest {
  private static final RingConfig TABLE_256 =
      RingConfig.builder(Algorithm.TABLE).partitions(256).build();

  private static List<List<String>> rows(int partitions, String... row) {
    return Collections.nCopies(partitions, List.of(row));
  }

  @Test
  void specExample() {
    Placement p =
        Placement.build(
            TABLE_256,
            List.of(Node.of("cache-a")),
            Stored.NONE.withTableRows(rows(256, "cache-a")));
    // 5.6.1: "hello" falls in partition 0x95 = 149, "" in 0x2d = 45 (the top 8 bits).
    TableLayout l = (TableLayout) p.layout();
    assertEquals(256, l.partitions());
    assertEquals(1, l.replicas());
    assertEquals(0x9555e8555c62dcfdL, p.keyHash(utf8("hello")));
    // 9.3: the 33-byte header, then 00010000 01 and 256 × 0000: 550 bytes.
    byte[] enc = p.encode();
    assertEquals(550, enc.length);
    assertEquals(
        "52494e4744504c01060100000300000001000000" + "0763616368652d610001000000" + "0001000001",
        HexFormat.of().formatHex(enc, 0, 38));
    assertEquals(
        "2c3c5cda3a57b7ee3781d676fdf8fc8ccfa3729fb44c88c3f7b33acd1f97632d", p.fingerprint());
    assertEquals("cache-a", p.owner(utf8("hello")));
    assertEquals(List.of("cache-a"), p.preferenceList(utf8("hello"), 3));
    // With no active node (default partitions) the encoding is 25 bytes, and nothing is owned.
    Placement empty = Placement.build(RingConfig.defaults(Algorithm.TABLE), List.of());
    assertEquals(
        "52494e4744504c01060100000300000000000000" + "0000010000",
        HexFormat.of().formatHex(empty.encode()));
    assertNull(empty.owner(utf8("x")));
    assertEquals(List.of(), empty.preferenceList(utf8("x"), 5));
    assertEquals("0", empty.ownership().totalUnits().toString());
  }

  @Test
  void partitionIsTheTopBits() {
    // With P = 65,536 "hello" and "" fall in 0x9555 and 0x2d06 (5.6.1): rows naming a node by
    // partition show which row a key reads.
    List<Node> nodes = List.of(Node.of("a"), Node.of("b"), Node.of("c"));
    RingConfig c = RingConfig.builder(Algorithm.TABLE).replicationFactor(1).build();
    List<List<String>> r = new ArrayList<>();
    for (int p = 0; p < 65_536; p++) {
      r.add(List.of(p == 0x9555 ? "b" : p == 0x2d06 ? "c" : "a"));
    }
    Placement t = Placement.build(c, nodes, Stored.NONE.withTableRows(r));
    assertEquals("b", t.owner(utf8("hello")));
    assertEquals("c", t.owner(utf8("")));
    assertEquals("a", t.owner(utf8("user:42")));
  }

  @Test
  void preferenceListsWalkTheFollowingRows() {
    // 6.2: rows p, p+1, p+2 = [a, b], [c, a], [b, d] give, for R = 4, [a, b, c, d]. "hello" is in
    // partition 149 of 256.
    List<Node> nodes = List.of(Node.of("a"), Node.of("b"), Node.of("c"), Node.of("d"));
    RingConfig c = TABLE_256.toBuilder().replicationFactor(2).build();
    List<List<String>> r = new ArrayList<>(rows(256, "d", "c"));
    r.set(149, List.of("a", "b"));
    r.set(150, List.of("c", "a"));
    r.set(151, List.of("b", "d"));
    Placement p = Placement.build(c, nodes, Stored.NONE.withTableRows(r));
    assertEquals(List.of("a", "b", "c", "d"), p.preferenceList(utf8("hello"), 4));
    assertEquals(List.of("a", "b"), p.preferenceList(utf8("hello"), 2));
    // The walk wraps past the last row: partition 255's row, then 0's.
    r.set(255, List.of("b", "a"));
    r.set(0, List.of("c", "a"));
    Placement w = Placement.build(c, nodes, Stored.NONE.withTableRows(r));
    TableLayout l = (TableLayout) w.layout();
    List<Integer> walked = new ArrayList<>();
    l.walk(
        -1L,
        n -> {
          walked.add(n);
          return walked.size() < 6;
        });
    assertEquals(List.of(1, 0, 2, 0, 3, 2), walked);
    // Units count primaries, replicas count every cell.
    Ownership o = p.ownership();
    assertEquals("partitions", o.basis());
    assertEquals("256", o.totalUnits().toString());
    assertEquals(List.of("1", "1", "1", "253"), ProxyFixtures.units(p));
    assertArrayEquals(
        new int[] {2, 2, 254, 254},
        o.nodes().stream().mapToInt(Ownership.NodeShare::replicas).toArray());
  }

  @Test
  void restoringRefusesWhatDoesNotFit() {
    List<Node> nodes = List.of(Node.of("a"), Node.of("b"));
    Map<String, Stored> cases = new LinkedHashMap<>();
    cases.put("twice in a row", Stored.NONE.withTableRows(rows(256, "a", "a")));
    cases.put("a stranger", Stored.NONE.withTableRows(rows(256, "a", "c")));
    cases.put("short rows", Stored.NONE.withTableRows(rows(256, "a")));
    cases.put("few rows", Stored.NONE.withTableRows(rows(10, "a", "b")));
    cases.put("short body", Stored.NONE.withTableBody(new byte[] {0, 1, 0, 0}));
    byte[] replicas1 = new byte[5 + 512];
    replicas1[1] = 1;
    replicas1[4] = 1;
    cases.put("wrong replicas", Stored.NONE.withTableBody(replicas1));
    byte[] count512 = new byte[5 + 2048];
    count512[1] = 2;
    count512[4] = 2;
    cases.put("wrong count", Stored.NONE.withTableBody(count512));
    byte[] longBody = new byte[5 + 1024 + 2];
    longBody[1] = 1;
    longBody[4] = 2;
    cases.put("a cell too many", Stored.NONE.withTableBody(longBody));
    byte[] stranger = new byte[5 + 1024];
    stranger[1] = 1;
    stranger[4] = 2;
    stranger[5 + 2] = 1;
    stranger[5 + 4] = 2; // partition 1's primary is node 2 of 2
    cases.put("an index past the nodes", Stored.NONE.withTableBody(stranger));
    cases.forEach(
        (name, stored) -> {
          PlacementException e =
              assertThrows(
                  PlacementException.class, () -> Placement.build(TABLE_256, nodes, stored), name);
          assertEquals(PlacementException.Reason.INVALID_TABLE, e.reason(), name + ": " + e);
        });
    PlacementException none =
        assertThrows(PlacementException.class, () -> Placement.build(TABLE_256, nodes));
    assertEquals(PlacementException.Reason.TABLE_REQUIRED, none.reason());
    // A good body, as rows would give it: partition p holds (p mod 2, 1 − p mod 2).
    byte[] body = new byte[5 + 1024];
    body[1] = 1;
    body[4] = 2;
    List<List<String>> r = new ArrayList<>();
    for (int p = 0; p < 256; p++) {
      body[5 + 4 * p] = (byte) (p % 2);
      body[5 + 4 * p + 2] = (byte) (1 - p % 2);
      r.add(p % 2 == 0 ? List.of("a", "b") : List.of("b", "a"));
    }
    Placement fromBody = Placement.build(TABLE_256, nodes, Stored.NONE.withTableBody(body));
    Placement fromRows = Placement.build(TABLE_256, nodes, Stored.NONE.withTableRows(r));
    assertEquals(fromRows.fingerprint(), fromBody.fingerprint());
    assertEquals(r, fromBody.tableRows());
  }

  @Test
  void indexWidth() {
    assertEquals(2, TableLayout.indexWidth(0));
    assertEquals(2, TableLayout.indexWidth(65_535));
    assertEquals(4, TableLayout.indexWidth(65_536));
  }

  @Test
  void decodeChecksTheBody() throws Exception {
    Placement p = VectorFiles.build(VectorFiles.read("table-murmur3-partitions.json"));
    byte[] enc = p.encode();
    Placement q = Placement.decode(enc, p.fingerprint());
    assertEquals(p.tableRows(), q.tableRows());
    assertEquals(512, ((TableLayout) q.layout()).partitions());
    for (byte[] k : ProxyFixtures.keys(100)) {
      assertEquals(p.preferenceList(k, 3), q.preferenceList(k, 3));
    }
    // The partition count is the body's: 512 read as 513 (not a power of two) is refused.
    int body = enc.length - 5 - 512 * 3 * 2;
    assertEquals(512, ByteReader.le32(enc, body));
    byte[] odd = enc.clone();
    odd[body] = 1;
    byte[] twice = enc.clone();
    twice[body + 5] = twice[body + 7];
    twice[body + 6] = twice[body + 8];
    for (byte[] b : List.of(odd, twice)) {
      String fp =
          HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256").digest(b));
      PlacementException e = assertThrows(PlacementException.class, () -> Placement.decode(b, fp));
      assertEquals(PlacementException.Reason.INVALID_ENCODING, e.reason());
    }
  }

  /** The moves (partition, slot, node index) with u16 indices (9.4). */
  private static byte[] moves(int[]... moves) {
    ByteBuffer b = ByteBuffer.allocate(4 + 7 * moves.length).order(ByteOrder.LITTLE_ENDIAN);
    b.putInt(moves.length);
    for (int[] m : moves) {
      b.putInt(m[0]).put((byte) m[1]).putShort((short) m[2]);
    }
    return b.array();
  }

  @Test
  void movesCutOrPadTheRows() {
    // Version v − 1: a, b at r = 2. Version v adds c, so r = 3: every row gets a third slot,
    // empty until a move fills it.
    List<Node> before = List.of(Node.of("a"), Node.of("b"));
    RingConfig c = RingConfig.builder(Algorithm.TABLE).partitions(256).build();
    Placement prev = Placement.build(c, before, Stored.NONE.withTableRows(rows(256, "a", "b")));
    List<Node> after = List.of(Node.of("a"), Node.of("b"), Node.of("c"));
    int[][] fill = new int[256][];
    for (int p = 0; p < 256; p++) {
      fill[p] = new int[] {p, 2, 2};
    }
    List<List<String>> grown = TableMoves.apply(prev, after, 256, 3, moves(fill));
    assertEquals(rows(256, "a", "b", "c"), grown);
    // One slot left empty is refused.
    int[][] short1 = java.util.Arrays.copyOf(fill, 255);
    PlacementException empty =
        assertThrows(
            PlacementException.class, () -> TableMoves.apply(prev, after, 256, 3, moves(short1)));
    assertEquals(PlacementException.Reason.INVALID_TABLE, empty.reason());
    assertEquals("InvalidTable: the moves leave partition 255 slot 2 empty", empty.getMessage());
    // Shrinking r cuts the rows to their primaries; with b alone, moves replace a's.
    List<Node> alone = List.of(Node.of("b"));
    int[][] toB = new int[128][];
    for (int p = 0; p < 128; p++) {
      toB[p] = new int[] {2 * p, 0, 0};
    }
    Placement mixed = Placement.build(c, before, Stored.NONE.withTableRows(alternate()));
    List<List<String>> cut = TableMoves.apply(mixed, alone, 256, 3, moves(toB));
    assertEquals(rows(256, "b"), cut);
    // Moves need the previous table's partition count and exactly their own length.
    assertEquals(
        PlacementException.Reason.INVALID_TABLE,
        assertThrows(PlacementException.class, () -> TableMoves.apply(prev, after, 512, 3, moves()))
            .reason());
    assertEquals(
        PlacementException.Reason.INVALID_TABLE,
        assertThrows(
                PlacementException.class,
                () -> TableMoves.apply(prev, after, 256, 3, new byte[] {1, 0, 0}))
            .reason());
    // The previous placement must be a table.
    Placement ring = Placement.build(RingConfig.defaults(Algorithm.RING), before);
    PlacementException notTable =
        assertThrows(
            PlacementException.class, () -> TableMoves.apply(ring, after, 256, 3, moves()));
    assertEquals("InvalidTable: the previous placement is not a table", notTable.getMessage());
  }

  /** Rows alternating [a, b] and [b, a]. */
  private static List<List<String>> alternate() {
    List<List<String>> r = new ArrayList<>();
    for (int p = 0; p < 256; p++) {
      r.add(p % 2 == 0 ? List.of("a", "b") : List.of("b", "a"));
    }
    return r;
  }
}
