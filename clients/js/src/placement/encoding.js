// The canonical encoding of spec 9: what a thin client downloads, and what
// the fingerprint hashes. `encodeEncoding` writes it from its parts;
// `decodeEncoding` reads it back, refusing what no placement encodes
// (9.2). Neither hashes a key nor imports an npm package, directly or
// not: the console imports this module as it is, without a bundler.

import { ALGORITHMS, HASHES, accepts, placesByAddress, takesRamps } from './algorithms.js';
import { MAX_REPLICATION, isPrime, maxTableSize, validPartitions, checkHashTag } from './config.js';
import { twemproxySplitAddress } from './addresses.js';
import { excerpt, fail, PlacementError } from './errors.js';
import { HAPROXY_MAX_WEIGHT, haproxyPoints, haproxyServerIds } from './haproxy.js';
import { bodySize, writeBody } from './encoding-body.js';
import { HOLE, restoreJump } from './jump.js';
import { FULL_RAMP, makeNode, validateNode } from './node.js';
import { restoreTableBody } from './table.js';

/** @typedef {import('./algorithms.js').Hash} Hash */
/** @typedef {import('./continuum.js').Points} Points */
/** @typedef {import('./jump.js').BucketRun} BucketRun */
/** @typedef {import('./jump.js').BucketRuns} BucketRuns */
/** @typedef {import('./node.js').Node} Node */
/** @typedef {import('./table.js').TableCells} TableCells */

/**
 * ring and envoy_ring_hash (64-bit positions), ketama and nginx (32-bit
 * positions in `hi`): the point list in its order (5.1, 5.2, 5.7; 5.10.2:
 * envoy_ring_hash's entries, equal positions in label order).
 * @typedef {{ algorithm: 'ring' | 'ketama' | 'nginx' | 'envoy_ring_hash', points: Points }} CircleBody
 */
/**
 * twemproxy: its hash tag and its point list, equal positions in server
 * order (5.9).
 * @typedef {{ algorithm: 'twemproxy', hashTag: string | null, points: Points }} TwemproxyBody
 */
/**
 * haproxy: avalanche, the server ids by node index, HAProxy's points (5.8).
 * @typedef {{ algorithm: 'haproxy', avalanche: boolean, serverIds: Uint32Array, points: Points }} HaproxyBody
 */
/**
 * maglev and envoy_maglev: the lookup table, a node index per slot (5.3,
 * 5.11; one body, another algorithm code).
 * @typedef {{ algorithm: 'maglev' | 'envoy_maglev', table: Uint32Array }} MaglevBody
 */
/** @typedef {{ algorithm: 'jump', runs: BucketRuns }} JumpBody */
/**
 * rendezvous: each node's label hash, as halves, by node index (5.5).
 * @typedef {{ algorithm: 'rendezvous', hi: Uint32Array, lo: Uint32Array }} RendezvousBody
 */
/** @typedef {{ algorithm: 'table' } & TableCells} TableBody */
/**
 * @typedef {CircleBody | TwemproxyBody | HaproxyBody | MaglevBody | JumpBody | RendezvousBody | TableBody} Body
 */

/**
 * What a canonical encoding holds (9.1): the header, the active nodes in
 * index order and the algorithm's body.
 * @typedef {object} Encoded
 * @property {Hash} hash
 * @property {boolean} zoneAware
 * @property {boolean} ramped some active node is below full ramp (flags bit 0)
 * @property {number} replicationFactor
 * @property {Node[]} nodes the active nodes in id order; a node's index is its position
 * @property {Body} body
 */

/** "RINGDPL", then format version 1. */
const MAGIC = [0x52, 0x49, 0x4e, 0x47, 0x44, 0x50, 0x4c, 0x01];
const FLAG_RAMPED = 0x01;
const utf8 = new TextEncoder();
const text = new TextDecoder('utf-8', { fatal: true });

/**
 * Writes the canonical encoding (9.1).
 * @param {Encoded} e
 * @returns {Uint8Array}
 */
export function encodeEncoding(e) {
  const algorithm = e.body.algorithm;
  const byAddress = placesByAddress(algorithm);
  const records = e.nodes.map((n) => ({
    id: utf8.encode(n.id),
    zone: utf8.encode(e.zoneAware && n.zone !== null ? n.zone : ''),
    address: byAddress ? utf8.encode(n.address ?? '') : null,
  }));
  let size = 20;
  for (const r of records)
    size += 6 + r.id.length + r.zone.length + (e.ramped ? 4 : 0) + (r.address ? 1 + r.address.length : 0);
  size += bodySize(e.body, e.nodes.length);
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  let at = 0;
  out.set(MAGIC, 0);
  at = 8;
  out[at++] = ALGORITHMS.indexOf(algorithm) + 1;
  out[at++] = HASHES.indexOf(e.hash) + 1;
  out[at++] = e.zoneAware ? 1 : 0;
  out[at++] = e.ramped ? FLAG_RAMPED : 0;
  view.setUint32(at, e.replicationFactor, true);
  view.setUint32(at + 4, e.nodes.length, true);
  at += 8;
  e.nodes.forEach((n, i) => {
    const r = records[i];
    out[at++] = r.id.length;
    out.set(r.id, at);
    at += r.id.length;
    out[at++] = r.zone.length;
    out.set(r.zone, at);
    at += r.zone.length;
    view.setUint32(at, n.weight, true);
    at += 4;
    if (e.ramped) {
      view.setUint32(at, n.ramp, true);
      at += 4;
    }
    if (r.address) {
      out[at++] = r.address.length;
      out.set(r.address, at);
      at += r.address.length;
    }
  });
  writeBody(e.body, e.nodes.length, view, at);
  return out;
}

/** Reads little-endian integers; running past the end is InvalidEncoding. */
class Reader {
  /** @param {Uint8Array} bytes */
  constructor(bytes) {
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.at = 0;
  }

  /** @returns {number} */
  remaining() {
    return this.bytes.length - this.at;
  }

  /**
   * @param {number} n
   * @returns {Uint8Array}
   */
  take(n) {
    if (n > this.remaining()) throw bad('the encoding is cut short');
    const s = this.bytes.subarray(this.at, this.at + n);
    this.at += n;
    return s;
  }

  /** @returns {number} */
  u8() {
    return this.take(1)[0];
  }

  /** @returns {number} */
  u32() {
    // Read in place: a subarray per word costs more than the read.
    if (this.remaining() < 4) throw bad('the encoding is cut short');
    const v = this.view.getUint32(this.at, true);
    this.at += 4;
    return v;
  }

  /** @returns {string} */
  str() {
    const s = this.take(this.u8());
    try {
      return text.decode(s);
    } catch {
      throw bad('a string is not UTF-8');
    }
  }
}

/**
 * @param {string} message
 * @returns {PlacementError}
 */
function bad(message) {
  return fail('InvalidEncoding', message);
}

/**
 * Reads a canonical encoding (9.2), refusing as InvalidEncoding what no
 * placement encodes, and anything that does not re-encode to the same
 * bytes. It does not check a fingerprint: the caller compares
 * `fingerprint(bytes)` with the one it expects.
 * @param {Uint8Array} bytes
 * @returns {Encoded}
 */
export function decodeEncoding(bytes) {
  const r = new Reader(bytes);
  /** @type {Encoded} */
  let e;
  try {
    e = decodeParts(r);
  } catch (err) {
    if (err instanceof PlacementError && err.code !== 'InvalidEncoding') throw bad(err.message);
    throw err;
  }
  if (r.remaining() !== 0) throw bad(`the body is followed by ${r.remaining()} bytes`);
  // Decoding is only right if it loses nothing: the bytes must come back.
  const again = encodeEncoding(e);
  if (!sameBytes(again, bytes)) throw bad('the encoding is not canonical');
  return e;
}

/**
 * Whether a and b hold the same bytes: a plain loop, as a callback per
 * byte makes megabytes slow.
 * @param {Uint8Array} a
 * @param {Uint8Array} b
 * @returns {boolean}
 */
function sameBytes(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * @param {Reader} r
 * @returns {Encoded}
 */
function decodeParts(r) {
  if (r.remaining() < 20 || MAGIC.some((b, i) => r.bytes[i] !== b)) {
    throw bad('not a ringd placement encoding of format version 1');
  }
  r.take(8);
  const algorithm = ALGORITHMS[r.u8() - 1];
  const hash = HASHES[r.u8() - 1];
  const zoneAware = r.u8();
  const flags = r.u8();
  const replicationFactor = r.u32();
  const count = r.u32();
  if (algorithm === undefined || hash === undefined || !accepts(algorithm, hash)) {
    throw bad('an unknown algorithm or hash code, or a hash the algorithm does not take');
  }
  if (zoneAware > 1 || (flags & ~FLAG_RAMPED) !== 0) throw bad(`zone_aware byte ${zoneAware} or flags ${flags}`);
  if (replicationFactor < 1 || replicationFactor > MAX_REPLICATION)
    throw bad(`replication factor ${replicationFactor}`);
  const ramped = (flags & FLAG_RAMPED) !== 0;
  // Each record takes at least 6 bytes: no count allocates more than the input justifies.
  if (count > r.remaining() / 6) throw bad(`${count} node records in ${r.remaining()} bytes`);
  const byAddress = placesByAddress(algorithm);
  /** @type {Node[]} */
  const nodes = [];
  let anyRamp = false;
  for (let i = 0; i < count; i++) {
    const n = makeNode({ id: r.str() });
    const zone = r.str();
    n.zone = zone === '' ? null : zone;
    n.weight = r.u32();
    if (ramped) {
      n.ramp = r.u32();
      anyRamp ||= n.ramp !== FULL_RAMP;
    }
    if (byAddress) {
      const address = r.str();
      if (address === '') throw bad(`node ${n.id} has no address, which ${algorithm} places by`);
      n.address = address;
    }
    validateNode(n);
    if ((n.zone !== null) !== (zoneAware === 1)) {
      throw bad(`node ${n.id}: a zone must be written exactly when zone_aware is 1`);
    }
    if (i > 0 && nodes[i - 1].id >= n.id) throw bad('node records are not in strictly ascending id order');
    nodes.push(n);
  }
  if (anyRamp !== ramped) throw bad('the ramped flag does not match the records’ ramps');
  if (ramped && !takesRamps(algorithm)) throw bad(`${algorithm} cannot be ramped`);
  /** @type {Body} */
  let body;
  switch (algorithm) {
    case 'ring':
    case 'ketama':
    case 'nginx':
    case 'envoy_ring_hash': {
      // envoy_ring_hash's equal positions are in label order, which the
      // encoding cannot show without the labels: the fingerprint vouches.
      const envoy = algorithm === 'envoy_ring_hash';
      body = { algorithm, points: readPoints(r, count, envoy || algorithm === 'ring', algorithm === 'nginx', envoy) };
      break;
    }
    case 'twemproxy': {
      const tagLength = r.u8();
      if (tagLength !== 0 && tagLength !== 2) throw bad(`a twemproxy hash tag of ${tagLength} bytes`);
      const tag = String.fromCharCode(...r.take(tagLength));
      if (tag !== '') checkHashTag(tag);
      for (const n of nodes) {
        const split = twemproxySplitAddress(n.address ?? '');
        if (typeof split === 'string')
          throw bad(`node ${n.id} at ${JSON.stringify(excerpt(n.address ?? ''))}: ${split}`);
      }
      // Equal positions are in server-name order, which the encoding
      // cannot show without the names: the fingerprint vouches for it.
      body = { algorithm, hashTag: tag === '' ? null : tag, points: readPoints(r, count, false, false, true) };
      break;
    }
    case 'maglev':
    case 'envoy_maglev': {
      const m = r.u32();
      if (
        m * 4 > r.remaining() ||
        (m === 0) !== (count === 0) ||
        (m > 0 && (m < count || m > maxTableSize(algorithm) || !isPrime(m)))
      ) {
        throw bad(`a ${algorithm} table of ${m} slots for ${count} nodes`);
      }
      const table = new Uint32Array(m);
      for (let i = 0; i < m; i++) {
        table[i] = r.u32();
        if (table[i] >= count) throw bad(`slot ${i} names node ${table[i]} of ${count}`);
      }
      body = { algorithm, table };
      break;
    }
    case 'jump': {
      const buckets = r.u32();
      if (buckets * 4 > r.remaining()) throw bad(`${buckets} buckets in ${r.remaining()} bytes`);
      /** @type {BucketRun[]} */
      const runs = [];
      for (let k = 0; k < buckets; k++) {
        const b = r.u32();
        if (b !== HOLE && b >= count) throw bad(`a bucket names node ${b} of ${count}`);
        const id = b === HOLE ? null : nodes[b].id;
        const last = runs[runs.length - 1];
        if (last !== undefined && last.id === id) last.count++;
        else runs.push({ id, count: 1 });
      }
      body = { algorithm, runs: restoreJump(nodes, runs) };
      break;
    }
    case 'rendezvous': {
      const hi = new Uint32Array(count);
      const lo = new Uint32Array(count);
      for (let i = 0; i < count; i++) {
        lo[i] = r.u32();
        hi[i] = r.u32();
      }
      body = { algorithm, hi, lo };
      break;
    }
    case 'haproxy': {
      const avalanche = r.u8();
      if (avalanche > 1) throw bad(`a haproxy body with avalanche byte ${avalanche}`);
      /** @type {Map<string, number>} */
      const ids = new Map();
      for (const n of nodes) ids.set(n.id, r.u32());
      const serverIds = haproxyServerIds(nodes, ids);
      for (const n of nodes) {
        if (n.weight > HAPROXY_MAX_WEIGHT) throw bad(`node ${n.id} has weight ${n.weight}; haproxy takes 1..=256`);
      }
      // The points follow from the ids and weights; the re-encoding
      // compares them with the ones written.
      r.take(r.remaining());
      const points = haproxyPoints(
        serverIds,
        nodes.map((n) => n.weight),
      );
      body = { algorithm, avalanche: avalanche === 1, serverIds, points };
      break;
    }
    case 'table': {
      const rest = r.take(r.remaining());
      const p = rest.length >= 4 ? (rest[0] | (rest[1] << 8) | (rest[2] << 16) | (rest[3] << 24)) >>> 0 : 0;
      if (!validPartitions(p)) throw bad('a table body without a valid partition count');
      body = { algorithm, ...restoreTableBody(count, p, replicationFactor, rest) };
      break;
    }
  }
  return { hash, zoneAware: zoneAware === 1, ramped, replicationFactor, nodes, body };
}

/**
 * A u32 count and that many (position, node) pairs, in canonical order:
 * by position then index, nginx's strictly ascending, twemproxy's and
 * envoy_ring_hash's by position alone.
 * @param {Reader} r
 * @param {number} nodes
 * @param {boolean} wide
 * @param {boolean} strict
 * @param {boolean} [positionOnly]
 * @returns {Points}
 */
function readPoints(r, nodes, wide, strict, positionOnly = false) {
  const count = r.u32();
  if (count * (wide ? 12 : 8) > r.remaining()) throw bad(`${count} points in ${r.remaining()} bytes`);
  const hi = new Uint32Array(count);
  const lo = new Uint32Array(count);
  const owner = new Uint32Array(count);
  for (let j = 0; j < count; j++) {
    if (wide) {
      lo[j] = r.u32();
      hi[j] = r.u32();
    } else hi[j] = r.u32();
    owner[j] = r.u32();
    if (owner[j] >= nodes) throw bad(`a point names node ${owner[j]} of ${nodes}`);
    if (j > 0) {
      const c =
        hi[j - 1] !== hi[j]
          ? hi[j - 1] - hi[j]
          : lo[j - 1] !== lo[j]
            ? lo[j - 1] - lo[j]
            : positionOnly
              ? 0
              : owner[j - 1] - owner[j];
      if (c > 0 || (strict && hi[j - 1] === hi[j])) throw bad('the points are not in canonical order');
    }
  }
  return { hi, lo, owner };
}
