// jump (spec 5.4): Lamping and Veach's jump consistent hash over a
// persisted bucket order, held as runs of buckets with one owner so that
// a weight of 1,000,000 is one entry, not a million (5.4.3, informative).
// Lookups run in 32-bit halves: no BigInt on the lookup path.

import { excerpt, fail } from './errors.js';
import { MAX_POINTS } from './config.js';
import { makeNode } from './node.js';
import { add64, fmix64, mul64, r64 } from './u64.js';

/** @typedef {import('./node.js').Node} Node */
/** @typedef {import('./node.js').NodeInput} NodeInput */

/** A hole's node number in the encoding (9.1) and in runs. */
export const HOLE = 0xffffffff;

/**
 * A run of consecutive buckets with one owner (a node id), or of holes
 * (id null).
 * @typedef {object} BucketRun
 * @property {string | null} id
 * @property {number} count at least 1
 */

/**
 * A bucket order as runs of node indices: run r starts at bucket
 * starts[r] and belongs to owners[r] (a node index, or HOLE).
 * @typedef {object} BucketRuns
 * @property {Uint32Array} starts
 * @property {Uint32Array} owners
 * @property {number} length the bucket count N
 */

/**
 * jump(key, n) of spec 5.4.1 on a key held as halves; n ≥ 1. The
 * division and the multiplication are single binary64 operations on
 * exact operands, and the result is truncated, as the reference does.
 * @param {number} hi
 * @param {number} lo
 * @param {number} n
 * @returns {number}
 */
export function jumpHalves(hi, lo, n) {
  let b = -1;
  let j = 0;
  let h = hi;
  let l = lo;
  while (j < n) {
    b = j;
    mul64(h, l, 0x27bb2ee6, 0x87b0b0fd); // 2862933555777941757
    add64(r64.hi, r64.lo, 0, 1);
    h = r64.hi;
    l = r64.lo;
    j = Math.trunc((b + 1) * (2147483648 / ((h >>> 1) + 1)));
  }
  return b;
}

/**
 * The jump consistent hash function of spec 5.4.1: the bucket in 0..n−1
 * that `key` falls in; n must be at least 1.
 * @param {bigint} key a u64
 * @param {number} n
 * @returns {number}
 */
export function jumpHash(key, n) {
  return jumpHalves(Number(BigInt.asUintN(64, key) >> 32n), Number(BigInt.asUintN(32, key)), n);
}

/**
 * Accepts a persisted order only if every id in it is an active node, each
 * active node holds exactly weight buckets and the last bucket is not a
 * hole (5.4.4).
 * @param {Node[]} active
 * @param {BucketRun[]} runs
 * @returns {BucketRuns}
 */
export function restoreJump(active, runs) {
  /** @type {Map<string, number>} */
  const index = new Map(active.map((n, i) => [n.id, i]));
  const held = new Array(active.length).fill(0);
  /** @type {number[]} */
  const starts = [];
  /** @type {number[]} */
  const owners = [];
  let length = 0;
  let lastHole = false;
  for (const r of runs) {
    if (!Number.isInteger(r.count) || r.count < 0) throw fail('InvalidBucketOrder', `a run of ${r.count} buckets`);
    if (r.count === 0) continue;
    if (length + r.count > MAX_POINTS) throw fail('TooManyPoints', `more than ${MAX_POINTS} buckets`);
    let owner = HOLE;
    if (r.id !== null) {
      const i = index.get(r.id);
      if (i === undefined) {
        throw fail('InvalidBucketOrder', `${excerpt(r.id)} holds a bucket but is not an active node`);
      }
      held[i] += r.count;
      owner = i;
    }
    lastHole = owner === HOLE;
    if (owners.length === 0 || owners[owners.length - 1] !== owner) {
      starts.push(length);
      owners.push(owner);
    }
    length += r.count;
  }
  active.forEach((n, i) => {
    if (held[i] !== n.weight) {
      throw fail('InvalidBucketOrder', `${n.id} has weight ${n.weight} but holds ${held[i]} buckets`);
    }
  });
  if (lastHole) throw fail('InvalidBucketOrder', 'the last bucket is a hole');
  return { starts: Uint32Array.from(starts), owners: Uint32Array.from(owners), length };
}

/**
 * The order of a placement built from scratch: the active nodes in id
 * order, each with weight consecutive buckets (5.4.3).
 * @param {Node[]} active
 * @returns {BucketRun[]}
 */
export function initialJumpRuns(active) {
  return active.map((n) => ({ id: n.id, count: n.weight }));
}

/**
 * The number of buckets in run r.
 * @param {BucketRuns} runs
 * @param {number} r
 * @returns {number}
 */
export function runLength(runs, r) {
  return (r + 1 < runs.starts.length ? runs.starts[r + 1] : runs.length) - runs.starts[r];
}

/**
 * The order as runs of node ids (null for holes).
 * @param {BucketRuns} runs
 * @param {Node[]} active
 * @returns {BucketRun[]}
 */
export function runsOf(runs, active) {
  return Array.from(runs.owners, (o, r) => ({ id: o === HOLE ? null : active[o].id, count: runLength(runs, r) }));
}

/** Lookups over a bucket order (5.4.2). */
export class JumpLookup {
  /** @param {BucketRuns} runs */
  constructor(runs) {
    this.runs = runs;
  }

  /**
   * The run holding the live bucket key hash (h, l) lands on: jump, and
   * re-hash past holes (5.4.2).
   * @param {number} h
   * @param {number} l
   * @returns {number}
   */
  lookup(h, l) {
    const { starts, owners, length } = this.runs;
    for (;;) {
      const b = jumpHalves(h, l, length);
      // The last run starting at or before b (starts[0] is 0).
      let lo = 0;
      let hi = starts.length;
      while (lo < hi) {
        const m = (lo + hi) >>> 1;
        if (starts[m] <= b) lo = m + 1;
        else hi = m;
      }
      if (owners[lo - 1] !== HOLE) return lo - 1;
      add64(h, l, 0x9e3779b9, 0x7f4a7c15);
      fmix64(r64.hi, r64.lo);
      h = r64.hi;
      l = r64.lo;
    }
  }

  /**
   * @param {number} h
   * @param {number} l
   * @returns {number}
   */
  ownerIndex(h, l) {
    return this.runs.length === 0 ? -1 : this.runs.owners[this.lookup(h, l)];
  }

  /**
   * The owners of the runs from the key's run on, wrapping, holes skipped:
   * one step per run rather than per bucket, the same lists (6.1).
   * @param {number} h
   * @param {number} l
   * @param {(node: number) => boolean} visit
   */
  walk(h, l, visit) {
    if (this.runs.length === 0) return;
    const owners = this.runs.owners;
    const r = this.lookup(h, l);
    for (let k = 0; k < owners.length; k++) {
      const o = owners[(r + k) % owners.length];
      if (o !== HOLE && !visit(o)) return;
    }
  }
}

/**
 * The jump bucket order after a change of the node set (5.4.3), derived
 * from the previous one; nextBucketOrder([], nodes) is the initial order.
 * Clients take orders from snapshots; this is what the server does, for
 * tools and tests. `nodes` may include draining and joining nodes (they
 * want no bucket). It works on runs, as the reference does.
 * @param {readonly BucketRun[]} previous
 * @param {readonly NodeInput[]} nodes
 * @returns {BucketRun[]}
 */
export function nextBucketOrder(previous, nodes) {
  const active = nodes
    .map((n) => makeNode(n))
    .filter((n) => n.state === 'active')
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const want = new Map(active.map((n) => [n.id, n.weight]));
  /** @type {Map<string, number>} */
  const held = new Map();
  /** @type {BucketRun[]} */
  let order = [];
  /**
   * @param {string | null} id
   * @param {number} count
   */
  const push = (id, count) => {
    if (count <= 0) return;
    const last = order[order.length - 1];
    if (last !== undefined && last.id === id) last.count += count;
    else order.push({ id, count });
  };
  // Pass 1: keep each node's lowest-numbered buckets.
  for (const r of previous) {
    let keep = 0;
    if (r.id !== null) {
      const h = held.get(r.id) ?? 0;
      keep = Math.max(0, Math.min(r.count, (want.get(r.id) ?? 0) - h));
      held.set(r.id, h + keep);
    }
    push(r.id, keep);
    push(null, r.count - keep);
  }
  // Pass 2: hand out missing buckets, lowest hole first, then append.
  const missing = active.map((n) => ({ id: n.id, count: n.weight - (held.get(n.id) ?? 0) })).filter((m) => m.count > 0);
  const first = order;
  order = [];
  for (const r of first) {
    let count = r.count;
    while (r.id === null && count > 0 && missing.length > 0) {
      const take = Math.min(count, missing[0].count);
      push(missing[0].id, take);
      count -= take;
      missing[0].count -= take;
      if (missing[0].count === 0) missing.shift();
    }
    push(r.id, count);
  }
  for (const m of missing) push(m.id, m.count);
  while (order.length > 0 && order[order.length - 1].id === null) order.pop();
  return order;
}
