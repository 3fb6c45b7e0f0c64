// The general hashes of spec 3.1 and the primitives of 3.2, from npm
// packages (README, "Dependencies"), except XXH3-64 of inputs up to 240
// bytes, every lookup's key hash, which a module of our own computes in one
// call (xxh3.wat says why): hash-wasm's WebAssembly XXH3-64,
// XXH64, MD5, SHA-256 and CRC-32, and @multiformats/murmur3's
// MurmurHash3_x64_128. WebAssembly needs an asynchronous start, so
// `loadHashes()` must have resolved before any hash is computed; every
// function here is synchronous after that. This module is the one that
// reaches npm packages: the console's modules (encoding, ownership,
// fingerprint) never import it.

import { murmur364 } from '@multiformats/murmur3';
import { createCRC32, createMD5, createSHA256, createXXHash3, createXXHash64 } from 'hash-wasm';
import { be32, le32, r64 } from './u64.js';
import { XXH3_WASM } from './xxh3-wasm.js';

/** @typedef {import('hash-wasm').IHasher} IHasher */

/**
 * @typedef {object} Hashers
 * @property {IHasher} xxh3
 * @property {IHasher} xxh64Seed0
 * @property {IHasher} xxh64Seed1
 * @property {IHasher} md5
 * @property {IHasher} sha256
 * @property {IHasher} crc32
 */

/** @type {Hashers | null} */
let hashers = null;

/** The longest input xxh3.wat hashes. */
const XXH3_SHORT_MAX = 240;
/**
 * xxh3.wat's memory: the input at 0, the result at 256 (two u32 words,
 * low first). keyBytes writes short string keys straight into the input.
 */
export let xxh3Input = new Uint8Array(0);
/** @type {Uint8Array[]} views of xxh3Input by length, made once each */
let inputViews = [xxh3Input];
let xxh3Result = new Uint32Array(2);
/** @type {(len: number) => void} */
let xxh3Short = () => {};
/** @type {Promise<void> | null} */
let loading = null;

/**
 * Starts the WebAssembly hashers once; every build and decode awaits it.
 * @returns {Promise<void>}
 */
export function loadHashes() {
  loading ??= (async () => {
    const [short, xxh3, xxh64Seed0, xxh64Seed1, md5, sha256, crc32] = await Promise.all([
      WebAssembly.instantiate(Uint8Array.from(atob(XXH3_WASM), (c) => c.charCodeAt(0))),
      createXXHash3(0, 0),
      createXXHash64(0, 0),
      createXXHash64(1, 0),
      createMD5(),
      createSHA256(),
      createCRC32(),
    ]);
    const exports = short.instance.exports;
    const memory = /** @type {WebAssembly.Memory} */ (exports.memory);
    xxh3Input = new Uint8Array(memory.buffer, 0, XXH3_SHORT_MAX);
    inputViews = Array.from({ length: XXH3_SHORT_MAX + 1 }, (_, n) => xxh3Input.subarray(0, n));
    xxh3Result = new Uint32Array(memory.buffer, 256, 2);
    xxh3Short = /** @type {(len: number) => void} */ (exports.xxh3);
    hashers = { xxh3, xxh64Seed0, xxh64Seed1, md5, sha256, crc32 };
  })();
  return loading;
}

/**
 * The first n bytes (n ≤ 240) of the XXH3 module's input, where keyBytes
 * writes a short string key: hashing it then copies nothing.
 * @param {number} n
 * @returns {Uint8Array}
 */
export function xxh3InputView(n) {
  return inputViews[n];
}

/** @returns {Hashers} */
function ready() {
  if (hashers === null) throw new Error('the hashes are not loaded: await loadHashes() first');
  return hashers;
}

/**
 * @param {IHasher} h
 * @param {Uint8Array} data
 * @returns {Uint8Array}
 */
function digest(h, data) {
  h.init();
  h.update(data);
  return h.digest('binary');
}

/**
 * H(f, data) of spec 3.1 for the four general hashes, and xxh64 (XXH64
 * with seed 0, 3.2: envoy_ring_hash's and envoy_maglev's), into r64.
 * @param {import('./algorithms.js').Hash} f
 * @param {Uint8Array} data
 */
export function hash64(f, data) {
  const h = ready();
  switch (f) {
    case 'md5': {
      // The first 8 digest bytes, little-endian.
      const d = digest(h.md5, data);
      r64.lo = le32(d, 0);
      r64.hi = le32(d, 4);
      return;
    }
    case 'sha256': {
      const d = digest(h.sha256, data);
      r64.lo = le32(d, 0);
      r64.hi = le32(d, 4);
      return;
    }
    case 'xxh64':
      xxh64(data, 0);
      return;
    case 'murmur3': {
      // h1, which the package writes big-endian.
      const d = /** @type {{ digest: Uint8Array }} */ (murmur364.digest(data)).digest;
      r64.hi = be32(d, 0);
      r64.lo = be32(d, 4);
      return;
    }
    default: {
      const n = data.length;
      if (n <= XXH3_SHORT_MAX) {
        // Comparing views, not buffers: reading .buffer costs about 40 ns.
        if (inputViews[n] !== data) xxh3Input.set(data);
        xxh3Short(n);
        r64.lo = xxh3Result[0];
        r64.hi = xxh3Result[1];
        return;
      }
      // xxhash digests are written big-endian.
      const d = digest(h.xxh3, data);
      r64.hi = be32(d, 0);
      r64.lo = be32(d, 4);
    }
  }
}

/**
 * Classic XXH64 with seed 0 or 1 (maglev's and envoy_maglev's
 * permutations, 5.3; seed 0 is envoy_ring_hash's and envoy_maglev's
 * hash, 5.10, 5.11), into r64.
 * @param {Uint8Array} data
 * @param {0 | 1} seed
 */
export function xxh64(data, seed) {
  const h = ready();
  const d = digest(seed === 0 ? h.xxh64Seed0 : h.xxh64Seed1, data);
  r64.hi = be32(d, 0);
  r64.lo = be32(d, 4);
}

/**
 * The whole MD5 digest (ketama's and twemproxy's points).
 * @param {Uint8Array} data
 * @returns {Uint8Array}
 */
export function md5(data) {
  return digest(ready().md5, data);
}

/**
 * md5_32 of spec 3.2: the first 4 MD5 digest bytes as a little-endian u32.
 * @param {Uint8Array} data
 * @returns {number}
 */
export function md5First32(data) {
  return le32(digest(ready().md5, data), 0);
}

/**
 * The standard CRC-32 (3.5): nginx's only hash, one of HAProxy's and
 * twemproxy's crc32a.
 * @param {Uint8Array} data
 * @returns {number}
 */
export function crc32(data) {
  return be32(digest(ready().crc32, data), 0);
}
