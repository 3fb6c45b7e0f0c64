// A sorted point list on a circle, shared by ring, ketama, nginx,
// twemproxy, envoy_ring_hash and haproxy's boundaries, with a bucket table
// in front of it.
//
// Positions are held as two Uint32Arrays of halves (hi, lo), so no lookup
// touches a BigInt. A 32-bit circle keeps its positions in `hi` with `lo`
// zero: the order is the same, and one comparison serves both circles.
//
// The bucket table, as the Go client's: a bucket over the top bits of a
// position answers most lookups in one read. A bucket without a point
// names the owner of all its positions; a bucket with one point says where
// the point splits it, the owner after the split being the next bucket's
// first owner; only buckets holding two or more points are scanned. A
// binary search over 160,000 points costs a cache miss on most of its
// seventeen steps.

/** A kind in a bucket's top two bits. */
const KIND_SHIFT = 30;
const PAYLOAD = (1 << KIND_SHIFT) - 1;
/** Two or more points before the bucket's last position: payload = first point. */
const MANY = 0;
/** One point before the bucket's last position: payload = its offset's top 30 bits. */
const ONE = 1;
/** No point before the bucket's last position: the entry owns it all. */
const NONE = 2;

/**
 * Points in the algorithm's order: parallel arrays of position halves and
 * owning node indices.
 * @typedef {object} Points
 * @property {Uint32Array} hi
 * @property {Uint32Array} lo
 * @property {Uint32Array} owner
 */

export class Continuum {
  /**
   * @param {Points} points already in the algorithm's order
   * @param {64 | 32} bits the circle's size
   */
  constructor(points, bits) {
    this.hi = points.hi;
    this.lo = points.lo;
    this.owner = points.owner;
    this.n = points.owner.length;
    this.bits = bits;
    /** @type {Uint32Array | null} bucket b is words 2b (kind, payload) and 2b + 1 (entry) */
    this.table = null;
    this.shift = 0; // hi bits dropped to get a bucket number
    this.mask = 0; // bucket numbers
    this.lowMask = 0; // the hi bits inside a bucket
    this.up = 0; // an offset's hi bits go up by this much into its top 30 bits
    this.down = 0; // and lo's bits down by this much
    this.buildTable();
  }

  /**
   * Two to four buckets per point (about one bucket in thirty then holds
   * two points or more), capped at 2^20 buckets (8 MiB); tables within
   * 2^16 buckets get up to eight times as many. None without points.
   */
  buildTable() {
    const n = this.n;
    if (n === 0 || n > PAYLOAD) return;
    const base = Math.min(Math.max(32 - Math.clz32(n), 1), 20);
    const width = Math.min(Math.max(base + 1, Math.min(base + 2, 16)), 20);
    const shift = 32 - width;
    this.shift = shift;
    this.mask = (1 << width) - 1;
    this.lowMask = (1 << shift) - 1;
    this.up = width - 2;
    this.down = 34 - width;
    const { hi, lo, owner } = this;
    const lastLo = this.bits === 64 ? 0xffffffff : 0;
    const table = new Uint32Array(2 << width);
    let i = 0;
    for (let b = 0; b <= this.mask; b++) {
      const startHi = (b << shift) >>> 0;
      const lastHi = (startHi | this.lowMask) >>> 0;
      while (i < n && hi[i] < startHi) i++;
      let word;
      let entry;
      if (i === n) {
        word = NONE << KIND_SHIFT;
        entry = owner[0];
      } else {
        // Points before the bucket's last position split it; one at the
        // last position owns it all, as the first at or after it.
        let k = i;
        while (k < n && (hi[k] < lastHi || (hi[k] === lastHi && lo[k] < lastLo))) k++;
        entry = owner[i];
        if (k === i) word = NONE << KIND_SHIFT;
        else if (k - i === 1 && !(k < n && hi[k] === lastHi && lo[k] === lastLo)) {
          word = (ONE << KIND_SHIFT) | this.offset(hi[i], lo[i]);
        } else word = (MANY << KIND_SHIFT) | i;
      }
      table[2 * b] = word >>> 0;
      table[2 * b + 1] = entry;
    }
    this.table = table;
  }

  /**
   * The top 30 bits of a position's offset in its bucket; exact on a
   * 32-bit circle, whose offsets have at most 29 bits.
   * @param {number} h
   * @param {number} l
   * @returns {number}
   */
  offset(h, l) {
    return ((h & this.lowMask) << this.up) | (l >>> this.down);
  }

  /**
   * The index of the first point at or after (h, l), wrapping to 0 (5.1).
   * The circle must have a point.
   * @param {number} h
   * @param {number} l
   * @returns {number}
   */
  successor(h, l) {
    const { hi, lo, n } = this;
    let a = 0;
    let b = n;
    while (a < b) {
      const m = (a + b) >>> 1;
      if (hi[m] < h || (hi[m] === h && lo[m] < l)) a = m + 1;
      else b = m;
    }
    return a === n ? 0 : a;
  }

  /**
   * The index of the node owning position (h, l), or -1 without points.
   * @param {number} h
   * @param {number} l
   * @returns {number}
   */
  ownerIndex(h, l) {
    const table = this.table;
    if (table === null) return this.n === 0 ? -1 : this.owner[this.successor(h, l)];
    const b = h >>> this.shift;
    const word = table[2 * b];
    const kind = word >>> KIND_SHIFT;
    if (kind === NONE) return table[2 * b + 1];
    if (kind === ONE) {
      const off = ((h & this.lowMask) << this.up) | (l >>> this.down);
      const split = word & PAYLOAD;
      if (off < split || (off === split && this.bits === 32)) return table[2 * b + 1];
      if (off > split) return table[2 * ((b + 1) & this.mask) + 1];
      // The same top bits as the point: only its position tells.
      return this.owner[this.successor(h, l)];
    }
    const { hi, lo, n } = this;
    let i = word & PAYLOAD;
    while (i < n && (hi[i] < h || (hi[i] === h && lo[i] < l))) i++;
    return this.owner[i === n ? 0 : i];
  }

  /**
   * Visits the owners of the points from successor(h, l) up, wrapping,
   * each point once (6.1), until visit returns false.
   * @param {number} h
   * @param {number} l
   * @param {(node: number) => boolean} visit
   */
  walk(h, l, visit) {
    const n = this.n;
    if (n === 0) return;
    const s = this.successor(h, l);
    for (let k = 0; k < n; k++) {
      const i = s + k < n ? s + k : s + k - n;
      if (!visit(this.owner[i])) return;
    }
  }
}

/**
 * Sorts points by position, then node index (5.1); with `stable`, by
 * position alone, keeping the input order of equal positions (twemproxy,
 * envoy_ring_hash).
 * @param {Points} points
 * @param {boolean} [stable]
 * @returns {Points}
 */
export function sortPoints(points, stable = false) {
  const { hi, lo, owner } = points;
  const order = new Uint32Array(owner.length);
  for (let i = 0; i < order.length; i++) order[i] = i;
  order.sort((a, b) => {
    if (hi[a] !== hi[b]) return hi[a] < hi[b] ? -1 : 1;
    if (lo[a] !== lo[b]) return lo[a] < lo[b] ? -1 : 1;
    if (stable) return a - b;
    return owner[a] !== owner[b] ? owner[a] - owner[b] : a - b;
  });
  return {
    hi: order.map((i) => hi[i]),
    lo: order.map((i) => lo[i]),
    owner: order.map((i) => owner[i]),
  };
}
