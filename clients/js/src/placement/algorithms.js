// The algorithms and hash functions of spec 2.1, with their codes in the
// canonical encoding (9.1) and which hashes each algorithm takes.

import { fail } from './errors.js';

/**
 * A placement algorithm (spec 5).
 * @typedef {'ring' | 'ketama' | 'maglev' | 'jump' | 'rendezvous' | 'table' | 'nginx' | 'haproxy' | 'twemproxy'
 *   | 'envoy_ring_hash' | 'envoy_maglev'} Algorithm
 */

/**
 * A hash function (spec 3).
 * @typedef {'xxh3' | 'md5' | 'sha256' | 'murmur3' | 'crc32' | 'sdbm' | 'djb2' | 'wt6' | 'fnv1a_64'
 *   | 'fnv1_64' | 'fnv1a_32' | 'fnv1_32' | 'crc32a' | 'one_at_a_time' | 'murmur' | 'jenkins' | 'hsieh'
 *   | 'xxh64'} Hash
 */

/** Every algorithm, in code order: an algorithm's code is its position + 1. */
export const ALGORITHMS = /** @type {const} */ ([
  'ring',
  'ketama',
  'maglev',
  'jump',
  'rendezvous',
  'table',
  'nginx',
  'haproxy',
  'twemproxy',
  'envoy_ring_hash',
  'envoy_maglev',
]);

/** Every hash, in code order: a hash's code is its position + 1. */
export const HASHES = /** @type {const} */ ([
  'xxh3',
  'md5',
  'sha256',
  'murmur3',
  'crc32',
  'sdbm',
  'djb2',
  'wt6',
  'fnv1a_64',
  'fnv1_64',
  'fnv1a_32',
  'fnv1_32',
  'crc32a',
  'one_at_a_time',
  'murmur',
  'jenkins',
  'hsieh',
  'xxh64',
]);

/** @type {readonly Hash[]} */
const GENERAL = ['xxh3', 'md5', 'sha256', 'murmur3'];
/** @type {Readonly<Record<string, readonly Hash[]>>} */
const ACCEPTED = {
  ketama: ['md5'],
  nginx: ['crc32'],
  haproxy: ['sdbm', 'djb2', 'wt6', 'crc32'],
  twemproxy: [
    'fnv1a_64',
    'md5',
    'crc32a',
    'one_at_a_time',
    'murmur',
    'jenkins',
    'hsieh',
    'fnv1_64',
    'fnv1a_32',
    'fnv1_32',
  ],
  envoy_ring_hash: ['xxh64'],
  envoy_maglev: ['xxh64'],
};

/**
 * The hashes an algorithm takes, its default first (2.1).
 * @param {Algorithm} algorithm
 * @returns {Hash[]}
 */
export function acceptedHashes(algorithm) {
  return [...(ACCEPTED[algorithm] ?? GENERAL)];
}

/**
 * The hash a ring of this algorithm gets when none is given.
 * @param {Algorithm} algorithm
 * @returns {Hash}
 */
export function defaultHash(algorithm) {
  return (ACCEPTED[algorithm] ?? GENERAL)[0];
}

/**
 * @param {Algorithm} algorithm
 * @param {Hash} hash
 * @returns {boolean}
 */
export function accepts(algorithm, hash) {
  return (ACCEPTED[algorithm] ?? GENERAL).includes(hash);
}

/**
 * @param {unknown} name
 * @returns {name is Algorithm}
 */
export function isAlgorithm(name) {
  return typeof name === 'string' && /** @type {readonly string[]} */ (ALGORITHMS).includes(name);
}

/**
 * @param {unknown} name
 * @returns {name is Hash}
 */
export function isHash(name) {
  return typeof name === 'string' && /** @type {readonly string[]} */ (HASHES).includes(name);
}

/**
 * The algorithm named `name`, or UnknownAlgorithm.
 * @param {string} name
 * @returns {Algorithm}
 */
export function parseAlgorithm(name) {
  if (!isAlgorithm(name)) throw fail('UnknownAlgorithm', `${JSON.stringify(name)} is not an algorithm`);
  return name;
}

/**
 * The hash named `name`, or UnknownHash.
 * @param {string} name
 * @returns {Hash}
 */
export function parseHash(name) {
  if (!isHash(name)) throw fail('UnknownHash', `${JSON.stringify(name)} is not a hash`);
  return name;
}

/**
 * Whether the algorithm hashes a node's address instead of its label, so
 * that its encoding carries addresses (2.2, 9.1).
 * @param {Algorithm} algorithm
 * @returns {boolean}
 */
export function placesByAddress(algorithm) {
  return algorithm === 'nginx' || algorithm === 'twemproxy';
}

/**
 * Whether a ring of this algorithm is served over xDS, its nodes sent as
 * EDS endpoints with ringd's weights (5.10.1): envoy_ring_hash and
 * envoy_maglev.
 * @param {Algorithm} algorithm
 * @returns {boolean}
 */
export function isXds(algorithm) {
  return algorithm === 'envoy_ring_hash' || algorithm === 'envoy_maglev';
}

/**
 * Whether a ring of this algorithm fills a Maglev table of table_size
 * slots: maglev and envoy_maglev (2.1).
 * @param {Algorithm} algorithm
 * @returns {boolean}
 */
export function usesTableSize(algorithm) {
  return algorithm === 'maglev' || algorithm === 'envoy_maglev';
}

/**
 * Whether every active node needs an address (2.4 check 3a): the
 * algorithms that place by address, and the xDS ones (envoy_ring_hash,
 * envoy_maglev), whose nodes are endpoints placed by their labels.
 * @param {Algorithm} algorithm
 * @returns {boolean}
 */
export function needsAddress(algorithm) {
  return placesByAddress(algorithm) || isXds(algorithm);
}

/**
 * Whether a node may be below full ramp (2.4 check 4).
 * @param {Algorithm} algorithm
 * @returns {boolean}
 */
export function takesRamps(algorithm) {
  return algorithm === 'ring' || algorithm === 'rendezvous' || usesTableSize(algorithm) || isXds(algorithm);
}
