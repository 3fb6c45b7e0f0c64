package io.github.ringd.benchmarks;

import com.dynatrace.hash4j.consistent.ConsistentBucketHasher;
import com.dynatrace.hash4j.consistent.ConsistentBucketSetHasher;
import io.github.ringd.placement.Algorithm;
import io.github.ringd.placement.Placement;
import java.util.concurrent.TimeUnit;
import net.spy.memcached.KetamaNodeLocator;
import net.spy.memcached.MemcachedNode;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The time to name a key's owner: ringd's placements against spymemcached's ketama locator, Guava's
 * {@code Hashing.consistentHash} and hash4j's consistent bucket hashers, over the same nodes and
 * keys. Each call takes the next key of a fixed set (random, 16 bytes, a fixed seed), so the set's
 * size decides whether the structure stays in cache; every contender returns the owner's node id,
 * the bucket hashers through an array of ids.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class OwnerLookup {

  /** The nodes and keys every contender shares; a subclass adds its structure. */
  @State(Scope.Thread)
  public abstract static class Keys {
    /** How many nodes, each of weight 1. */
    @Param({"10", "100", "1000"})
    public int nodes;

    /** How many distinct keys the calls cycle through (a power of two). */
    @Param({"1024", "16384"})
    public int keys;

    byte[][] keyBytes = new byte[0][];
    String[] keyStrings = new String[0];
    String[] ids = new String[0];
    private int mask;
    private int next;

    /** Draws the keys and builds the contender. */
    @Setup(Level.Trial)
    public void setUp() {
      mask = Fixtures.checkPowerOfTwo(keys) - 1;
      keyBytes = Fixtures.keys(keys);
      keyStrings = Fixtures.strings(keyBytes);
      ids = Fixtures.nodeIds(nodes);
      build();
    }

    /** Builds the structure under test over {@link #nodes} nodes. */
    abstract void build();

    /** The next key's index, wrapping over the set. */
    final int nextIndex() {
      int i = next;
      next = (i + 1) & mask;
      return i;
    }

    /** The owner's node id for key {@code i}, the way the contender names it. */
    abstract String owner(int i);
  }

  /** ringd's placement under one of its algorithms (each at its defaults). */
  public static class Ringd extends Keys {
    /** The algorithm's wire name. */
    @Param({"ring", "table", "ketama", "maglev", "jump", "rendezvous"})
    public String algorithm = "ring";

    Placement placement = null;

    @Override
    void build() {
      placement = Contenders.ringd(Algorithm.parse(algorithm), nodes);
    }

    @Override
    String owner(int i) {
      return placement.owner(keyBytes[i]);
    }
  }

  /** spymemcached's {@code KetamaNodeLocator} (MD5, 160 points a node). */
  public static class SpymemcachedKetama extends Keys {
    KetamaNodeLocator locator = null;

    @Override
    void build() {
      locator = Contenders.spymemcachedKetama(nodes);
    }

    @Override
    String owner(int i) {
      MemcachedNode node = locator.getPrimary(keyStrings[i]);
      return node.toString();
    }
  }

  /** Guava's {@code Hashing.consistentHash} over the key's XXH3. */
  public static class Guava extends Keys {
    @Override
    void build() {}

    @Override
    String owner(int i) {
      long hash = Contenders.KEY_HASH.hashBytesToLong(keyBytes[i]);
      return ids[com.google.common.hash.Hashing.consistentHash(hash, nodes)];
    }
  }

  /** One of hash4j's stateless consistent bucket hashers over the key's XXH3. */
  public static class Hash4j extends Keys {
    /** Which hasher. */
    @Param({"jumpBack", "jump", "weightedSampling"})
    public String hasher = "jumpBack";

    ConsistentBucketHasher bucketHasher = null;

    @Override
    void build() {
      bucketHasher =
          switch (hasher) {
            case "jumpBack" -> Contenders.hash4jJumpBack();
            case "jump" -> Contenders.hash4jJump();
            case "weightedSampling" -> Contenders.hash4jWeightedSampling();
            default -> throw new IllegalArgumentException("no hash4j hasher " + hasher);
          };
    }

    @Override
    String owner(int i) {
      long hash = Contenders.KEY_HASH.hashBytesToLong(keyBytes[i]);
      return ids[bucketHasher.getBucket(hash, nodes)];
    }
  }

  /** hash4j's JumpBackAnchor bucket set (any bucket removable) over the key's XXH3. */
  public static class Hash4jAnchor extends Keys {
    ConsistentBucketSetHasher bucketSet = null;

    @Override
    void build() {
      bucketSet = Contenders.hash4jJumpBackAnchor(nodes);
    }

    @Override
    String owner(int i) {
      return ids[bucketSet.getBucket(Contenders.KEY_HASH.hashBytesToLong(keyBytes[i]))];
    }
  }

  /**
   * The floor under every contender but spymemcached (MD5) and ringd's ketama: the next key's XXH3
   * alone, which each of them computes before it looks anything up. The nodes play no part.
   */
  public static class HashOnly extends Keys {
    @Override
    void build() {}

    @Override
    String owner(int i) {
      return ids[0];
    }
  }

  /** The next key's XXH3, with no lookup. */
  @Benchmark
  public long xxh3Only(HashOnly s) {
    return Contenders.KEY_HASH.hashBytesToLong(s.keyBytes[s.nextIndex()]);
  }

  /** ringd's owner of the next key. */
  @Benchmark
  public String ringd(Ringd s) {
    return s.owner(s.nextIndex());
  }

  /** spymemcached's primary node for the next key. */
  @Benchmark
  public String spymemcachedKetama(SpymemcachedKetama s) {
    return s.owner(s.nextIndex());
  }

  /** Guava's bucket for the next key. */
  @Benchmark
  public String guavaConsistentHash(Guava s) {
    return s.owner(s.nextIndex());
  }

  /** A hash4j bucket hasher's bucket for the next key. */
  @Benchmark
  public String hash4j(Hash4j s) {
    return s.owner(s.nextIndex());
  }

  /** hash4j's JumpBackAnchor bucket for the next key. */
  @Benchmark
  public String hash4jJumpBackAnchor(Hash4jAnchor s) {
    return s.owner(s.nextIndex());
  }
}
