package io.github.ringd.benchmarks;

import com.dynatrace.hash4j.consistent.ConsistentBucketHasher;
import com.dynatrace.hash4j.consistent.ConsistentBucketSetHasher;
import com.dynatrace.hash4j.consistent.ConsistentHashing;
import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;
import com.dynatrace.hash4j.random.PseudoRandomGeneratorProvider;
import io.github.ringd.placement.Algorithm;
import io.github.ringd.placement.Placement;
import io.github.ringd.placement.RingConfig;
import io.github.ringd.placement.Stored;
import java.lang.reflect.Proxy;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import net.spy.memcached.DefaultHashAlgorithm;
import net.spy.memcached.KetamaNodeLocator;
import net.spy.memcached.MemcachedNode;

/**
 * Builds each contender over {@code n} nodes: ringd's placements and the libraries they are
 * measured against, so that the timing, the memory figures and the smoke test build the same
 * structures.
 */
final class Contenders {
  /**
   * The key hash the bucket hashers (Guava's and hash4j's) are fed: they map a 64-bit hash to a
   * bucket and leave hashing the key to the caller, and XXH3 is the fastest 64-bit hash at hand
   * that allocates nothing.
   */
  static final Hasher64 KEY_HASH = Hashing.xxh3_64();

  private Contenders() {}

  /**
   * ringd's placement of {@code n} nodes of weight 1 under {@code algorithm}'s defaults. A table is
   * not a function of the nodes (the server keeps it), so table's is a stored one: partition p to
   * nodes p, p + 1, p + 2 (mod n), every node primary of as many partitions as any other. A lookup
   * reads one cell whatever the table holds, so its time does not depend on the choice.
   */
  static Placement ringd(Algorithm algorithm, int n) {
    RingConfig config = RingConfig.defaults(algorithm);
    Stored stored = Stored.NONE;
    if (algorithm == Algorithm.TABLE) {
      stored = stored.withTableRows(tableRows(config, n));
    }
    return Placement.build(config, Fixtures.ringdNodes(n), stored);
  }

  private static List<List<String>> tableRows(RingConfig config, int n) {
    String[] ids = Fixtures.nodeIds(n);
    int replicas = Math.min(config.replicationFactor(), n);
    List<List<String>> rows = new ArrayList<>(config.partitions());
    for (int p = 0; p < config.partitions(); p++) {
      String[] row = new String[replicas];
      for (int r = 0; r < replicas; r++) {
        row[r] = ids[(p + r) % n];
      }
      rows.add(List.of(row));
    }
    return rows;
  }

  /**
   * spymemcached's ketama over {@code n} memcached nodes (160 points each, MD5), as its {@code
   * KetamaConnectionFactory} builds it; the nodes are stand-ins that answer only what the locator
   * asks of them (their address and identity), since no connection is made.
   */
  static KetamaNodeLocator spymemcachedKetama(int n) {
    return new KetamaNodeLocator(memcachedNodes(n), DefaultHashAlgorithm.KETAMA_HASH);
  }

  /** {@code n} memcached node stand-ins at 10.x.y.z:11211, named by {@link Fixtures#nodeId}. */
  static List<MemcachedNode> memcachedNodes(int n) {
    List<MemcachedNode> nodes = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      nodes.add(standIn(Fixtures.nodeId(i), address(i)));
    }
    return nodes;
  }

  private static InetSocketAddress address(int i) {
    byte[] ip = {10, (byte) (i >>> 16), (byte) (i >>> 8), (byte) i};
    try {
      // A literal address: no name lookup.
      return new InetSocketAddress(InetAddress.getByAddress(ip), 11211);
    } catch (UnknownHostException e) {
      throw new IllegalStateException("a 4-byte address is always valid", e);
    }
  }

  private static MemcachedNode standIn(String id, InetSocketAddress address) {
    return (MemcachedNode)
        Proxy.newProxyInstance(
            MemcachedNode.class.getClassLoader(),
            new Class<?>[] {MemcachedNode.class},
            (proxy, method, args) ->
                switch (method.getName()) {
                  case "getSocketAddress" -> address;
                  case "toString" -> id;
                  case "hashCode" -> System.identityHashCode(proxy);
                  case "equals" -> proxy == args[0];
                  default ->
                      throw new UnsupportedOperationException(
                          "a benchmark stand-in has no " + method.getName());
                });
  }

  /** hash4j's JumpBackHash (Ertl 2024), the fastest of its consistent bucket hashers. */
  static ConsistentBucketHasher hash4jJumpBack() {
    return ConsistentHashing.jumpBackHash(PseudoRandomGeneratorProvider.splitMix64_V1());
  }

  /** hash4j's jump consistent hash (Lamping and Veach 2014). */
  static ConsistentBucketHasher hash4jJump() {
    return ConsistentHashing.jumpHash(PseudoRandomGeneratorProvider.splitMix64_V1());
  }

  /** hash4j's improved consistent weighted sampling. */
  static ConsistentBucketHasher hash4jWeightedSampling() {
    return ConsistentHashing.improvedConsistentWeightedSampling(
        PseudoRandomGeneratorProvider.splitMix64_V1());
  }

  /** hash4j's JumpBackAnchor, which allows removing any bucket, with {@code n} buckets. */
  static ConsistentBucketSetHasher hash4jJumpBackAnchor(int n) {
    ConsistentBucketSetHasher hasher =
        ConsistentHashing.jumpBackAnchorHash(PseudoRandomGeneratorProvider.splitMix64_V1());
    for (int i = 0; i < n; i++) {
      hasher.addBucket();
    }
    return hasher;
  }
}
