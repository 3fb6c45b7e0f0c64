// haproxy (spec 5.8): HAProxy 2.6's `hash-type consistent`. Node i with
// server id s and weight w has the 16w points full_hash(s × 4096 + k); a
// key goes to the nearest point, the one before on a tie, which is the
// successor rule over each point's boundary key + ⌊gap / 2⌋. Integer
// arithmetic only, so the console can rebuild and check these points.

import { fail } from './errors.js';
import { fullHash } from './proxy-hashes.js';

/** @typedef {import('./node.js').Node} Node */
/** @typedef {import('./continuum.js').Points} Points */

/** BE_WEIGHT_SCALE: points per unit of weight. */
export const HAPROXY_POINTS_PER_WEIGHT = 16;
/** HAProxy's largest weight. */
export const HAPROXY_MAX_WEIGHT = 256;
/** The largest server id, 2^20 − 1, which keeps id × 4096 + k below 2^32. */
export const MAX_SERVER_ID = (1 << 20) - 1;

/**
 * HAProxy's points, sorted by key (no two share one: full_hash is a
 * bijection and its arguments are distinct). 32-bit keys sit in `hi`.
 * @param {Uint32Array} serverIds by node index
 * @param {readonly number[]} weights by node index
 * @returns {Points}
 */
export function haproxyPoints(serverIds, weights) {
  let total = 0;
  for (const w of weights) total += HAPROXY_POINTS_PER_WEIGHT * w;
  const keys = new Float64Array(total);
  let j = 0;
  weights.forEach((w, i) => {
    for (let k = 0; k < HAPROXY_POINTS_PER_WEIGHT * w; k++) {
      // key × 2^20 + node index sorts by key, then index, as numbers.
      keys[j++] = fullHash((serverIds[i] * 4096 + k) >>> 0) * 1048576 + i;
    }
  });
  keys.sort();
  const hi = new Uint32Array(total);
  const owner = new Uint32Array(total);
  for (let k = 0; k < total; k++) {
    hi[k] = Math.floor(keys[k] / 1048576);
    owner[k] = keys[k] % 1048576;
  }
  return { hi, lo: new Uint32Array(total), owner };
}

/**
 * Each point's boundary b_j = (key_j + ⌊g_j / 2⌋) mod 2^32, g_j the gap to
 * the next point (2^32 for a lone point), sorted by (boundary, node index):
 * the positions (b_{j−1}, b_j] are point j's (5.8.2).
 * @param {Points} points
 * @returns {Points}
 */
export function haproxyBoundaries(points) {
  const n = points.owner.length;
  const keys = new Float64Array(n);
  for (let j = 0; j < n; j++) {
    const key = points.hi[j];
    const next = points.hi[(j + 1) % n];
    const gap = ((next - key - 1) >>> 0) + 1;
    keys[j] = ((key + Math.floor(gap / 2)) % 4294967296) * 1048576 + points.owner[j];
  }
  keys.sort();
  const hi = new Uint32Array(n);
  const owner = new Uint32Array(n);
  for (let k = 0; k < n; k++) {
    hi[k] = Math.floor(keys[k] / 1048576);
    owner[k] = keys[k] % 1048576;
  }
  return { hi, lo: new Uint32Array(n), owner };
}

/**
 * Checks that every active node has a server id in 1..=MAX_SERVER_ID and
 * that no two share one; returns them in index order.
 * @param {Node[]} active
 * @param {ReadonlyMap<string, number>} ids
 * @returns {Uint32Array}
 */
export function haproxyServerIds(active, ids) {
  const out = new Uint32Array(active.length);
  /** @type {Map<number, string>} */
  const owner = new Map();
  active.forEach((n, i) => {
    const s = ids.get(n.id);
    if (s === undefined) throw fail('InvalidServerIds', `active node ${n.id} has no server id`);
    if (!Number.isInteger(s) || s < 1 || s > MAX_SERVER_ID) {
      throw fail('InvalidServerIds', `node ${n.id} has server id ${s}: ids run from 1 to ${MAX_SERVER_ID}`);
    }
    const other = owner.get(s);
    if (other !== undefined) throw fail('InvalidServerIds', `nodes ${other} and ${n.id} share server id ${s}`);
    owner.set(s, n.id);
    out[i] = s;
  });
  return out;
}

/**
 * Numbers every node, in any state, in id order from 1: the ids of a ring
 * that becomes haproxy, or of a placement built from a node set alone
 * (5.8.3).
 * @param {readonly { id: string }[]} nodes
 * @returns {Map<string, number>}
 */
export function initialServerIds(nodes) {
  const ids = [...new Set(nodes.map((n) => n.id))].sort();
  return new Map(ids.map((id, i) => [id, i + 1]));
}
