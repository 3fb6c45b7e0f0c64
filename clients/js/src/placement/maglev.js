// maglev (spec 5.3): a Maglev lookup table filled as Envoy fills it; M
// slots, each a node index, empty with no active node. envoy_maglev
// (5.11) fills the same way on its EDS weights (envoy-maglev.js).

import { xxh64 } from './hashes.js';
import { compareUtf8, label } from './node.js';
import { r64 } from './u64.js';

/** @typedef {import('./node.js').Node} Node */

const utf8 = new TextEncoder();
const SAFE = 2 ** 53;

/**
 * (hi, lo) mod m for m ≤ 2^24, in exact binary64 steps.
 * @param {number} hi
 * @param {number} lo
 * @param {number} m
 * @returns {number}
 */
export function mod64(hi, lo, m) {
  return ((hi % m) * (4294967296 % m) + lo) % m;
}

/**
 * A node's (offset, skip): its permutation of the M slots is (offset +
 * skip × j) mod M.
 * @param {string} name the node's label
 * @param {number} m
 * @returns {[number, number]}
 */
export function maglevPermutation(name, m) {
  const b = utf8.encode(name);
  xxh64(b, 0);
  const offset = mod64(r64.hi, r64.lo, m);
  xxh64(b, 1);
  return [offset, mod64(r64.hi, r64.lo, m - 1) + 1];
}

/**
 * Fills the table (5.3). weights are integers: the raw weights, or weight
 * × ramp in a ramped set (scaling all alike changes no comparison), or
 * envoy_maglev's EDS weights (5.11).
 * @param {Node[]} active
 * @param {readonly number[]} weights
 * @param {number} m
 * @returns {Uint32Array}
 */
export function buildMaglev(active, weights, m) {
  if (active.length === 0) return new Uint32Array(0);
  // Fill order: labels in byte order, ties by node index (Envoy's host
  // order, sorted by hash key).
  const order = active.map((_, i) => i).sort((a, b) => compareUtf8(label(active[a]), label(active[b])) || a - b);
  let top = 0;
  for (const w of weights) top = Math.max(top, w);
  // A node's target is turns × top: counting its turns keeps the target
  // exact where summing top in binary64 would round past 2^53.
  const entries = order.map((i) => {
    const [offset, skip] = maglevPermutation(label(active[i]), m);
    return { node: i, offset, skip, weight: weights[i], next: 0, turns: 0 };
  });
  const EMPTY = 0xffffffff;
  const table = new Uint32Array(m).fill(EMPTY);
  let filled = 0;
  for (let round = 1; filled < m; round++) {
    for (const e of entries) {
      if (filled === m) break;
      // Not this node's turn: round × weight < target. Both products are
      // exact below 2^53; past that (big ramped or envoy_maglev tables)
      // they are compared as BigInt.
      const due = round * e.weight;
      const target = e.turns * top;
      if (due < SAFE && target < SAFE ? due < target : BigInt(round) * BigInt(e.weight) < BigInt(e.turns) * BigInt(top))
        continue;
      e.turns++;
      let c = (e.offset + e.skip * e.next) % m;
      while (table[c] !== EMPTY) {
        e.next++;
        c = (e.offset + e.skip * e.next) % m;
      }
      table[c] = e.node;
      e.next++;
      filled++;
    }
  }
  return table;
}

/** Lookups over a maglev table (5.3, 6.1). */
export class MaglevLookup {
  /** @param {Uint32Array} table */
  constructor(table) {
    this.table = table;
    this.m = table.length;
    this.t32 = table.length > 0 ? 4294967296 % table.length : 0;
  }

  /**
   * @param {number} h
   * @param {number} l
   * @returns {number}
   */
  ownerIndex(h, l) {
    const m = this.m;
    return m === 0 ? -1 : this.table[((h % m) * this.t32 + l) % m];
  }

  /**
   * The slots from h mod M up, wrapping, each once (6.1).
   * @param {number} h
   * @param {number} l
   * @param {(node: number) => boolean} visit
   */
  walk(h, l, visit) {
    const m = this.m;
    if (m === 0) return;
    const s = ((h % m) * this.t32 + l) % m;
    for (let k = 0; k < m; k++) if (!visit(this.table[(s + k) % m])) return;
  }
}
