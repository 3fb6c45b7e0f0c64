// ringd's placement core: who owns a key, its preference list, each node's
// ownership, the canonical encoding and fingerprint, bit for bit as the
// server computes them (docs/placement-spec.md; section numbers in
// comments refer to it).

export { ALGORITHMS, HASHES, acceptedHashes, defaultHash } from './algorithms.js';
export {
  DEFAULT_MAXIMUM_RING_SIZE,
  DEFAULT_MINIMUM_RING_SIZE,
  DEFAULT_PARTITIONS,
  DEFAULT_REPLICATION_FACTOR,
  DEFAULT_TABLE_SIZE,
  DEFAULT_VNODES_PER_WEIGHT,
  MAX_ENVOY_TABLE_SIZE,
  MAX_POINTS,
  MAX_RING_SIZE,
  MAX_TABLE_SIZE,
  makeConfig,
  parseConfig,
  validateConfig,
} from './config.js';
export { decodeEncoding, encodeEncoding } from './encoding.js';
export { FingerprintMismatchError, PlacementError } from './errors.js';
export { fingerprint, isFingerprint } from './fingerprint.js';
export { MAX_SERVER_ID, initialServerIds } from './haproxy.js';
export { jumpHash, nextBucketOrder } from './jump.js';
export { FULL_RAMP, MAX_WEIGHT, label, makeNode, parseNode, parseNodes, validateNode } from './node.js';
export { OwnerCache } from './owner-cache.js';
export { ownershipOf } from './ownership.js';
export { Placement, build, decode } from './placement.js';
export { Snapshot, parseBuckets, parseSnapshot } from './snapshot.js';

/** @typedef {import('./algorithms.js').Algorithm} Algorithm */
/** @typedef {import('./algorithms.js').Hash} Hash */
/** @typedef {import('./config.js').Config} Config */
/** @typedef {import('./config.js').ConfigInput} ConfigInput */
/** @typedef {import('./continuum.js').Points} Points */
/** @typedef {import('./encoding.js').Encoded} Encoded */
/** @typedef {import('./encoding.js').Body} Body */
/** @typedef {import('./errors.js').ErrorCode} ErrorCode */
/** @typedef {import('./jump.js').BucketRun} BucketRun */
/** @typedef {import('./json.js').JsonInput} JsonInput */
/** @typedef {import('./node.js').Node} Node */
/** @typedef {import('./node.js').NodeInput} NodeInput */
/** @typedef {import('./node.js').NodeState} NodeState */
/** @typedef {import('./ownership.js').Ownership} Ownership */
/** @typedef {import('./ownership.js').NodeShare} NodeShare */
/** @typedef {import('./ownership.js').Basis} Basis */
/** @typedef {import('./placement.js').Key} Key */
/** @typedef {import('./placement.js').Point} Point */
/** @typedef {import('./placement.js').Stored} Stored */
/** @typedef {import('./snapshot.js').TableSource} TableSource */
