package io.github.ringd.placement;

/** Check 1 of spec 2.4 on a ring config, in its order. */
final class ConfigCheck {
  private ConfigCheck() {}

  /**
   * Runs check 1 of spec 2.4 in its order (a malformed hash tag first: the server refuses it as it
   * reads the field).
   *
   * @throws PlacementException naming the first refusal
   */
  static void validate(RingConfig c) {
    String hashTag = c.hashTag();
    Algorithm algorithm = c.algorithm();
    HashFunction hash = c.hash();
    if (hashTag != null) {
      RingConfig.checkHashTag(hashTag);
    }
    if (algorithm == Algorithm.KETAMA && hash != HashFunction.MD5) {
      throw refuse(
          PlacementException.Reason.HASH_NOT_SUPPORTED, "ketama only supports md5, not " + hash);
    }
    if (!algorithm.accepts(hash)) {
      throw refuse(
          PlacementException.Reason.HASH_NOT_ACCEPTED,
          algorithm + " takes " + algorithm.acceptedHashes() + ", not " + hash);
    }
    if (c.avalanche() && algorithm != Algorithm.HAPROXY) {
      throw refuse(
          PlacementException.Reason.AVALANCHE_NOT_SUPPORTED,
          "avalanche applies to haproxy only, not " + algorithm);
    }
    if (hashTag != null && algorithm != Algorithm.TWEMPROXY) {
      throw refuse(
          PlacementException.Reason.HASH_TAG_NOT_SUPPORTED,
          "hash_tag applies to twemproxy only, not " + algorithm);
    }
    checkCounts(c);
    checkRingSizes(c);
    if (algorithm.usesTableSize()) {
      int top = algorithm.maxTableSize();
      if (c.tableSize() < 2 || c.tableSize() > top) {
        throw refuse(
            PlacementException.Reason.TABLE_SIZE_OUT_OF_RANGE,
            "table_size " + c.tableSize() + " not in 2..=" + top + " for " + algorithm);
      }
      if (!RingConfig.isPrime(c.tableSize())) {
        throw refuse(
            PlacementException.Reason.TABLE_SIZE_NOT_PRIME,
            "table_size " + c.tableSize() + " is not prime");
      }
    }
  }

  /** vnodes_per_weight, replication_factor and partitions, whatever the algorithm, in order. */
  static void checkCounts(RingConfig c) {
    if (c.vnodesPerWeight() < 1 || c.vnodesPerWeight() > RingConfig.MAX_VNODES) {
      throw refuse(
          PlacementException.Reason.VNODES_OUT_OF_RANGE,
          "vnodes_per_weight " + c.vnodesPerWeight() + " not in 1..=" + RingConfig.MAX_VNODES);
    }
    if (c.replicationFactor() < 1 || c.replicationFactor() > RingConfig.MAX_REPLICATION) {
      throw refuse(
          PlacementException.Reason.REPLICATION_OUT_OF_RANGE,
          "replication_factor "
              + c.replicationFactor()
              + " not in 1..="
              + RingConfig.MAX_REPLICATION);
    }
    if (!RingConfig.validPartitions(c.partitions())) {
      throw refuse(
          PlacementException.Reason.PARTITIONS_OUT_OF_RANGE,
          "partitions " + c.partitions() + ": a power of two in 2^8..=2^20");
    }
  }

  private static void checkRingSizes(RingConfig c) {
    if (c.minimumRingSize() < 1 || c.minimumRingSize() > RingConfig.MAX_RING_SIZE) {
      throw refuse(
          PlacementException.Reason.RING_SIZE_OUT_OF_RANGE,
          "minimum_ring_size " + c.minimumRingSize() + " not in 1..=" + RingConfig.MAX_RING_SIZE);
    }
    if (c.maximumRingSize() < 1 || c.maximumRingSize() > RingConfig.MAX_RING_SIZE) {
      throw refuse(
          PlacementException.Reason.RING_SIZE_OUT_OF_RANGE,
          "maximum_ring_size " + c.maximumRingSize() + " not in 1..=" + RingConfig.MAX_RING_SIZE);
    }
    if (c.algorithm() == Algorithm.ENVOY_RING_HASH && c.minimumRingSize() > c.maximumRingSize()) {
      throw refuse(
          PlacementException.Reason.RING_SIZES_INVERTED,
          "minimum_ring_size "
              + c.minimumRingSize()
              + " is above maximum_ring_size "
              + c.maximumRingSize()
              + ": Envoy and gRPC refuse such a cluster");
    }
  }

  private static PlacementException refuse(PlacementException.Reason r, String message) {
    return new PlacementException(r, message);
  }
}
