// rendezvous (spec 5.5): weighted highest random weight in exact integer
// arithmetic, so every language agrees: no platform logarithm. Lookups
// run in 32-bit halves; only products past 2^53 go through BigInt.

import { hash64 } from './hashes.js';
import { label } from './node.js';
import { fmix64, r64 } from './u64.js';

/** @typedef {import('./node.js').Node} Node */
/** @typedef {import('./algorithms.js').Hash} Hash */

const utf8 = new TextEncoder();
const TWO32 = 4294967296;
const INV16 = 1 / 65536;
const INV32 = 1 / TWO32;

/**
 * Each node's label hash nh_i, as halves.
 * @param {Node[]} active
 * @param {Hash} hash
 * @returns {{ hi: Uint32Array, lo: Uint32Array }}
 */
export function buildRendezvous(active, hash) {
  const hi = new Uint32Array(active.length);
  const lo = new Uint32Array(active.length);
  active.forEach((n, i) => {
    hash64(hash, utf8.encode(label(n)));
    hi[i] = r64.hi;
    lo[i] = r64.lo;
  });
  return { hi, lo };
}

/**
 * L(x) = ⌊2^32 · log2 x⌋ for x = v + 1, 1 ≤ x ≤ 2^64, by repeated squaring
 * of the mantissa in 1.63 fixed point (5.5); v as halves. Taking v rather
 * than x keeps x = 2^64 representable. The result is below 2^39.
 * @param {number} vh
 * @param {number} vl
 * @returns {number}
 */
export function log2Q32(vh, vl) {
  if (vh === 0xffffffff && vl === 0xffffffff) return 64 * TWO32;
  // x = v + 1
  let xl = (vl + 1) >>> 0;
  let xh = xl === 0 ? (vh + 1) >>> 0 : vh;
  const e = xh !== 0 ? 63 - Math.clz32(xh) : 31 - Math.clz32(xl);
  // m = x << (63 − e), in [2^63, 2^64)
  const s = 63 - e;
  if (s >= 32) {
    xh = xl << (s - 32);
    xl = 0;
  } else if (s > 0) {
    xh = (xh << s) | (xl >>> (32 - s));
    xl = xl << s;
  }
  let mh = xh >>> 0;
  let ml = xl >>> 0;
  let frac = 0;
  for (let i = 0; i < 32; i++) {
    // m × m as four words w3:w2:w1:w0, from three u32 products written
    // out here (a call with u32 arguments boxes them: this loop runs 32
    // times a node and key). A product's high word: a·b = y·2^16 + x with
    // x = a·b₀ and y = a·b₁ below 2^48, exact in binary64; y splits at
    // 2^16 by ToInt32's modulo. Its low word is Math.imul's.
    let x = ml * (ml & 0xffff);
    let y = ml * (ml >>> 16);
    let yl = y & 0xffff;
    const w0h = (y - yl) * INV16 + Math.floor((x + yl * 65536) * INV32);
    x = mh * (ml & 0xffff);
    y = mh * (ml >>> 16);
    yl = y & 0xffff;
    const ch = (y - yl) * INV16 + Math.floor((x + yl * 65536) * INV32);
    const cl = Math.imul(mh, ml) >>> 0;
    x = mh * (mh & 0xffff);
    y = mh * (mh >>> 16);
    yl = y & 0xffff;
    const hh = (y - yl) * INV16 + Math.floor((x + yl * 65536) * INV32);
    const hl = Math.imul(mh, mh) >>> 0;
    // The sums stay below 2^35, exact: ToUint32 takes them modulo 2^32,
    // and × 2^-32 gives the carry (cheaper than % and / on doubles).
    const s1 = w0h + 2 * cl;
    const w1 = s1 >>> 0;
    const s2 = hl + 2 * ch + (s1 - w1) * INV32;
    const w2 = s2 >>> 0;
    const w3 = hh + (s2 - w2) * INV32;
    // (m × m) >> 63 is (w3:w2) × 2 + (w1 >> 31), below 2^65: at or above
    // 2^64 exactly when w3's top bit is set, and then halving it leaves
    // w3:w2.
    frac *= 2;
    if (w3 >= 0x80000000) {
      mh = w3;
      ml = w2;
      frac += 1;
    } else {
      mh = ((w3 << 1) | (w2 >>> 31)) >>> 0;
      ml = ((w2 << 1) | (w1 >>> 31)) >>> 0;
    }
  }
  return e * TWO32 + frac;
}

/**
 * cost = 64·2^32 − L(draw + 1), in 0..=2^38.
 * @param {number} dh
 * @param {number} dl
 * @returns {number}
 */
export function rendezvousCost(dh, dl) {
  return 64 * TWO32 - log2Q32(dh, dl);
}

/**
 * Whether cost a / weight a < cost b / weight b, as exact cross products
 * (they pass 2^53 with big weights: then BigInt).
 * @param {number} ca
 * @param {number} wa
 * @param {number} cb
 * @param {number} wb
 * @returns {number} negative, zero or positive
 */
function compareCosts(ca, wa, cb, wb) {
  const x = ca * wb;
  const y = cb * wa;
  if (x < 2 ** 53 && y < 2 ** 53) return x - y;
  const bx = BigInt(ca) * BigInt(wb);
  const by = BigInt(cb) * BigInt(wa);
  return bx < by ? -1 : bx > by ? 1 : 0;
}

/** Lookups over label hashes and weights (5.5, 6.1). */
export class RendezvousLookup {
  /**
   * @param {Uint32Array} hi label hashes' high halves by node index
   * @param {Uint32Array} lo their low halves
   * @param {number[]} weights weights, or weight × ramp in a ramped set
   */
  constructor(hi, lo, weights) {
    this.hi = hi;
    this.lo = lo;
    this.weights = weights;
    // All weights equal: order by draw alone (5.5's shortcut).
    this.uniform = weights.every((w) => w === weights[0]);
  }

  /**
   * @param {number} h
   * @param {number} l
   * @returns {number}
   */
  ownerIndex(h, l) {
    const n = this.hi.length;
    if (n === 0) return -1;
    let best = 0;
    fmix64((h ^ this.hi[0]) >>> 0, (l ^ this.lo[0]) >>> 0);
    let bh = r64.hi;
    let bl = r64.lo;
    let bestCost = this.uniform ? 0 : rendezvousCost(bh, bl);
    for (let i = 1; i < n; i++) {
      fmix64((h ^ this.hi[i]) >>> 0, (l ^ this.lo[i]) >>> 0);
      const dh = r64.hi;
      const dl = r64.lo;
      if (this.uniform) {
        // The largest draw; the first of equal draws, the lowest index.
        if (dh > bh || (dh === bh && dl > bl)) {
          best = i;
          bh = dh;
          bl = dl;
        }
        continue;
      }
      const cost = rendezvousCost(dh, dl);
      const c = compareCosts(cost, this.weights[i], bestCost, this.weights[best]);
      if (c < 0 || (c === 0 && (dh > bh || (dh === bh && dl > bl)))) {
        best = i;
        bh = dh;
        bl = dl;
        bestCost = cost;
      }
    }
    return best;
  }

  /**
   * Every node in the order of 5.5, best first.
   * @param {number} h
   * @param {number} l
   * @param {(node: number) => boolean} visit
   */
  walk(h, l, visit) {
    const scores = Array.from(this.hi, (nh, i) => {
      fmix64((h ^ nh) >>> 0, (l ^ this.lo[i]) >>> 0);
      const dh = r64.hi;
      const dl = r64.lo;
      return { node: i, dh, dl, cost: this.uniform ? 0 : rendezvousCost(dh, dl), weight: this.weights[i] };
    });
    scores.sort(
      (a, b) =>
        compareCosts(a.cost, a.weight, b.cost, b.weight) ||
        (a.dh !== b.dh ? b.dh - a.dh : b.dl - a.dl) ||
        a.node - b.node,
    );
    for (const s of scores) if (!visit(s.node)) return;
  }
}
