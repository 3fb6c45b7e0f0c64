package io.github.ringd.placement;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/** The shared placement vectors (tests/placement/vectors), read in place. */
final class VectorFiles {
  private VectorFiles() {}

  static final ObjectMapper JSON = new ObjectMapper();

  /** The vectors directory, from the ringd.root system property the build sets. */
  static Path dir() {
    String root = System.getProperty("ringd.root");
    if (root == null) {
      throw new IllegalStateException("the ringd.root system property is not set");
    }
    return Path.of(root).toAbsolutePath().normalize().resolve("tests/placement/vectors");
  }

  static JsonNode read(Path file) {
    try {
      return JSON.readTree(Files.readAllBytes(file));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static JsonNode read(String name) {
    return read(dir().resolve(name));
  }

  static byte[] bytes(JsonNode n) {
    try {
      return JSON.writeValueAsBytes(n);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** Fails unless every member of o is one of known: a new field needs a check. */
  static void onlyFields(JsonNode o, Set<String> known, String where) {
    Iterator<String> names = o.fieldNames();
    while (names.hasNext()) {
      String name = names.next();
      if (!known.contains(name)) {
        throw new AssertionError(
            where + ": unknown field `" + name + "` (a new field needs a check in this test)");
      }
    }
  }

  static boolean present(JsonNode o, String field) {
    return o.has(field) && !o.get(field).isNull();
  }

  /** A placement vector's inputs: config, nodes and stored state. */
  record Inputs(RingConfig config, List<Node> nodes, Stored stored) {}

  static Inputs inputs(JsonNode v) {
    RingConfig c = PlacementJson.config(bytes(v.get("config")));
    List<Node> nodes = PlacementJson.nodes(bytes(v.get("nodes")));
    Stored stored = Stored.NONE;
    if (present(v, "buckets")) {
      stored = stored.withBuckets(PlacementJson.buckets(bytes(v.get("buckets"))));
    }
    if (present(v, "server_ids")) {
      Map<String, Integer> ids = new TreeMap<>();
      v.get("server_ids").properties().forEach(e -> ids.put(e.getKey(), e.getValue().intValue()));
      stored = stored.withServerIds(ids);
    }
    if (present(v, "table")) {
      stored = stored.withTableRows(rows(v.get("table")));
    }
    return new Inputs(c, nodes, stored);
  }

  static List<List<String>> rows(JsonNode table) {
    List<List<String>> rows = new ArrayList<>();
    for (JsonNode row : table) {
      List<String> r = new ArrayList<>();
      row.forEach(id -> r.add(id.asText()));
      rows.add(r);
    }
    return rows;
  }

  static Placement build(JsonNode v) {
    Inputs in = inputs(v);
    return Placement.build(in.config(), in.nodes(), in.stored());
  }
}
