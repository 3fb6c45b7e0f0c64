package io.github.ringd.placement;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Who owns every key of one ring version. Immutable once built and safe to share between threads.
 * Build one with {@link #build}, from a snapshot ({@link Snapshot#placement}), or from a canonical
 * encoding ({@link #decode}); the last two verify the fingerprint first.
 *
 * <p>Lookups ({@link #owner(byte[])}, {@link #owner(CharSequence)}, {@link #ownerIndex(byte[])})
 * allocate nothing once a thread has made its first.
 */
public final class Placement {
  private final Algorithm algorithm;
  private final HashFunction hash;
  private final boolean zoneAware;
  private final int replicationFactor;

  /** The active nodes in id order; a node's index is its position (2.3). */
  private final List<Node> nodes;

  private final String[] ids;
  private final boolean ramped;
  private final int @Nullable [] zoneOf; // zone number per node, null without zone awareness
  private final int zoneCount;
  private final KeyHash keys;
  private final Layout layout;

  /** SHA-256 of the encoding, computed once when built. */
  private final String fingerprint;

  private final long version;

  Placement(
      Algorithm algorithm,
      HashFunction hash,
      boolean zoneAware,
      int replicationFactor,
      List<Node> nodes,
      boolean ramped,
      KeyHash keys,
      Layout layout) {
    this.algorithm = algorithm;
    this.hash = hash;
    this.zoneAware = zoneAware;
    this.replicationFactor = replicationFactor;
    this.nodes = List.copyOf(nodes);
    this.ids = new String[nodes.size()];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = nodes.get(i).id();
    }
    this.ramped = ramped;
    this.keys = keys;
    this.layout = layout;
    if (zoneAware) {
      zoneOf = NodeSet.zoneNumbers(this.nodes);
      zoneCount = NodeSet.zoneCount(this.nodes);
    } else {
      zoneOf = null;
      zoneCount = 0;
    }
    this.fingerprint = Encoding.fingerprint(encode());
    this.version = 0;
  }

  private Placement(Placement p, long version) {
    algorithm = p.algorithm;
    hash = p.hash;
    zoneAware = p.zoneAware;
    replicationFactor = p.replicationFactor;
    nodes = p.nodes;
    ids = p.ids;
    ramped = p.ramped;
    zoneOf = p.zoneOf;
    zoneCount = p.zoneCount;
    keys = p.keys;
    layout = p.layout;
    fingerprint = p.fingerprint;
    this.version = version;
  }

  /** This placement as the one of ring version {@code v}. */
  Placement withVersion(long v) {
    return new Placement(this, v);
  }

  /**
   * Places the active nodes of {@code nodes} (any states, any order) under {@code config}, with the
   * stored state some algorithms need ({@link Stored#NONE} for none). It validates as spec 2.4 does
   * and throws the first refusal; table needs its stored table, except with no active node ({@link
   * PlacementException.Reason#TABLE_REQUIRED}).
   *
   * @throws PlacementException when the config, the nodes or the stored state are refused
   */
  public static Placement build(RingConfig config, List<Node> nodes, Stored stored) {
    Objects.requireNonNull(stored, "stored");
    config.validate();
    List<Node> active = NodeSet.normalize(config, nodes);
    boolean ramped = NodeSet.isRamped(active);
    Layout layout = buildLayout(config, nodes, active, weights(active, ramped), stored);
    KeyHash keys =
        new KeyHash(config.algorithm(), config.hash(), config.avalanche(), config.hashTag());
    return new Placement(
        config.algorithm(),
        config.hash(),
        config.zoneAware(),
        config.replicationFactor(),
        active,
        ramped,
        keys,
        layout);
  }

  /** {@link #build(RingConfig, List, Stored)} without stored state. */
  public static Placement build(RingConfig config, List<Node> nodes) {
    return build(config, nodes, Stored.NONE);
  }

  /** Materializes the algorithm's layout (spec 1, step 3). */
  private static Layout buildLayout(
      RingConfig c, List<Node> nodes, List<Node> active, long[] weights, Stored stored) {
    List<BucketRun> runs = stored.buckets();
    return switch (c.algorithm()) {
      case RING -> Ring.build(active, c.hash(), c.vnodesPerWeight());
      case KETAMA -> Ketama.build(active);
      case MAGLEV -> MaglevLayout.fill(active, weights, c.tableSize());
      case RENDEZVOUS -> Rendezvous.build(active, c.hash(), weights);
      case JUMP -> JumpLayout.restore(active, runs != null ? runs : JumpLayout.initialRuns(active));
      case NGINX -> NginxLayout.build(active);
      case HAPROXY ->
          HaproxyLayout.build(
              active,
              stored.serverIds() != null
                  ? stored.serverIds()
                  : HaproxyLayout.initialServerIds(nodes),
              c.avalanche());
      case TWEMPROXY -> TwemproxyLayout.build(active, c.hashTag());
      case ENVOY_RING_HASH -> EnvoyRingHash.build(active, c.minimumRingSize(), c.maximumRingSize());
      case ENVOY_MAGLEV -> EnvoyMaglev.build(active, c.tableSize());
      case TABLE -> TableLayout.build(c, active, stored);
    };
  }

  /**
   * The weights maglev and rendezvous place by: weight × ramp in a ramped set, else the weights
   * (2.2). envoy_maglev places by its EDS weights instead (5.11).
   */
  static long[] weights(List<Node> active, boolean ramped) {
    long[] w = new long[active.size()];
    for (int i = 0; i < w.length; i++) {
      Node n = active.get(i);
      w[i] = ramped ? n.scaledWeight() : n.weight();
    }
    return w;
  }

  /**
   * Thin mode (9.2): a placement from a canonical encoding alone, as {@code GET
   * …/snapshots/{v}/table} serves it for every algorithm. The encoding's SHA-256 must equal {@code
   * fingerprint} (the snapshot's, or the ringd-fingerprint header).
   *
   * @throws FingerprintMismatchException when the encoding does not hash to the fingerprint
   * @throws PlacementException of reason {@link PlacementException.Reason#INVALID_ENCODING} when
   *     the encoding does not decode, or does not re-encode to the same bytes
   */
  public static Placement decode(byte[] encoding, String fingerprint) {
    return Decoder.decode(encoding, fingerprint);
  }

  /** The canonical encoding (9.1), what thin clients download. */
  public byte[] encode() {
    ByteSink out = new ByteSink(64 + 32 * nodes.size());
    Encoding.appendHeader(out, algorithm, hash, zoneAware, replicationFactor, nodes, ramped);
    layout.appendBody(out);
    return out.toByteArray();
  }

  /**
   * SHA-256 of the canonical encoding, 64 lowercase hex digits: two placements with one fingerprint
   * place every key alike.
   */
  public String fingerprint() {
    return fingerprint;
  }

  /** The ring version the placement was built from, 0 when it was not built from a snapshot. */
  public long version() {
    return version;
  }

  /** The placement's algorithm. */
  public Algorithm algorithm() {
    return algorithm;
  }

  /** The placement's hash function. */
  public HashFunction hash() {
    return hash;
  }

  /** The default preference list length. */
  public int replicationFactor() {
    return replicationFactor;
  }

  /** Whether preference lists spread over zones first. */
  public boolean zoneAware() {
    return zoneAware;
  }

  /** The active nodes in id order; a node's position is its index. */
  public List<Node> nodes() {
    return nodes;
  }

  /** The node of index {@code index} (0 to nodes().size() − 1). */
  public Node node(int index) {
    return nodes.get(index);
  }

  /** The id of the node of index {@code index}, what {@link #owner(byte[])} returns. */
  public String nodeId(int index) {
    return ids[index];
  }

  /** The label (hash key, else id) of the node of index {@code index}. */
  public String nodeLabel(int index) {
    return nodes.get(index).label();
  }

  /**
   * The key's hash in the algorithm's space (section 4): 64 bits, or 32 (zero-extended) for ketama
   * and the proxy modes.
   */
  public long keyHash(byte[] key) {
    return keys.sum(key, 0, key.length);
  }

  /**
   * The index of the node owning {@code key}, -1 when no node is active (or, under ketama, none has
   * a point). It does not allocate.
   */
  public int ownerIndex(byte[] key) {
    return layout.ownerIndex(keys.sum(key, 0, key.length));
  }

  /** {@link #ownerIndex(byte[])} for a key held as characters (hashed as their UTF-8 bytes). */
  public int ownerIndex(CharSequence key) {
    return layout.ownerIndex(keys.sum(key));
  }

  /**
   * The id of the node owning {@code key}, null when no node is active (or, under ketama, none has
   * a point). It does not allocate.
   */
  public @Nullable String owner(byte[] key) {
    int i = layout.ownerIndex(keys.sum(key, 0, key.length));
    return i < 0 ? null : ids[i];
  }

  /**
   * {@link #owner(byte[])} for a key held as characters, hashed as their UTF-8 bytes. It does not
   * allocate: the bytes go to a per-thread buffer.
   */
  public @Nullable String owner(CharSequence key) {
    int i = layout.ownerIndex(keys.sum(key));
    return i < 0 ? null : ids[i];
  }

  /**
   * Up to {@code r} distinct node ids for {@code key}, owner first (section 6): min(r, active
   * nodes) of them, fewer only when some node holds no point (ketama) or no slot (table).
   * Zone-aware rings spread the first entries over distinct zones. r ≤ 0 gives none; {@link
   * #replicationFactor()} is the usual r.
   */
  public List<String> preferenceList(byte[] key, int r) {
    int[] picked =
        Preference.select(layout, keys.sum(key, 0, key.length), r, ids.length, zoneOf, zoneCount);
    String[] out = new String[picked.length];
    for (int k = 0; k < picked.length; k++) {
      out[k] = ids[picked[k]];
    }
    return List.of(out);
  }

  /** {@link #preferenceList(byte[], int)} for a key held as characters. */
  public List<String> preferenceList(CharSequence key, int r) {
    int[] picked = Preference.select(layout, keys.sum(key), r, ids.length, zoneOf, zoneCount);
    String[] out = new String[picked.length];
    for (int k = 0; k < picked.length; k++) {
      out[k] = ids[picked[k]];
    }
    return List.of(out);
  }

  /** Section 7's ownership report. */
  public Ownership ownership() {
    return Ownership.of(this);
  }

  /**
   * The sorted point list of ring, ketama, nginx and twemproxy, envoy_ring_hash's entries (ties in
   * the algorithm's order), and HAProxy's own points (not their boundaries) for haproxy; null under
   * the other algorithms.
   */
  public @Nullable List<Point> points() {
    return Inspection.points(this);
  }

  /** The lookup table of maglev or envoy_maglev as node ids, slot by slot; null otherwise. */
  public @Nullable List<String> maglevTable() {
    return Inspection.maglevTable(this);
  }

  /**
   * jump's bucket order as runs (a null id marks holes); empty for a jump placement with no active
   * node, null under the other algorithms.
   */
  public @Nullable List<BucketRun> bucketOrder() {
    return Inspection.bucketOrder(this);
  }

  /** Each active node's haproxy server id; null under the other algorithms. */
  public @Nullable Map<String, Long> serverIds() {
    return Inspection.serverIds(this);
  }

  /** table's rows of node ids, primary first, partition by partition; null otherwise. */
  public @Nullable List<List<String>> tableRows() {
    return Inspection.tableRows(this);
  }

  /** twemproxy's hash tag, null when keys are hashed whole. */
  public @Nullable String hashTag() {
    return keys.tag();
  }

  Layout layout() {
    return layout;
  }

  boolean ramped() {
    return ramped;
  }

  KeyHash keys() {
    return keys;
  }

  @Override
  public String toString() {
    return "Placement{"
        + algorithm
        + ", version "
        + version
        + ", "
        + nodes.size()
        + " active nodes, fingerprint "
        + fingerprint
        + "}";
  }
}
