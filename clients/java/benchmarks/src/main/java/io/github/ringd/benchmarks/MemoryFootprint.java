package io.github.ringd.benchmarks;

import io.github.ringd.placement.Algorithm;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.openjdk.jol.info.GraphLayout;

/**
 * Prints the retained size of each contender over the same nodes (1,000 unless an argument says
 * otherwise), as JOL's {@code GraphLayout.parseInstance(...).totalSize()} walks it: everything
 * reachable from the structure, together with the node ids it answers with (the bucket hashers keep
 * none, so their id array is counted with them).
 *
 * <p>Run: {@code java -cp benchmarks/target/classes:$(cat benchmarks/target/cp.txt)
 * io.github.ringd.benchmarks.MemoryFootprint [nodes]}
 */
public final class MemoryFootprint {
  static {
    // JOL reads field offsets through Unsafe, which refuses them on records (ringd's Node is one);
    // this makes it compute them instead. Set before JOL's first use, so a command line need not.
    if (System.getProperty("jol.magicFieldOffset") == null) {
      System.setProperty("jol.magicFieldOffset", "true");
    }
  }

  private MemoryFootprint() {}

  /** Prints the table for the node count given (default 1,000). */
  public static void main(String[] args) {
    int nodes = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    out.printf(Locale.ROOT, "| structure (%,d nodes) | bytes | bytes a node |%n", nodes);
    out.println("| --- | ---: | ---: |");
    for (Map.Entry<String, Long> e : measure(nodes).entrySet()) {
      out.printf(
          Locale.ROOT, "| %s | %,d | %,d |%n", e.getKey(), e.getValue(), e.getValue() / nodes);
    }
  }

  /** Each contender's retained bytes over {@code nodes} nodes, in the order printed. */
  static Map<String, Long> measure(int nodes) {
    Map<String, Long> sizes = new LinkedHashMap<>();
    for (Algorithm a :
        new Algorithm[] {
          Algorithm.RING,
          Algorithm.TABLE,
          Algorithm.KETAMA,
          Algorithm.MAGLEV,
          Algorithm.JUMP,
          Algorithm.RENDEZVOUS
        }) {
      sizes.put("ringd " + a.wireName(), size(Contenders.ringd(a, nodes)));
    }
    String[] ids = Fixtures.nodeIds(nodes);
    sizes.put("spymemcached KetamaNodeLocator", size(Contenders.spymemcachedKetama(nodes)));
    // Guava's consistentHash is a static method: only the ids are kept.
    sizes.put("Guava Hashing.consistentHash", size((Object) ids));
    sizes.put("hash4j jumpBackHash", size(Contenders.hash4jJumpBack(), ids));
    sizes.put("hash4j jumpHash", size(Contenders.hash4jJump(), ids));
    sizes.put(
        "hash4j improvedConsistentWeightedSampling",
        size(Contenders.hash4jWeightedSampling(), ids));
    sizes.put("hash4j jumpBackAnchorHash", size(Contenders.hash4jJumpBackAnchor(nodes), ids));
    return sizes;
  }

  private static long size(Object... roots) {
    return GraphLayout.parseInstance(roots).totalSize();
  }
}
