// ketama (spec 5.2): libketama's continuum. Each digest k of a node,
// MD5(label ‖ "-" ‖ decimal(k)), gives four little-endian u32 points; ties
// sort by node index, libketama's stable order.

import { sortPoints } from './continuum.js';
import { md5 } from './hashes.js';
import { label } from './node.js';
import { le32 } from './u64.js';

/** @typedef {import('./node.js').Node} Node */
/** @typedef {import('./continuum.js').Points} Points */

const utf8 = new TextEncoder();

/**
 * libketama's floorf(pct * 40.0 * n) (5.2): pct a binary32 quotient (the
 * binary64 quotient of two binary32 values, rounded to binary32, is
 * exactly that), the two multiplications in binary64, left to right, and
 * the product narrowed to binary32 before the floor.
 * @param {number} weight
 * @param {number} total
 * @param {number} servers
 * @returns {number}
 */
export function ketamaDigestCount(weight, total, servers) {
  const pct = Math.fround(Math.fround(weight) / Math.fround(total));
  const product = pct * 40.0 * Math.fround(servers);
  return Math.floor(Math.fround(product));
}

/**
 * Every active node's digest count, in index order.
 * @param {Node[]} active
 * @returns {number[]}
 */
export function ketamaDigests(active) {
  let total = 0;
  for (const n of active) total += n.weight;
  return active.map((n) => ketamaDigestCount(n.weight, total, active.length));
}

/**
 * Appends the 4 × digests points of one server named `name` (ketama's
 * label, twemproxy's server name) to parallel arrays.
 * @param {{ hi: number[], owner: number[] }} out
 * @param {string} name
 * @param {number} digests
 * @param {number} node
 */
export function appendDigestPoints(out, name, digests, node) {
  for (let k = 0; k < digests; k++) {
    const d = md5(utf8.encode(`${name}-${k}`));
    for (let w = 0; w < 16; w += 4) {
      out.hi.push(le32(d, w));
      out.owner.push(node);
    }
  }
}

/**
 * The sorted continuum of the active nodes (5.2).
 * @param {Node[]} active
 * @returns {Points}
 */
export function buildKetama(active) {
  const digests = ketamaDigests(active);
  /** @type {{ hi: number[], owner: number[] }} */
  const out = { hi: [], owner: [] };
  for (let i = 0; i < active.length; i++) appendDigestPoints(out, label(active[i]), digests[i], i);
  return sortPoints({
    hi: Uint32Array.from(out.hi),
    lo: new Uint32Array(out.hi.length),
    owner: Uint32Array.from(out.owner),
  });
}
