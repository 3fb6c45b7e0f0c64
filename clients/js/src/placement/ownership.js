// Ownership units (spec 7), from what a canonical encoding holds: each
// active node's exact integer units out of a total, and the floats derived
// from them by the spec's normative recipe (each integer converted to
// binary64 once, then one division), so they equal the server's bit for
// bit. No key is hashed and no npm package is imported, directly or not:
// the console computes ownership from a downloaded encoding with this.

import { haproxyBoundaries } from './haproxy.js';
import { runLength, HOLE } from './jump.js';

/** @typedef {import('./encoding.js').Encoded} Encoded */
/** @typedef {import('./continuum.js').Points} Points */

/**
 * What ownership units count.
 * @typedef {'arcs' | 'table_entries' | 'buckets' | 'weights' | 'partitions'} Basis
 */

/**
 * One node's part of an ownership report.
 * @typedef {object} NodeShare
 * @property {string} id
 * @property {bigint} units the node's exact units
 * @property {number} share f64(units) / f64(totalUnits)
 * @property {number} expectedShare the node's scaled weight over their sum, in binary64
 * @property {number} ratio share / expectedShare
 * @property {number | null} replicas under table, the table cells (primary or not) holding the node
 */

/**
 * Section 7's report.
 * @typedef {object} Ownership
 * @property {Basis} basis
 * @property {bigint} totalUnits the units' sum; 0 with no active node
 * @property {NodeShare[]} nodes the active nodes in id order
 * @property {number} maxOverMean the largest ratio, 0 with no node
 */

/**
 * Section 7's report for a decoded encoding (or a placement's parts).
 * @param {Encoded} e
 * @returns {Ownership}
 */
export function ownershipOf(e) {
  const n = e.nodes.length;
  const units = new Array(n).fill(0n);
  /** @type {number[] | null} */
  let replicas = null;
  /** @type {bigint} */
  let total;
  /** @type {Basis} */
  let basis;
  const body = e.body;
  switch (body.algorithm) {
    case 'ring':
    case 'envoy_ring_hash':
      basis = 'arcs';
      total = arcs(body.points, 64, units);
      break;
    case 'ketama':
    case 'nginx':
    case 'twemproxy':
      basis = 'arcs';
      total = arcs(body.points, 32, units);
      break;
    case 'haproxy':
      basis = 'arcs';
      total = arcs(haproxyBoundaries(body.points), 32, units);
      break;
    case 'maglev':
    case 'envoy_maglev': {
      basis = 'table_entries';
      const counts = new Array(n).fill(0);
      for (const o of body.table) counts[o]++;
      counts.forEach((c, i) => {
        units[i] = BigInt(c);
      });
      total = BigInt(body.table.length);
      break;
    }
    case 'jump':
      basis = 'buckets';
      total = 0n;
      for (let r = 0; r < body.runs.owners.length; r++) {
        const o = body.runs.owners[r];
        if (o === HOLE) continue;
        const len = BigInt(runLength(body.runs, r));
        units[o] += len;
        total += len;
      }
      break;
    case 'rendezvous':
      basis = 'weights';
      total = 0n;
      e.nodes.forEach((node, i) => {
        units[i] = BigInt(e.ramped ? node.weight * node.ramp : node.weight);
        total += units[i];
      });
      break;
    case 'table': {
      basis = 'partitions';
      const primaries = new Array(n).fill(0);
      replicas = new Array(n).fill(0);
      const { partitions, replicas: r, cells } = body;
      if (r > 0) for (let p = 0; p < partitions; p++) primaries[cells[p * r]]++;
      for (const c of cells) replicas[c]++;
      primaries.forEach((c, i) => {
        units[i] = BigInt(c);
      });
      total = BigInt(partitions);
      break;
    }
  }
  if (n === 0) total = 0n;
  // Scaled weights: weight × ramp, a node without a ramp counting 65,536;
  // their sum can pass 2^53, so it is summed exactly.
  let weightTotal = 0n;
  for (const node of e.nodes) weightTotal += BigInt(node.weight * node.ramp);
  const totalF = Number(total);
  const weightF = Number(weightTotal);
  let maxOverMean = 0;
  const nodes = e.nodes.map((node, i) => {
    const share = Number(units[i]) / totalF;
    const expectedShare = (node.weight * node.ramp) / weightF;
    const ratio = share / expectedShare;
    maxOverMean = Math.max(maxOverMean, ratio);
    return { id: node.id, units: units[i], share, expectedShare, ratio, replicas: replicas ? replicas[i] : null };
  });
  return { basis, totalUnits: total, nodes, maxOverMean };
}

/**
 * The arcs of 7: point j owns (p[j−1], p[j]], point 0 also [0, p[0]] and
 * the wrap past the last point. Adds each node's units; returns 2^bits.
 * @param {Points} points sorted
 * @param {64 | 32} bits
 * @param {bigint[]} units
 * @returns {bigint}
 */
function arcs(points, bits, units) {
  const { hi, lo, owner } = points;
  const total = 1n << BigInt(bits);
  const n = owner.length;
  if (n === 0) return total;
  // Positions as numbers when they fit (32-bit circles), else as BigInt.
  /** @type {(j: number) => bigint} */
  const pos = bits === 32 ? (j) => BigInt(hi[j]) : (j) => (BigInt(hi[j]) << 32n) | BigInt(lo[j]);
  if (bits === 32) {
    // Sums per node stay below 2^53 as numbers: add them without BigInt.
    const sums = new Float64Array(units.length);
    sums[owner[0]] += hi[0] + 1;
    for (let j = 1; j < n; j++) sums[owner[j]] += hi[j] - hi[j - 1];
    sums[owner[0]] += 4294967295 - hi[n - 1];
    sums.forEach((s, i) => {
      units[i] += BigInt(s);
    });
    return total;
  }
  let prev = pos(0);
  units[owner[0]] += prev + 1n; // [0, p0]: p0 + 1 positions
  for (let j = 1; j < n; j++) {
    const p = pos(j);
    units[owner[j]] += p - prev;
    prev = p;
  }
  units[owner[0]] += total - 1n - prev;
  return total;
}
