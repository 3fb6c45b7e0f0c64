package io.github.ringd.placement;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Property tests of the placement core's promises, over seeded random node sets: 1-12 nodes with
 * distinct ids, weights 1-4, one of three zones and an IPv4 address (which every proxy mode and xDS
 * endpoint takes). table is left out: a client never computes a table. Each case's seed is in its
 * failure message.
 */
class PropertiesTest {
  private static final int CASES = 48;

  private static final List<String> ZONES = List.of("za", "zb", "zc");

  static List<Node> randomNodes(SplittableRandom rng, int maxNodes) {
    Set<String> ids = new HashSet<>();
    int count = 1 + rng.nextInt(maxNodes);
    List<Node> nodes = new ArrayList<>();
    String alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
    while (nodes.size() < count) {
      StringBuilder id = new StringBuilder().append((char) ('a' + rng.nextInt(26)));
      for (int k = rng.nextInt(8); k > 0; k--) {
        id.append(alphabet.charAt(rng.nextInt(36)));
      }
      if (!ids.add(id.toString())) {
        continue;
      }
      nodes.add(
          Node.of(id.toString())
              .withWeight(1 + rng.nextInt(4))
              .withZone(ZONES.get(rng.nextInt(3)))
              .withAddress("10.0.0." + (1 + nodes.size()) + ":11211"));
    }
    return nodes;
  }

  static RingConfig.Builder config(Algorithm a) {
    return RingConfig.builder(a).tableSize(4099); // keeps maglev cases fast; still prime
  }

  static List<byte[]> keys(int n) {
    List<byte[]> keys = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      keys.add(("k" + i).getBytes(StandardCharsets.UTF_8));
    }
    return keys;
  }

  /** A case's random source and the name its failures carry. */
  record Case(SplittableRandom rng, String name) {}

  static List<Case> cases(Algorithm a) {
    List<Case> out = new ArrayList<>();
    for (int c = 0; c < CASES; c++) {
      long seed = a.code() * 1000L + c;
      out.add(new Case(new SplittableRandom(seed), a + " seed " + seed));
    }
    return out;
  }

  @ParameterizedTest
  @EnumSource(
      value = Algorithm.class,
      names = {"TABLE"},
      mode = EnumSource.Mode.EXCLUDE)
  void insertionOrderNeverMatters(Algorithm a) {
    for (Case c : cases(a)) {
      List<Node> nodes = randomNodes(c.rng(), 12);
      Placement p = Placement.build(config(a).build(), nodes);
      List<Node> shuffled = new ArrayList<>(nodes);
      Collections.shuffle(shuffled, new Random(c.rng().nextLong()));
      Placement q = Placement.build(config(a).build(), shuffled);
      assertEquals(p.fingerprint(), q.fingerprint(), c.name() + ": fingerprint and input order");
      for (byte[] k : keys(400)) {
        assertEquals(p.preferenceList(k, 3), q.preferenceList(k, 3), c.name());
      }
    }
  }

  @ParameterizedTest
  @EnumSource(
      value = Algorithm.class,
      names = {"TABLE"},
      mode = EnumSource.Mode.EXCLUDE)
  void preferenceListsHoldMinRNDistinctNodes(Algorithm a) {
    for (Case c : cases(a)) {
      List<Node> nodes = randomNodes(c.rng(), 12);
      boolean zoned = c.rng().nextBoolean();
      int r = 1 + c.rng().nextInt(8);
      Placement p = Placement.build(config(a).zoneAware(zoned).build(), nodes);
      Map<String, String> zoneOf = new HashMap<>();
      nodes.forEach(n -> zoneOf.put(n.id(), n.zone()));
      int zones = new HashSet<>(zoneOf.values()).size();
      for (byte[] k : keys(100)) {
        List<String> list = p.preferenceList(k, r);
        String where = c.name() + " key " + new String(k, StandardCharsets.UTF_8) + ": " + list;
        assertEquals(Math.min(r, nodes.size()), list.size(), where);
        assertEquals(p.owner(k), list.get(0), where);
        assertEquals(list.size(), new HashSet<>(list).size(), where + " repeats a node");
        if (zoned) {
          Set<String> spread = new HashSet<>();
          for (int i = 0; i < Math.min(r, zones); i++) {
            spread.add(zoneOf.get(list.get(i)));
          }
          assertEquals(Math.min(r, zones), spread.size(), where + " spreads over zones first");
        }
      }
    }
  }

  @ParameterizedTest
  @EnumSource(
      value = Algorithm.class,
      names = {"TABLE"},
      mode = EnumSource.Mode.EXCLUDE)
  void ownershipUnitsSumToTheKeyspace(Algorithm a) {
    for (Case c : cases(a)) {
      List<Node> nodes = randomNodes(c.rng(), 12);
      Ownership o = Placement.build(config(a).build(), nodes).ownership();
      BigInteger sum = BigInteger.ZERO;
      for (Ownership.NodeShare n : o.nodes()) {
        sum = sum.add(n.units());
      }
      long weights = nodes.stream().mapToLong(Node::weight).sum();
      String want =
          switch (a) {
            case RING, ENVOY_RING_HASH -> "18446744073709551616";
            case KETAMA, NGINX, HAPROXY, TWEMPROXY -> "4294967296";
            case MAGLEV, ENVOY_MAGLEV -> "4099";
            default -> Long.toString(weights);
          };
      assertEquals(o.totalUnits(), sum, c.name());
      assertEquals(want, o.totalUnits().toString(), c.name());
    }
  }

  /**
   * The placement after a change, carrying the state the server carries: jump's order (5.4.3) and
   * haproxy's server ids (5.8.3).
   */
  static Placement rebuild(Placement before, Algorithm a, List<Node> nodes, String newcomer) {
    Stored stored = Stored.NONE;
    if (a == Algorithm.JUMP) {
      stored = stored.withBuckets(Jump.nextBucketOrder(before.bucketOrder(), nodes));
    } else if (a == Algorithm.HAPROXY) {
      Map<String, Integer> ids = new HashMap<>();
      long next = 1;
      for (Map.Entry<String, Long> e : before.serverIds().entrySet()) {
        ids.put(e.getKey(), e.getValue().intValue());
        next = Math.max(next, e.getValue() + 1);
      }
      if (newcomer != null) {
        ids.put(newcomer, (int) next);
      }
      stored = stored.withServerIds(ids);
    }
    return Placement.build(config(a).build(), nodes, stored);
  }

  /** Every key that moves goes to or from id. */
  static void onlyInvolves(Placement before, Placement after, String id, String name) {
    for (byte[] k : keys(400)) {
      String was = before.owner(k);
      String now = after.owner(k);
      assertTrue(
          Objects.equals(was, now) || id.equals(was) || id.equals(now),
          name + ": key " + new String(k, StandardCharsets.UTF_8) + " moved " + was + " → " + now);
    }
  }

  /**
   * The algorithms whose changes move only the keys they must: ketama, twemproxy and
   * envoy_ring_hash re-cut every server's points, maglev and envoy_maglev are only near-minimal.
   */
  @ParameterizedTest
  @EnumSource(
      value = Algorithm.class,
      names = {"RING", "JUMP", "RENDEZVOUS", "NGINX", "HAPROXY"})
  void addingANodeMovesKeysOnlyOntoIt(Algorithm a) {
    for (Case c : cases(a)) {
      List<Node> nodes = randomNodes(c.rng(), 11);
      Placement before = Placement.build(config(a).build(), nodes);
      List<Node> more = new ArrayList<>(nodes);
      more.add(Node.of("zz-new").withAddress("zz-new.svc:11211").withZone("za"));
      Placement after = rebuild(before, a, more, "zz-new");
      for (byte[] k : keys(400)) {
        String was = before.owner(k);
        String now = after.owner(k);
        assertTrue(now.equals(was) || now.equals("zz-new"), c.name() + ": " + was + " → " + now);
      }
    }
  }

  @ParameterizedTest
  @EnumSource(
      value = Algorithm.class,
      names = {"RING", "JUMP", "RENDEZVOUS", "NGINX", "HAPROXY"})
  void removingANodeMovesOnlyItsKeys(Algorithm a) {
    for (Case c : cases(a)) {
      List<Node> nodes = randomNodes(c.rng(), 12);
      if (nodes.size() < 2) {
        continue;
      }
      Placement before = Placement.build(config(a).build(), nodes);
      String gone = nodes.get(c.rng().nextInt(nodes.size())).id();
      List<Node> rest = new ArrayList<>(nodes);
      rest.removeIf(n -> n.id().equals(gone));
      onlyInvolves(before, rebuild(before, a, rest, null), gone, c.name());
    }
  }

  @ParameterizedTest
  @EnumSource(
      value = Algorithm.class,
      names = {"RING", "JUMP", "RENDEZVOUS", "HAPROXY"})
  void reweightingMovesKeysOnlyToOrFromThatNode(Algorithm a) {
    for (Case c : cases(a)) {
      List<Node> nodes = randomNodes(c.rng(), 12);
      Placement before = Placement.build(config(a).build(), nodes);
      int i = c.rng().nextInt(nodes.size());
      List<Node> changed = new ArrayList<>(nodes);
      changed.set(i, nodes.get(i).withWeight(1 + c.rng().nextInt(6)));
      onlyInvolves(before, rebuild(before, a, changed, null), nodes.get(i).id(), c.name());
    }
  }

  @Test
  void nextBucketOrderWorkedSequence() {
    List<BucketRun> o1 = Jump.nextBucketOrder(List.of(), nodes("a2 b1 c1 d2"));
    List<BucketRun> o2 = Jump.nextBucketOrder(o1, nodes("b1 c1 d2"));
    List<BucketRun> o3 = Jump.nextBucketOrder(o2, nodes("b1 c3 d1 e1"));
    List<BucketRun> o4 = Jump.nextBucketOrder(o3, nodes("b1 c1"));
    List<String> got =
        List.of(
            str(o1),
            str(o2),
            str(o3),
            str(o4),
            str(Jump.nextBucketOrder(List.of(), nodes("b1 a2 c1"))));
    assertEquals(List.of("aabcdd", "--bcdd", "ccbcde", "c-b", "aabc"), got);
  }

  private static List<Node> nodes(String spec) {
    List<Node> out = new ArrayList<>();
    for (String f : List.of(spec.split(" ", -1))) {
      out.add(Node.of(f.substring(0, 1)).withWeight(f.charAt(1) - '0'));
    }
    return out;
  }

  private static String str(List<BucketRun> runs) {
    StringBuilder b = new StringBuilder();
    for (BucketRun r : runs) {
      b.append((r.id() == null ? "-" : r.id()).repeat(r.count()));
    }
    return b.toString();
  }

  /** 5.4.3's definition, bucket by bucket (null a hole). */
  private static List<String> nextOrderByBucket(List<String> previous, List<Node> nodes) {
    List<Node> active = new ArrayList<>();
    for (Node n : nodes) {
      if (n.state() == NodeState.ACTIVE) {
        active.add(n);
      }
    }
    active.sort(NodeSet.BY_ID);
    Map<String, Integer> want = new HashMap<>();
    Map<String, Integer> held = new HashMap<>();
    active.forEach(n -> want.put(n.id(), n.weight()));
    List<String> order = new ArrayList<>();
    for (String slot : previous) {
      if (slot != null && held.getOrDefault(slot, 0) < want.getOrDefault(slot, 0)) {
        held.merge(slot, 1, Integer::sum);
        order.add(slot);
      } else {
        order.add(null);
      }
    }
    List<Integer> holes = new ArrayList<>();
    for (int i = 0; i < order.size(); i++) {
      if (order.get(i) == null) {
        holes.add(i);
      }
    }
    for (Node n : active) {
      for (int k = held.getOrDefault(n.id(), 0); k < n.weight(); k++) {
        if (!holes.isEmpty()) {
          order.set(holes.remove(0), n.id());
        } else {
          order.add(n.id());
        }
      }
    }
    while (!order.isEmpty() && order.get(order.size() - 1) == null) {
      order.remove(order.size() - 1);
    }
    return order;
  }

  @Test
  void nextBucketOrderByRunsEqualsTheDefinition() {
    SplittableRandom rng = new SplittableRandom(77);
    NodeState[] states = {
      NodeState.ACTIVE, NodeState.ACTIVE, NodeState.DRAINING, NodeState.JOINING
    };
    for (int c = 0; c < 200; c++) {
      List<BucketRun> runs = List.of();
      List<String> buckets = List.of();
      for (int step = 0; step < 6; step++) {
        Map<String, Node> byId = new java.util.TreeMap<>();
        for (Node n : randomNodes(rng, 8)) {
          String id = n.id().substring(0, 1); // few ids, so they come back
          byId.putIfAbsent(id, n.withState(states[rng.nextInt(states.length)]));
          byId.computeIfPresent(
              id, (k, v) -> new Node(k, null, v.weight(), null, v.state(), v.ramp(), null));
        }
        List<Node> nodes = new ArrayList<>(byId.values());
        runs = Jump.nextBucketOrder(runs, nodes);
        buckets = nextOrderByBucket(buckets, nodes);
        List<String> got = new ArrayList<>();
        for (BucketRun r : runs) {
          for (int k = 0; k < r.count(); k++) {
            got.add(r.id());
          }
        }
        assertEquals(buckets, got, "seed 77 case " + c + " step " + step);
      }
    }
  }
}
