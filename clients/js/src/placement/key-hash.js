// Section 4's key hash for one placement, and the bytes of a key. A key
// hash lands in r64 as halves; a 32-bit hash (ketama, nginx, haproxy and
// twemproxy) sits in `hi` with `lo` zero, as 32-bit circles hold their
// positions.

import { crc32, hash64, md5First32, xxh3Input, xxh3InputView } from './hashes.js';
import * as proxy from './proxy-hashes.js';
import { r64 } from './u64.js';

/** @typedef {import('./algorithms.js').Algorithm} Algorithm */
/** @typedef {import('./algorithms.js').Hash} Hash */

const utf8 = new TextEncoder();
let scratch = new Uint8Array(256);
/** @type {Uint8Array[]} views of scratch by length, made once each */
let views = [];

/**
 * A key's bytes: a Uint8Array as it is, a string as its UTF-8, written
 * into one reused buffer (and a view of it made once per length), so that
 * a lookup of a string allocates nothing here. Strings of up to 80
 * characters (240 bytes at most) are written where the XXH3 module reads
 * its input, which saves copying them there. Valid until the next call.
 * @param {Uint8Array | string} key
 * @returns {Uint8Array}
 */
export function keyBytes(key) {
  if (typeof key !== 'string') return key;
  if (key.length * 3 <= xxh3Input.length) return xxh3InputView(utf8.encodeInto(key, xxh3Input).written);
  if (key.length * 3 > scratch.length) {
    scratch = new Uint8Array(key.length * 3);
    views = [];
  }
  const written = utf8.encodeInto(key, scratch).written;
  let view = views[written];
  if (view === undefined) {
    view = scratch.subarray(0, written);
    if (written < 1024) views[written] = view;
  }
  return view;
}

/**
 * The 32-bit hash f of a proxy mode (nginx's crc32, HAProxy's four,
 * twemproxy's ten), before any avalanche or hash tag.
 * @param {Hash} f
 * @param {Uint8Array} data
 * @returns {number}
 */
export function hash32(f, data) {
  switch (f) {
    case 'crc32':
    case 'crc32a':
      return crc32(data);
    case 'sdbm':
      return proxy.sdbm(data);
    case 'djb2':
      return proxy.djb2(data);
    case 'wt6':
      return proxy.wt6(data);
    case 'md5':
      return md5First32(data);
    case 'fnv1a_64':
      return proxy.fnv1a64(data);
    case 'fnv1_64':
      return proxy.fnv164(data);
    case 'fnv1a_32':
      return proxy.fnv1a32(data);
    case 'fnv1_32':
      return proxy.fnv132(data);
    case 'one_at_a_time':
      return proxy.oneAtATime(data);
    case 'murmur':
      return proxy.murmur2(data);
    case 'jenkins':
      return proxy.jenkins(data);
    case 'hsieh':
      return proxy.hsieh(data);
    default:
      throw new Error(`${f} is not a 32-bit hash`);
  }
}

/**
 * The part of a key nutcracker hashes (5.9.3): with a tag of characters o
 * and c, the bytes after the first o and before the first c after it,
 * when both are found and the bytes between are not empty; else the key.
 * @param {string | null} tag
 * @param {Uint8Array} key
 * @returns {Uint8Array}
 */
export function taggedKey(tag, key) {
  if (tag === null) return key;
  const start = key.indexOf(tag.charCodeAt(0));
  if (start < 0) return key;
  const end = key.indexOf(tag.charCodeAt(1), start + 1);
  if (end <= start + 1) return key;
  return key.subarray(start + 1, end);
}

/** Section 4's key hash of one placement. */
export class KeyHasher {
  /**
   * @param {Algorithm} algorithm
   * @param {Hash} hash
   * @param {boolean} avalanche haproxy: full_hash after the hash
   * @param {string | null} tag twemproxy: hash only the tagged part
   */
  constructor(algorithm, hash, avalanche, tag) {
    this.algorithm = algorithm;
    this.hash = hash;
    this.avalanche = avalanche;
    this.tag = tag;
    /** Whether hashes are 32 bits (kept in hi). */
    this.narrow = !(
      algorithm === 'ring' ||
      algorithm === 'maglev' ||
      algorithm === 'jump' ||
      algorithm === 'rendezvous' ||
      algorithm === 'table' ||
      algorithm === 'envoy_ring_hash' ||
      algorithm === 'envoy_maglev'
    );
  }

  /**
   * The key hash of `key`'s bytes, into r64.
   * @param {Uint8Array} key
   */
  sum(key) {
    if (!this.narrow) {
      hash64(this.hash, key);
      return;
    }
    let h;
    switch (this.algorithm) {
      case 'ketama':
        h = md5First32(key);
        break;
      case 'nginx':
        h = crc32(key);
        break;
      case 'haproxy':
        h = hash32(this.hash, key);
        if (this.avalanche) h = proxy.fullHash(h);
        break;
      default: {
        // twemproxy: an empty tagged part hashes to 0, as nutcracker does.
        const t = taggedKey(this.tag, key);
        h = t.length > 0 ? hash32(this.hash, t) : 0;
      }
    }
    r64.hi = h;
    r64.lo = 0;
  }
}
