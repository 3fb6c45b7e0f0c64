// The ring config of spec 2.1: defaults, validation (2.4 check 1) and its
// JSON form.

import {
  accepts,
  acceptedHashes,
  defaultHash,
  isAlgorithm,
  isHash,
  parseAlgorithm,
  parseHash,
  usesTableSize,
} from './algorithms.js';
import { fail } from './errors.js';
import { jsonBool, jsonInt, jsonString, objectFields, parseJson } from './json.js';

/** @typedef {import('./algorithms.js').Algorithm} Algorithm */
/** @typedef {import('./algorithms.js').Hash} Hash */
/** @typedef {import('./json.js').JsonInput} JsonInput */

/**
 * A complete ring config (spec 2.1).
 * @typedef {object} Config
 * @property {Algorithm} algorithm places the keys
 * @property {Hash} hash hashes keys (and, for most algorithms, points)
 * @property {number} vnodesPerWeight ring's points per unit of weight, 1..=10,000
 * @property {number} tableSize maglev's and envoy_maglev's table length, a prime in 2..=2^24
 *   (2..=5,000,011 for envoy_maglev)
 * @property {number} replicationFactor the default preference list length, 1..=64
 * @property {boolean} zoneAware spread preference lists over zones first
 * @property {number} partitions table's partition count, a power of two in 2^8..=2^20
 * @property {boolean} avalanche haproxy: pass key hashes through HAProxy's full_hash
 * @property {string | null} hashTag twemproxy's hash_tag, two characters such as "{}"
 * @property {number} minimumRingSize envoy_ring_hash's fewest entries, 1..=2^23, at most maximumRingSize
 * @property {number} maximumRingSize envoy_ring_hash's most entries, 1..=2^23
 */

/**
 * A config with any fields left out: they take their defaults, the hash's
 * and avalanche's depending on the algorithm.
 * @typedef {Partial<Config>} ConfigInput
 */

/** Limits of spec 2.1 and 2.4. */
export const MAX_POINTS = 1 << 23;
export const MAX_TABLE_SIZE = 1 << 24;
/** The largest envoy_maglev table size: Envoy's bound on maglev_lb_config.table_size (a prime). */
export const MAX_ENVOY_TABLE_SIZE = 5_000_011;
export const DEFAULT_TABLE_SIZE = 65_537;
export const DEFAULT_VNODES_PER_WEIGHT = 160;
export const DEFAULT_REPLICATION_FACTOR = 3;
export const DEFAULT_PARTITIONS = 1 << 16;
const MAX_VNODES = 10_000;
export const MAX_REPLICATION = 64;
/** envoy_ring_hash's ring sizes unless configured: Envoy's and gRPC's minimum, gRPC's cap. */
export const DEFAULT_MINIMUM_RING_SIZE = 1024;
export const DEFAULT_MAXIMUM_RING_SIZE = 4096;
/** The largest ring size, Envoy's bound on both. */
export const MAX_RING_SIZE = 1 << 23;

/**
 * The config with every field given or defaulted, not yet validated.
 * @param {ConfigInput} [input]
 * @returns {Config}
 */
export function makeConfig(input = {}) {
  const algorithm = input.algorithm ?? 'ring';
  return {
    algorithm,
    hash: input.hash ?? (isAlgorithm(algorithm) ? defaultHash(algorithm) : 'xxh3'),
    vnodesPerWeight: input.vnodesPerWeight ?? DEFAULT_VNODES_PER_WEIGHT,
    tableSize: input.tableSize ?? DEFAULT_TABLE_SIZE,
    replicationFactor: input.replicationFactor ?? DEFAULT_REPLICATION_FACTOR,
    zoneAware: input.zoneAware ?? false,
    partitions: input.partitions ?? DEFAULT_PARTITIONS,
    avalanche: input.avalanche ?? algorithm === 'haproxy',
    hashTag: input.hashTag ?? null,
    minimumRingSize: input.minimumRingSize ?? DEFAULT_MINIMUM_RING_SIZE,
    maximumRingSize: input.maximumRingSize ?? DEFAULT_MAXIMUM_RING_SIZE,
  };
}

/**
 * Check 1 of spec 2.4, in its order (a malformed hash tag first: the
 * server refuses it as it reads the field).
 * @param {Config} c
 */
export function validateConfig(c) {
  if (!isAlgorithm(c.algorithm)) throw fail('UnknownAlgorithm', `${JSON.stringify(c.algorithm)} is not an algorithm`);
  if (!isHash(c.hash)) throw fail('UnknownHash', `${JSON.stringify(c.hash)} is not a hash`);
  if (c.hashTag !== null) checkHashTag(c.hashTag);
  if (c.algorithm === 'ketama' && c.hash !== 'md5') {
    throw fail('HashNotSupported', `ketama only supports md5, not ${c.hash}`);
  }
  if (!accepts(c.algorithm, c.hash)) {
    throw fail('HashNotAccepted', `${c.algorithm} takes ${acceptedHashes(c.algorithm).join(', ')}, not ${c.hash}`);
  }
  if (c.avalanche && c.algorithm !== 'haproxy') {
    throw fail('AvalancheNotSupported', `avalanche applies to haproxy only, not ${c.algorithm}`);
  }
  if (c.hashTag !== null && c.algorithm !== 'twemproxy') {
    throw fail('HashTagNotSupported', `hash_tag applies to twemproxy only, not ${c.algorithm}`);
  }
  checkCounts(c);
  // The ring sizes are checked whatever the algorithm, their order only
  // under envoy_ring_hash.
  for (const [name, size] of /** @type {const} */ ([
    ['minimum_ring_size', c.minimumRingSize],
    ['maximum_ring_size', c.maximumRingSize],
  ])) {
    if (!inRange(size, 1, MAX_RING_SIZE)) throw fail('RingSizeOutOfRange', `${name} ${size} not in 1..=2^23`);
  }
  if (c.algorithm === 'envoy_ring_hash' && c.minimumRingSize > c.maximumRingSize) {
    throw fail(
      'RingSizesInverted',
      `minimum_ring_size ${c.minimumRingSize} is above maximum_ring_size ${c.maximumRingSize}: Envoy and gRPC refuse such a cluster`,
    );
  }
  if (usesTableSize(c.algorithm)) {
    const max = maxTableSize(c.algorithm);
    if (!Number.isInteger(c.tableSize) || c.tableSize < 2 || c.tableSize > max) {
      throw fail('TableSizeOutOfRange', `table_size ${c.tableSize} not in 2..=${max} (${c.algorithm})`);
    }
    if (!isPrime(c.tableSize)) throw fail('TableSizeNotPrime', `table_size ${c.tableSize} is not prime`);
  }
}

/**
 * The largest table_size an algorithm takes: 2^24 for maglev, Envoy's
 * 5,000,011 for envoy_maglev (2.1).
 * @param {Algorithm} algorithm
 * @returns {number}
 */
export function maxTableSize(algorithm) {
  return algorithm === 'envoy_maglev' ? MAX_ENVOY_TABLE_SIZE : MAX_TABLE_SIZE;
}

/**
 * vnodes_per_weight, replication_factor and partitions, whatever the
 * algorithm, in that order.
 * @param {Config} c
 */
function checkCounts(c) {
  if (!inRange(c.vnodesPerWeight, 1, MAX_VNODES)) {
    throw fail('VnodesOutOfRange', `vnodes_per_weight ${c.vnodesPerWeight} not in 1..=${MAX_VNODES}`);
  }
  if (!inRange(c.replicationFactor, 1, MAX_REPLICATION)) {
    throw fail('ReplicationOutOfRange', `replication_factor ${c.replicationFactor} not in 1..=${MAX_REPLICATION}`);
  }
  if (!validPartitions(c.partitions)) {
    throw fail('PartitionsOutOfRange', `partitions ${c.partitions}: a power of two in 2^8..=2^20`);
  }
}

/**
 * @param {number} v
 * @param {number} lo
 * @param {number} hi
 * @returns {boolean}
 */
function inRange(v, lo, hi) {
  return Number.isInteger(v) && v >= lo && v <= hi;
}

/**
 * @param {number} p
 * @returns {boolean}
 */
export function validPartitions(p) {
  return Number.isInteger(p) && p >= 256 && p <= 1 << 20 && (p & (p - 1)) === 0;
}

/**
 * Trial division, enough below 2^24 (2.4 check 1).
 * @param {number} n
 * @returns {boolean}
 */
export function isPrime(n) {
  if (n < 2) return false;
  if (n % 2 === 0) return n === 2;
  for (let d = 3; d * d <= n; d += 2) if (n % d === 0) return false;
  return true;
}

/**
 * A hash_tag is two ASCII characters from '!' to '~' other than '"', "'"
 * and '\' (2.1), so it goes into nutcracker's YAML as it is.
 * @param {string} tag
 */
export function checkHashTag(tag) {
  if (typeof tag !== 'string' || tag.length !== 2) {
    throw fail('InvalidHashTag', `${JSON.stringify(tag)} must be exactly two characters, as "{}"`);
  }
  for (let i = 0; i < 2; i++) {
    const c = tag.charCodeAt(i);
    if (c < 0x21 || c > 0x7e || c === 0x22 || c === 0x27 || c === 0x5c) {
      throw fail(
        'InvalidHashTag',
        `${JSON.stringify(tag)} must be printable ASCII other than a space, a quote or a backslash`,
      );
    }
  }
}

/**
 * Reads a ring config from its JSON form (spec 2.1): any subset of the eleven
 * fields, the others at their defaults. Unknown fields are ignored. Errors
 * follow check 0, then check 1, of spec 2.4.
 * @param {JsonInput} input
 * @returns {Config}
 */
export function parseConfig(input) {
  /** @type {ConfigInput} */
  const c = {};
  for (const [name, value] of objectFields(parseJson(input, 'config'), 'config')) {
    switch (name) {
      case 'algorithm':
        c.algorithm = parseAlgorithm(jsonString(value, name));
        break;
      case 'hash':
        c.hash = parseHash(jsonString(value, name));
        break;
      case 'vnodes_per_weight':
        c.vnodesPerWeight = jsonInt(value, name);
        break;
      case 'replication_factor':
        c.replicationFactor = jsonInt(value, name);
        break;
      case 'partitions':
        c.partitions = jsonInt(value, name);
        break;
      case 'table_size':
        c.tableSize = jsonInt(value, name);
        break;
      case 'zone_aware':
        c.zoneAware = jsonBool(value, name);
        break;
      case 'avalanche':
        c.avalanche = jsonBool(value, name);
        break;
      case 'hash_tag':
        c.hashTag = jsonString(value, name);
        checkHashTag(c.hashTag);
        break;
      case 'minimum_ring_size':
        c.minimumRingSize = jsonInt(value, name);
        break;
      case 'maximum_ring_size':
        c.maximumRingSize = jsonInt(value, name);
        break;
    }
  }
  const config = makeConfig(c);
  checkCounts(config); // check 0's ranges first, in their order; then check 1
  validateConfig(config);
  return config;
}
