package io.github.ringd.placement;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * One ring version as {@code GET /v1/rings/{ring}/snapshot}, {@code …/snapshots/{v}} and the watch
 * events carry it (docs/api.md), read for placement: fields that place nothing (created_at, change,
 * a config's membership, a node's labels) are not kept. Parsing checks what the JSON holds; {@link
 * #placement(TableSource)} rebuilds the placement and verifies its fingerprint.
 */
public final class Snapshot {
  private @Nullable String ring;
  private long version;
  private RingConfig config;
  private List<Node> nodes;
  private String fingerprint;
  private @Nullable List<BucketRun> buckets;
  private @Nullable Map<String, Integer> serverIds;
  private long nextServerId;
  private byte @Nullable [] tableMoves;

  private Snapshot() {}

  /** A snapshot from its parts, as parsing would give it; for tests and tools. */
  static Snapshot of(
      @Nullable String ring,
      long version,
      RingConfig config,
      List<Node> nodes,
      String fingerprint,
      @Nullable List<BucketRun> buckets,
      @Nullable Map<String, Integer> serverIds,
      long nextServerId,
      byte @Nullable [] tableMoves) {
    Snapshot s = new Snapshot();
    s.ring = ring;
    s.version = version;
    s.config = config;
    s.nodes = List.copyOf(nodes);
    s.fingerprint = fingerprint;
    s.buckets = buckets == null ? null : List.copyOf(buckets);
    s.serverIds = serverIds == null ? null : Map.copyOf(serverIds);
    s.nextServerId = nextServerId;
    s.tableMoves = tableMoves == null ? null : tableMoves.clone();
    return s;
  }

  /**
   * Reads a snapshot's JSON (a SnapshotView).
   *
   * @throws PlacementException of reason INVALID_JSON for malformed JSON or a field of the wrong
   *     type, INVALID_SNAPSHOT without config, nodes and fingerprint, or the reason of the first
   *     bad config or node field
   */
  public static Snapshot parse(byte[] json) {
    return JsonRead.document(json, "snapshot", Snapshot::read);
  }

  private static Snapshot read(JsonParser p) throws IOException {
    Snapshot s = new Snapshot();
    JsonRead.object(
        p,
        "snapshot",
        (name, v) -> {
          switch (name) {
            case "ring" -> s.ring = JsonRead.string(v, "ring");
            case "version" -> {
              s.version = JsonRead.integer(v, "version");
              if (s.version < 0) {
                throw new PlacementException(
                    PlacementException.Reason.INVALID_SNAPSHOT, "version " + s.version);
              }
            }
            case "config" -> s.config = PlacementJson.config(v);
            case "nodes" -> s.nodes = List.copyOf(PlacementJson.nodes(v));
            case "fingerprint" -> {
              s.fingerprint = JsonRead.string(v, "fingerprint");
              if (!isFingerprint(s.fingerprint)) {
                throw new PlacementException(
                    PlacementException.Reason.INVALID_SNAPSHOT,
                    "fingerprint \""
                        + Strings.excerpt(s.fingerprint)
                        + "\" is not 64 lowercase hex digits");
              }
            }
            case "buckets" -> s.buckets = List.copyOf(PlacementJson.buckets(v));
            case "server_ids" -> s.readServerIds(v);
            case "table_moves" -> s.tableMoves = base64(JsonRead.string(v, "table_moves"));
            default -> {} // created_at, change, …: place nothing
          }
        });
    if (s.config == null || s.nodes == null || s.fingerprint == null || s.fingerprint.isEmpty()) {
      throw new PlacementException(
          PlacementException.Reason.INVALID_SNAPSHOT,
          "a snapshot needs config, nodes and fingerprint");
    }
    return s;
  }

  /** Reads {"ids": {node: id}, "next": id}; other members are ignored. */
  private void readServerIds(JsonParser p) throws IOException {
    if (p.currentToken() != JsonToken.START_OBJECT) {
      throw serverIdsShape();
    }
    Map<String, Integer> ids = null;
    long next = 0;
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String name = p.currentName();
      JsonToken t = p.nextToken();
      if ("ids".equals(name) && t != JsonToken.VALUE_NULL) {
        if (t != JsonToken.START_OBJECT) {
          throw serverIdsShape();
        }
        ids = new HashMap<>();
        while (p.nextToken() == JsonToken.FIELD_NAME) {
          String node = p.currentName();
          if (p.nextToken() != JsonToken.VALUE_NUMBER_INT) {
            throw serverIdsShape();
          }
          long id = JsonRead.integer(p, "a server id");
          if (id < 0 || id > 0xFFFFFFFFL) {
            throw new PlacementException(
                PlacementException.Reason.INVALID_SERVER_IDS,
                "node " + Strings.excerpt(node) + " has server id " + id);
          }
          ids.put(
              node, (int) id); // a u32: ids above 2^31 − 1 read back with Integer.toUnsignedLong
        }
      } else if ("next".equals(name) && t != JsonToken.VALUE_NULL) {
        if (t != JsonToken.VALUE_NUMBER_INT) {
          throw serverIdsShape();
        }
        next = JsonRead.integer(p, "next");
      } else {
        p.skipChildren();
      }
    }
    if (ids == null) {
      throw serverIdsShape();
    }
    if (next < 0 || next > 0xFFFFFFFFL) {
      throw new PlacementException(
          PlacementException.Reason.INVALID_SERVER_IDS, "next " + next + " is not a u32");
    }
    serverIds = Map.copyOf(ids);
    nextServerId = next;
  }

  private static PlacementException serverIdsShape() {
    return JsonRead.invalid("server_ids must be {\"ids\": {node: id}, \"next\": id}");
  }

  /** Standard base64 with padding, nothing else: the canonical text of its bytes. */
  private static byte[] base64(String text) {
    try {
      byte[] b = Base64.getDecoder().decode(text);
      if (text.length() % 4 == 0 && Base64.getEncoder().encodeToString(b).equals(text)) {
        return b;
      }
    } catch (IllegalArgumentException e) {
      // Refused below.
    }
    throw new PlacementException(
        PlacementException.Reason.INVALID_TABLE, "table_moves is not standard base64");
  }

  private static boolean isFingerprint(String s) {
    if (s.length() != 64) {
      return false;
    }
    for (int i = 0; i < 64; i++) {
      char c = s.charAt(i);
      if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
        return false;
      }
    }
    return true;
  }

  /** The ring's name, null when the document does not say. */
  public @Nullable String ring() {
    return ring;
  }

  /** The version's number, 1 at creation. */
  public long version() {
    return version;
  }

  /** The config's algorithm. */
  public Algorithm algorithm() {
    return config.algorithm();
  }

  /** The SHA-256 of the placement's canonical encoding, which a rebuilt placement must match. */
  public String fingerprint() {
    return fingerprint;
  }

  /** The ring config. */
  public RingConfig config() {
    return config;
  }

  /** Every node, in any state. */
  public List<Node> nodes() {
    return nodes;
  }

  /** jump's persisted bucket order; null when absent. */
  public @Nullable List<BucketRun> buckets() {
    return buckets;
  }

  /** Every node's haproxy server id (u32s in ints); null when absent. */
  public @Nullable Map<String, Integer> serverIds() {
    return serverIds;
  }

  /** Above every server id the ring has given (haproxy). */
  public long nextServerId() {
    return nextServerId;
  }

  /** The table slots changed since version − 1 (9.4), decoded from base64; null when absent. */
  public byte @Nullable [] tableMoves() {
    return tableMoves == null ? null : tableMoves.clone();
  }

  /**
   * Rebuilds the snapshot's placement and verifies it.
   *
   * @throws FingerprintMismatchException unless it hashes to the snapshot's fingerprint
   * @throws PlacementException of reason TABLE_REQUIRED for a table snapshot with active nodes and
   *     no table source, or the refusal of the config, nodes or stored state
   */
  public Placement placement(TableSource source) {
    Stored stored = Stored.NONE.withBuckets(buckets);
    Placement p =
        switch (config.algorithm()) {
          case HAPROXY -> {
            checkServerIds();
            yield Placement.build(config, nodes, stored.withServerIds(serverIds));
          }
          case TABLE -> tablePlacement(source);
          default -> Placement.build(config, nodes, stored);
        };
    if (!p.fingerprint().equals(fingerprint)) {
      throw new FingerprintMismatchException(fingerprint, p.fingerprint());
    }
    return p.withVersion(version);
  }

  /**
   * Checks stored ids against the version's nodes (5.8.3): every node has one, no two share one,
   * all run from 1 to below next.
   */
  private void checkServerIds() {
    if (serverIds == null) {
      throw new PlacementException(
          PlacementException.Reason.INVALID_SERVER_IDS, "the snapshot carries no server ids");
    }
    if (serverIds.size() != nodes.size()) {
      throw namesOtherNodes();
    }
    Set<Integer> seen = new HashSet<>();
    for (Node n : nodes) {
      Integer id = serverIds.get(n.id());
      if (id == null) {
        throw namesOtherNodes();
      }
      if (!seen.add(id)) {
        throw new PlacementException(
            PlacementException.Reason.INVALID_SERVER_IDS, "two nodes share server id " + id);
      }
      long u = Integer.toUnsignedLong(id);
      if (u == 0 || u >= nextServerId) {
        throw new PlacementException(
            PlacementException.Reason.INVALID_SERVER_IDS,
            "server ids must run from 1 to below next (" + nextServerId + ")");
      }
    }
  }

  private static PlacementException namesOtherNodes() {
    return new PlacementException(
        PlacementException.Reason.INVALID_SERVER_IDS,
        "the ids do not name exactly the ring's nodes");
  }

  private Placement tablePlacement(TableSource source) {
    boolean anyActive = false;
    for (Node n : nodes) {
      anyActive = anyActive || n.state() == NodeState.ACTIVE;
    }
    byte[] encoding = source.encodingUnsafe();
    Placement previous = source.previousPlacement();
    if (!anyActive) {
      // Every row is empty (r = 0): nothing to fetch.
      return Placement.build(config, nodes, Stored.NONE);
    }
    if (encoding != null) {
      return fromTableEncoding(encoding);
    }
    if (previous != null && tableMoves != null) {
      return fromMoves(previous);
    }
    throw new PlacementException(
        PlacementException.Reason.TABLE_REQUIRED,
        "the snapshot of version "
            + version
            + " carries no table: download …/snapshots/"
            + version
            + "/table or apply its moves");
  }

  /**
   * Restores the table from the downloaded encoding's body (5.6.3); the fingerprint check then
   * covers the whole encoding.
   */
  private Placement fromTableEncoding(byte[] encoding) {
    config.validate();
    List<Node> active = NodeSet.normalize(config, nodes);
    int start =
        Encoding.headerLength(
            Algorithm.TABLE,
            config.hash(),
            config.zoneAware(),
            config.replicationFactor(),
            active,
            NodeSet.isRamped(active));
    if (encoding.length < start) {
      throw new PlacementException(
          PlacementException.Reason.INVALID_TABLE, "the encoding ends before its table");
    }
    byte[] body = java.util.Arrays.copyOfRange(encoding, start, encoding.length);
    return Placement.build(config, nodes, Stored.NONE.withTableBody(body));
  }

  /**
   * Version v's table from version v − 1's placement and v's table_moves (9.4): a u32 count, then
   * per move a u32 partition, a u8 slot and the node's index among v's active nodes.
   */
  private Placement fromMoves(Placement previous) {
    if (previous.version() != 0 && version != previous.version() + 1) {
      throw new PlacementException(
          PlacementException.Reason.INVALID_TABLE,
          "moves to version "
              + version
              + " apply to version "
              + (version - 1)
              + ", not "
              + previous.version());
    }
    config.validate();
    List<Node> active = NodeSet.normalize(config, nodes);
    List<List<String>> rows = applyMoves(previous, active);
    return Placement.build(config, nodes, Stored.NONE.withTableRows(rows));
  }

  private List<List<String>> applyMoves(Placement previous, List<Node> active) {
    return TableMoves.apply(
        previous, active, config.partitions(), config.replicationFactor(), tableMoves);
  }

  @Override
  public String toString() {
    return "Snapshot{ring="
        + ring
        + ", version "
        + version
        + ", "
        + config.algorithm()
        + ", "
        + nodes.size()
        + " nodes, fingerprint "
        + fingerprint
        + "}";
  }
}
