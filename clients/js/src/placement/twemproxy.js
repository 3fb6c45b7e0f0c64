// twemproxy (spec 5.9): nutcracker 0.5.0's `distribution: ketama`. Point
// counts in binary32 throughout, servers placed by nutcracker's names,
// equal points in server-name order.

import { compareServerNames } from './addresses.js';
import { sortPoints } from './continuum.js';
import { appendDigestPoints } from './ketama.js';

/** @typedef {import('./node.js').Node} Node */
/** @typedef {import('./continuum.js').Points} Points */

const f32 = Math.fround;

/**
 * Every active node's point count in index order: 4 × floor(f32(f32(pct ×
 * 160) / 4) × f32(n)), pct = f32(w) / f32(T), every step binary32 as
 * nutcracker's float arithmetic (5.9.1). nutcracker adds 1e-10 in binary64
 * before the floor; that never changes the result, but it is kept to
 * follow the C code step by step.
 * @param {Node[]} active
 * @returns {number[]}
 */
export function twemproxyPointCounts(active) {
  let total = 0;
  for (const n of active) total += n.weight;
  return active.map((n) => {
    const pct = f32(f32(n.weight) / f32(total));
    const perHash = f32(f32(f32(pct * 160) / 4) * f32(active.length));
    return 4 * Math.floor(f32(perHash + 1e-10));
  });
}

/**
 * The servers in name order (shorter names first, then bytes), each with
 * count/4 digests of name ‖ "-" ‖ decimal(k) as ketama, sorted by position
 * with a stable sort, as glibc's qsort (a merge sort) does.
 * @param {Node[]} active
 * @param {string[]} names by node index
 * @returns {Points}
 */
export function buildTwemproxy(active, names) {
  const counts = twemproxyPointCounts(active);
  const order = active.map((_, i) => i).sort((a, b) => compareServerNames(names[a], names[b]) || a - b);
  /** @type {{ hi: number[], owner: number[] }} */
  const out = { hi: [], owner: [] };
  for (const i of order) appendDigestPoints(out, names[i], counts[i] / 4, i);
  return sortPoints(
    { hi: Uint32Array.from(out.hi), lo: new Uint32Array(out.hi.length), owner: Uint32Array.from(out.owner) },
    true,
  );
}
