package io.github.ringd.placement;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.function.Executable;

/**
 * Runs every file of tests/placement/vectors in place, as the Go, Python and Rust tests do. A file
 * this test does not recognise fails it, so that a new vector file cannot be skipped silently.
 */
class VectorsTest {
  private static final Set<String> VECTOR_FIELDS =
      Set.of(
          "algorithm",
          "shape",
          "config",
          "nodes",
          "buckets",
          "server_ids",
          "table",
          "fingerprint",
          "ownership",
          "lookups",
          "preference_lists");

  /** The check of the file at rel (slash-separated, relative to the vectors directory), or null. */
  private static Executable check(String rel, Path file) {
    return switch (rel) {
      case "hashes/twemproxy.json" -> () -> ReferenceChecks.twemproxyHashes(VectorFiles.read(file));
      case "reference/libketama.json" -> () -> ReferenceChecks.libketama(VectorFiles.read(file));
      case "reference/envoy-maglev.json" ->
          () -> ReferenceChecks.envoyMaglev(VectorFiles.read(file));
      case "reference/jump.json" -> () -> ReferenceChecks.jump(VectorFiles.read(file));
      default -> null;
    };
  }

  @TestFactory
  Stream<DynamicNode> everyVectorFile() throws IOException {
    Path dir = VectorFiles.dir();
    List<String> files = new ArrayList<>();
    try (Stream<Path> walk = Files.walk(dir)) {
      walk.filter(Files::isRegularFile)
          .forEach(f -> files.add(dir.relativize(f).toString().replace('\\', '/')));
    }
    files.sort(null);
    // 106 placement vectors, the twemproxy hashes and three reference files when this was
    // written; more may come, none may be left unchecked.
    assertTrue(files.size() >= 110, "found " + files.size() + " vector files in " + dir);
    List<DynamicNode> nodes = new ArrayList<>();
    for (String rel : files) {
      Path file = dir.resolve(rel);
      Executable c = check(rel, file);
      if (c != null) {
        nodes.add(DynamicTest.dynamicTest(rel, c));
      } else if (!rel.contains("/") && rel.endsWith(".json")) {
        nodes.add(placementVector(rel, file));
      } else {
        nodes.add(
            DynamicTest.dynamicTest(
                rel, () -> fail(rel + ": not a vector file this test recognises: add a check")));
      }
    }
    return nodes.stream();
  }

  /** Memoized per file: a placement is immutable, so the checks share it. */
  private static final class Loaded {
    final JsonNode v;
    private Placement built;

    Loaded(JsonNode v) {
      this.v = v;
    }

    synchronized Placement placement() {
      if (built == null) {
        built = VectorFiles.build(v);
      }
      return built;
    }
  }

  private static DynamicContainer placementVector(String rel, Path file) {
    JsonNode v = VectorFiles.read(file);
    Loaded l = new Loaded(v);
    return DynamicContainer.dynamicContainer(
        rel,
        Stream.of(
            DynamicTest.dynamicTest(
                "file",
                () -> {
                  VectorFiles.onlyFields(v, VECTOR_FIELDS, rel);
                  String want =
                      v.get("algorithm").asText() + "-" + v.get("shape").asText() + ".json";
                  assertEquals(want, rel, "the file's algorithm and shape");
                  assertEquals(v.get("algorithm").asText(), l.placement().algorithm().wireName());
                }),
            DynamicTest.dynamicTest(
                "fingerprint",
                () -> assertEquals(v.get("fingerprint").asText(), l.placement().fingerprint())),
            DynamicTest.dynamicTest("lookups", () -> checkLookups(l.placement(), v)),
            DynamicTest.dynamicTest(
                "preference_lists", () -> checkPreferenceLists(l.placement(), v)),
            DynamicTest.dynamicTest("ownership", () -> checkOwnership(l.placement(), v)),
            DynamicTest.dynamicTest("layout_inputs", () -> checkLayoutInputs(l.placement(), v)),
            DynamicTest.dynamicTest("thin_client", () -> checkThinClient(l.placement(), v)),
            DynamicTest.dynamicTest("snapshot", () -> checkSnapshot(l.placement(), v))));
  }

  static void checkLookups(Placement p, JsonNode v) {
    JsonNode lookups = v.get("lookups");
    assertTrue(lookups != null && lookups.size() > 0, "no lookups");
    List<String> bad = new ArrayList<>();
    for (JsonNode l : lookups) {
      String key = l.get("key").asText();
      byte[] bytes = VectorFiles.utf8(key);
      String hash = Long.toUnsignedString(p.keyHash(bytes));
      String owner = p.owner(bytes);
      String want = VectorFiles.present(l, "owner") ? l.get("owner").asText() : null;
      if (!hash.equals(l.get("hash").asText()) || !java.util.Objects.equals(owner, want)) {
        bad.add(
            "key "
                + key
                + ": hash "
                + hash
                + " owner "
                + owner
                + ", want "
                + l.get("hash").asText()
                + " "
                + want);
      }
      assertEquals(owner, p.owner(key), "owner(CharSequence) of " + key);
      int i = p.ownerIndex(bytes);
      assertEquals(owner, i < 0 ? null : p.nodeId(i), "ownerIndex of " + key);
    }
    assertTrue(
        bad.isEmpty(),
        bad.size()
            + " of "
            + lookups.size()
            + " lookups differ: "
            + bad.subList(0, Math.min(5, bad.size())));
  }

  static void checkPreferenceLists(Placement p, JsonNode v) {
    JsonNode lists = v.get("preference_lists");
    assertTrue(lists != null && lists.size() > 0, "no preference lists");
    List<String> bad = new ArrayList<>();
    for (JsonNode l : lists) {
      String key = l.get("key").asText();
      List<String> want = new ArrayList<>();
      l.get("replicas").forEach(r -> want.add(r.asText()));
      List<String> got = p.preferenceList(VectorFiles.utf8(key), p.replicationFactor());
      if (!got.equals(want)) {
        bad.add("key " + key + ": " + got + ", want " + want);
      }
      assertEquals(got, p.preferenceList(key, p.replicationFactor()), "CharSequence list");
    }
    assertTrue(
        bad.isEmpty(),
        bad.size()
            + " of "
            + lists.size()
            + " lists differ: "
            + bad.subList(0, Math.min(5, bad.size())));
  }

  static void checkOwnership(Placement p, JsonNode v) {
    Ownership o = p.ownership();
    JsonNode want = v.get("ownership");
    assertEquals(want.get("basis").asText(), o.basis());
    assertEquals(want.get("total_units").asText(), o.totalUnits().toString());
    // Floats compare exactly: the spec's recipe is normative (7).
    assertEquals(want.get("max_over_mean").asDouble(), o.maxOverMean());
    JsonNode nodes = want.get("nodes");
    assertEquals(nodes.size(), o.nodes().size(), "node count");
    boolean isTable = p.algorithm() == Algorithm.TABLE;
    for (int i = 0; i < nodes.size(); i++) {
      JsonNode w = nodes.get(i);
      Ownership.NodeShare n = o.nodes().get(i);
      String where = "node " + i;
      assertEquals(w.get("id").asText(), n.id(), where);
      assertEquals(w.get("units").asText(), n.units().toString(), where);
      assertEquals(w.get("share").asDouble(), n.share(), where);
      assertEquals(w.get("expected_share").asDouble(), n.expectedShare(), where);
      assertEquals(w.get("ratio").asDouble(), n.ratio(), where);
      assertEquals(isTable, VectorFiles.present(w, "replicas"), where + " replicas present");
      if (isTable) {
        assertEquals(w.get("replicas").asInt(), n.replicas(), where);
      }
    }
  }

  /** Reads back the stored state the file gives: jump's buckets, table's rows, haproxy's ids. */
  static void checkLayoutInputs(Placement p, JsonNode v) {
    List<BucketRun> order = p.bucketOrder();
    assertEquals(p.algorithm() == Algorithm.JUMP, VectorFiles.present(v, "buckets"), "buckets");
    if (order != null) {
      List<String> got = new ArrayList<>();
      for (BucketRun r : order) {
        for (int k = 0; k < r.count(); k++) {
          got.add(r.id());
        }
      }
      List<String> want = new ArrayList<>();
      v.get("buckets").forEach(b -> want.add(b.isNull() ? null : b.asText()));
      assertEquals(want, got, "bucket order");
    }
    List<List<String>> rows = p.tableRows();
    if (VectorFiles.present(v, "table")) {
      assertEquals(VectorFiles.rows(v.get("table")), rows, "table rows");
    } else {
      assertNull(rows, "table rows");
    }
    Map<String, Long> ids = p.serverIds();
    if (VectorFiles.present(v, "server_ids")) {
      Map<String, Long> want = new HashMap<>();
      v.get("server_ids").properties().forEach(e -> want.put(e.getKey(), e.getValue().asLong()));
      assertEquals(want, ids, "server ids");
    } else {
      assertNull(ids, "server ids");
    }
  }

  /** The encoding alone reproduces everything, and re-encodes to itself. */
  static void checkThinClient(Placement p, JsonNode v) {
    String fingerprint = v.get("fingerprint").asText();
    Placement q = Placement.decode(p.encode(), fingerprint);
    assertArrayEquals(p.encode(), q.encode());
    assertEquals(fingerprint, q.fingerprint());
    checkLookups(q, v);
    checkPreferenceLists(q, v);
    checkOwnership(q, v);
  }

  /**
   * Builds the placement from the file as {@code GET …/snapshot} would send it, and checks that a
   * wrong fingerprint is refused.
   */
  static void checkSnapshot(Placement built, JsonNode v) {
    ObjectNode config = v.get("config").deepCopy();
    config.putObject("membership").put("mode", "manual"); // places nothing: ignored
    ObjectNode doc = VectorFiles.JSON.createObjectNode();
    doc.put("ring", "vectors");
    doc.put("version", 7);
    doc.set("config", config);
    doc.set("nodes", v.get("nodes"));
    doc.put("created_at", "2026-01-01T00:00:00Z");
    doc.putObject("change");
    if (VectorFiles.present(v, "buckets")) {
      doc.set("buckets", v.get("buckets"));
    }
    if (VectorFiles.present(v, "server_ids")) {
      // A snapshot's ids name every node, active or not (the file's only the active ones), and
      // next is above them all.
      ObjectNode ids = VectorFiles.JSON.createObjectNode();
      long next = 1;
      for (var e : v.get("server_ids").properties()) {
        ids.put(e.getKey(), e.getValue().asLong());
        next = Math.max(next, e.getValue().asLong() + 1);
      }
      for (Node n : VectorFiles.inputs(v).nodes()) {
        if (!ids.has(n.id())) {
          ids.put(n.id(), next++);
        }
      }
      ObjectNode serverIds = doc.putObject("server_ids");
      serverIds.set("ids", ids);
      serverIds.put("next", next);
    }
    TableSource src =
        built.algorithm() == Algorithm.TABLE
            ? TableSource.encoding(built.encode()) // the download of …/snapshots/{v}/table
            : TableSource.none();
    String fingerprint = v.get("fingerprint").asText();
    doc.put("fingerprint", "0".repeat(64));
    Snapshot doctored = Snapshot.parse(VectorFiles.bytes(doc));
    FingerprintMismatchException e =
        assertThrows(FingerprintMismatchException.class, () -> doctored.placement(src));
    assertEquals(fingerprint, e.actual());
    assertEquals(PlacementException.Reason.FINGERPRINT_MISMATCH, e.reason());
    doc.put("fingerprint", fingerprint);
    Snapshot s = Snapshot.parse(VectorFiles.bytes(doc));
    Placement p = s.placement(src);
    assertEquals(fingerprint, p.fingerprint());
    assertEquals(7, p.version());
    assertEquals("vectors", s.ring());
    checkLookups(p, v);
  }
}
