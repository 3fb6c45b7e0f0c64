package io.github.ringd.placement;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Reads configs, nodes and jump bucket orders from their JSON form (snapshots, vector files).
 * Fields this reader does not know are ignored: a snapshot's config carries {@code membership} and
 * its nodes {@code labels}, which place nothing, and whatever else places keys is in the encoding,
 * so the fingerprint check covers it. Every method throws {@link PlacementException} on bad input.
 */
public final class PlacementJson {
  private PlacementJson() {}

  /**
   * A ring config from its JSON form (spec 2.1): any subset of the eleven fields, the others at
   * their defaults (the hash's default depends on the algorithm actually chosen). Errors follow
   * check 0, then check 1, of spec 2.4.
   */
  public static RingConfig config(byte[] json) {
    return JsonRead.document(json, "config", PlacementJson::config);
  }

  /** A node from its JSON form; absent and null fields take their defaults. */
  public static Node node(byte[] json) {
    return JsonRead.document(json, "node", PlacementJson::node);
  }

  /** A JSON array of nodes; the first bad node in input order is reported (2.4 check 0). */
  public static List<Node> nodes(byte[] json) {
    return JsonRead.document(json, "nodes", PlacementJson::nodes);
  }

  /**
   * A jump bucket order as JSON carries it: one node id or null (a hole) per bucket, as snapshots
   * and vector files write it, or [id or null, count] runs. Consecutive buckets merge into runs.
   */
  public static List<BucketRun> buckets(byte[] json) {
    return JsonRead.document(json, "buckets", PlacementJson::buckets);
  }

  private static final class ConfigFields {
    Algorithm algorithm = Algorithm.RING;
    HashFunction hash;
    long vnodes = RingConfig.DEFAULT_VNODES_PER_WEIGHT;
    long replication = RingConfig.DEFAULT_REPLICATION_FACTOR;
    long partitions = RingConfig.DEFAULT_PARTITIONS;
    long tableSize = RingConfig.DEFAULT_TABLE_SIZE;
    long minRing = RingConfig.DEFAULT_MINIMUM_RING_SIZE;
    long maxRing = RingConfig.DEFAULT_MAXIMUM_RING_SIZE;
    boolean zoneAware;
    Boolean avalanche;
    String hashTag;
  }

  static RingConfig config(JsonParser p) throws IOException {
    ConfigFields f = new ConfigFields();
    JsonRead.object(
        p,
        "config",
        (name, v) -> {
          switch (name) {
            case "algorithm" -> f.algorithm = Algorithm.parse(JsonRead.string(v, name));
            case "hash" -> f.hash = HashFunction.parse(JsonRead.string(v, name));
            case "vnodes_per_weight" -> f.vnodes = JsonRead.integer(v, name);
            case "replication_factor" -> f.replication = JsonRead.integer(v, name);
            case "partitions" -> f.partitions = JsonRead.integer(v, name);
            case "table_size" -> f.tableSize = JsonRead.integer(v, name);
            case "minimum_ring_size" -> f.minRing = JsonRead.integer(v, name);
            case "maximum_ring_size" -> f.maxRing = JsonRead.integer(v, name);
            case "zone_aware" -> f.zoneAware = JsonRead.bool(v, name);
            case "avalanche" -> f.avalanche = JsonRead.bool(v, name);
            case "hash_tag" -> {
              f.hashTag = JsonRead.string(v, name);
              RingConfig.checkHashTag(f.hashTag); // "" included: a tag is two characters
            }
            default -> {} // places nothing (membership), or unknown: ignored
          }
        });
    RingConfig c =
        RingConfig.builder(f.algorithm)
            .hash(f.hash != null ? f.hash : f.algorithm.defaultHash())
            .avalanche(f.avalanche != null ? f.avalanche : f.algorithm == Algorithm.HAPROXY)
            .vnodesPerWeight(JsonRead.clamp(f.vnodes))
            .replicationFactor(JsonRead.clamp(f.replication))
            .partitions(JsonRead.clamp(f.partitions))
            .tableSize(JsonRead.clamp(f.tableSize))
            .minimumRingSize(JsonRead.clamp(f.minRing))
            .maximumRingSize(JsonRead.clamp(f.maxRing))
            .zoneAware(f.zoneAware)
            .hashTag(f.hashTag)
            .build();
    // Check 0's ranges first, in their order; then check 1.
    c.checkCounts();
    c.validate();
    return c;
  }

  private static final class NodeFields {
    String id = "";
    String hashKey;
    String zone;
    long weight = 1;
    long ramp = Node.FULL_RAMP;
    NodeState state = NodeState.ACTIVE;
    String address;
  }

  static Node node(JsonParser p) throws IOException {
    NodeFields f = new NodeFields();
    JsonRead.object(
        p,
        "node",
        (name, v) -> {
          switch (name) {
            case "id" -> {
              f.id = JsonRead.string(v, "id");
              Node.checkId(f.id);
            }
            case "hash_key" -> {
              f.hashKey = JsonRead.string(v, "hash_key");
              Node.checkHashKey(f.hashKey);
            }
            case "zone" -> {
              f.zone = JsonRead.string(v, "zone");
              Node.checkZone(f.zone);
            }
            case "weight" -> {
              f.weight = JsonRead.integer(v, "weight");
              Node.checkWeight(f.weight);
            }
            case "ramp" -> {
              f.ramp = JsonRead.integer(v, "ramp");
              Node.checkRamp(f.ramp);
            }
            case "state" -> f.state = NodeState.parse(JsonRead.string(v, "state"));
            case "address" -> {
              f.address = JsonRead.string(v, "address");
              Node.checkAddress(f.address);
            }
            default -> {} // labels, health: place nothing
          }
        });
    if (f.id.isEmpty()) {
      throw new PlacementException(PlacementException.Reason.EMPTY_NODE_ID, "a node needs an id");
    }
    return new Node(f.id, f.hashKey, (int) f.weight, f.zone, f.state, (int) f.ramp, f.address);
  }

  static List<Node> nodes(JsonParser p) throws IOException {
    if (p.currentToken() != JsonToken.START_ARRAY) {
      throw JsonRead.invalid("nodes must be a JSON array of objects");
    }
    List<Node> nodes = new ArrayList<>();
    while (p.nextToken() != JsonToken.END_ARRAY) {
      nodes.add(node(p));
    }
    return nodes;
  }

  static List<BucketRun> buckets(JsonParser p) throws IOException {
    if (p.currentToken() != JsonToken.START_ARRAY) {
      throw JsonRead.invalid("a bucket order must be a JSON array");
    }
    List<BucketRun> runs = new ArrayList<>();
    JsonToken t;
    while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
      if (t == JsonToken.VALUE_NULL || t == JsonToken.VALUE_STRING) {
        push(runs, bucketOwner(p, "a bucket names the empty id"), 1);
        continue;
      }
      if (t != JsonToken.START_ARRAY) {
        throw badOrder("not a bucket or a run");
      }
      JsonToken owner = p.nextToken();
      if (owner != JsonToken.VALUE_NULL && owner != JsonToken.VALUE_STRING) {
        throw badOrder("a run's owner must be an id or null");
      }
      String id = bucketOwner(p, "a run's owner must be an id or null");
      if (p.nextToken() != JsonToken.VALUE_NUMBER_INT) {
        throw badOrder("a run is [id or null, count]");
      }
      long count = JsonRead.integer(p, "a run's count");
      if (count < 1 || count > RingConfig.MAX_POINTS) {
        throw badOrder("a run's count must be 1..=" + RingConfig.MAX_POINTS);
      }
      if (p.nextToken() != JsonToken.END_ARRAY) {
        throw badOrder("a run is [id or null, count]");
      }
      push(runs, id, (int) count);
    }
    return runs;
  }

  private static String bucketOwner(JsonParser p, String emptyMessage) throws IOException {
    if (p.currentToken() == JsonToken.VALUE_NULL) {
      return null;
    }
    String id = p.getText();
    if (id.isEmpty()) {
      throw badOrder(emptyMessage);
    }
    return id;
  }

  /**
   * Appends a run, merged into the last when it has the same owner. A run past the cap is not
   * merged further, so that counts cannot overflow before restoring refuses the order.
   */
  private static void push(List<BucketRun> runs, String id, int count) {
    int k = runs.size() - 1;
    if (k >= 0
        && Objects.equals(runs.get(k).id(), id)
        && runs.get(k).count() <= RingConfig.MAX_POINTS) {
      runs.set(k, new BucketRun(id, runs.get(k).count() + count));
      return;
    }
    runs.add(new BucketRun(id, count));
  }

  private static PlacementException badOrder(String message) {
    return new PlacementException(PlacementException.Reason.INVALID_BUCKET_ORDER, message);
  }
}
