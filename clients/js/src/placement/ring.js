// ring (spec 5.1): the virtual-node ring with 64-bit positions. Node i with
// label bytes B and c points places position(k) = H(hash, le32(len(B)) ‖ B
// ‖ le32(k)) for k below its point count; a node's points depend only on
// its own label, weight and ramp.

import { sortPoints } from './continuum.js';
import { hash64 } from './hashes.js';
import { FULL_RAMP, label } from './node.js';
import { r64 } from './u64.js';

/** @typedef {import('./node.js').Node} Node */
/** @typedef {import('./algorithms.js').Hash} Hash */
/** @typedef {import('./continuum.js').Points} Points */

const utf8 = new TextEncoder();

/**
 * c = vnodes × weight, or at ramp r the first ⌈r × c / 65,536⌉ of them, in
 * integers (5.1); at least 1. Below 2^53: c ≤ 10^10 and r ≤ 2^16.
 * @param {number} vnodesPerWeight
 * @param {Node} n
 * @returns {number}
 */
export function ringPointCount(vnodesPerWeight, n) {
  const c = vnodesPerWeight * n.weight;
  return Math.floor((n.ramp * c + FULL_RAMP - 1) / FULL_RAMP);
}

/**
 * The sorted point list of the active nodes (5.1).
 * @param {Node[]} active
 * @param {Hash} hash
 * @param {number} vnodesPerWeight
 * @returns {Points}
 */
export function buildRing(active, hash, vnodesPerWeight) {
  let total = 0;
  for (const n of active) total += ringPointCount(vnodesPerWeight, n);
  const hi = new Uint32Array(total);
  const lo = new Uint32Array(total);
  const owner = new Uint32Array(total);
  let j = 0;
  active.forEach((n, i) => {
    const b = utf8.encode(label(n));
    // The length prefix keeps ("node1", k=1) and ("node11", …) apart.
    const buf = new Uint8Array(b.length + 8);
    const view = new DataView(buf.buffer);
    view.setUint32(0, b.length, true);
    buf.set(b, 4);
    const count = ringPointCount(vnodesPerWeight, n);
    for (let k = 0; k < count; k++) {
      view.setUint32(b.length + 4, k, true);
      hash64(hash, buf);
      hi[j] = r64.hi;
      lo[j] = r64.lo;
      owner[j++] = i;
    }
  });
  return sortPoints({ hi, lo, owner });
}
