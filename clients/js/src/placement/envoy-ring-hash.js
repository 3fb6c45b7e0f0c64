// envoy_ring_hash (spec 5.10): the ring of Envoy's RING_HASH load balancer
// and gRPC's ring_hash, entry for entry. Nodes are xDS endpoints placed by
// their labels (sent as the endpoint's hash_key), with 2^31 of weight
// shared out by largest remainders; each gets a whole number of entries
// XXH64(label ‖ "_" ‖ decimal(i)) from running sums in binary64, and a key
// goes to the first entry at or after XXH64(key).

import { envoyAddressProblem } from './addresses.js';
import { sortPoints } from './continuum.js';
import { excerpt, fail } from './errors.js';
import { xxh64 } from './hashes.js';
import { compareUtf8, label } from './node.js';
import { r64 } from './u64.js';

/** @typedef {import('./algorithms.js').Algorithm} Algorithm */
/** @typedef {import('./node.js').Node} Node */
/** @typedef {import('./continuum.js').Points} Points */

/** The sum of the endpoints' weights: 2^31, which gRPC and Envoy divide alike. */
export const ENVOY_WEIGHT_TOTAL = 2 ** 31;

const utf8 = new TextEncoder();

/**
 * The node indices in label byte order, the order gRPC sorts endpoints in
 * and ringd's xDS server sends them (5.10.2).
 * @param {Node[]} active
 * @returns {number[]}
 */
function labelOrder(active) {
  return active.map((_, i) => i).sort((a, b) => compareUtf8(label(active[a]), label(active[b])) || a - b);
}

/**
 * Each active node's EDS weight in index order (5.10.1): 2^31 shared out
 * in proportion to weight × ramp, ⌊s × 2^31 / S⌋ each, then one more to
 * each of the largest remainders, equal remainders in label byte order.
 * The products pass 2^53, so they are BigInts. A node whose share is 0 is
 * WeightShareTooSmall (EDS weights start at 1). envoy_maglev's table is
 * filled on these weights too (5.11).
 * @param {Node[]} active
 * @param {Algorithm} [algorithm] the ring's, for the message: envoy_ring_hash or envoy_maglev
 * @returns {number[]}
 */
export function envoyEndpointWeights(active, algorithm = 'envoy_ring_hash') {
  const scaled = active.map((n) => BigInt(n.weight * n.ramp));
  let total = 0n;
  for (const s of scaled) total += s;
  if (total === 0n) return [];
  const unit = BigInt(ENVOY_WEIGHT_TOTAL);
  const weights = scaled.map((s) => Number((s * unit) / total));
  const rest = scaled.map((s) => (s * unit) % total);
  let given = 0;
  for (const w of weights) given += w;
  const byLabel = labelOrder(active);
  const rank = new Array(active.length);
  byLabel.forEach((i, k) => {
    rank[i] = k;
  });
  const order = active
    .map((_, i) => i)
    .sort((a, b) => (rest[a] !== rest[b] ? (rest[b] > rest[a] ? 1 : -1) : rank[a] - rank[b]));
  for (const i of order.slice(0, ENVOY_WEIGHT_TOTAL - given)) weights[i]++;
  const i = weights.indexOf(0);
  if (i >= 0) {
    const n = active[i];
    throw fail(
      'WeightShareTooSmall',
      `node ${n.id} has ${n.weight * n.ramp} of the ${total} total weight (weight × ramp), less than one part in 2^31, the smallest share an ${algorithm} endpoint can have: raise its weight or ramp, or lower the others'`,
    );
  }
  return weights;
}

/**
 * How many entries each endpoint gets, endpoints in the order the proxy
 * takes them with their EDS weights (5.10.2): Envoy's and gRPC's steps in
 * binary64, each operation rounded on its own (JavaScript never fuses a
 * multiply and an add).
 * @param {readonly number[]} weights
 * @param {number} minimum
 * @param {number} maximum
 * @returns {number[]}
 */
export function envoyEntryCounts(weights, minimum, maximum) {
  let sum = 0;
  for (const w of weights) sum += w;
  const normalized = weights.map((w) => w / sum);
  let lightest = 1;
  for (const x of normalized) lightest = Math.min(lightest, x);
  const scale = Math.min(Math.ceil(lightest * minimum) / lightest, maximum);
  let current = 0;
  let target = 0;
  return normalized.map((x) => {
    target += scale * x;
    let count = 0;
    while (current < target) {
      count++;
      current += 1;
    }
    return count;
  });
}

/**
 * The entries `active` (checked) would place: at most the maximum ring
 * size plus one per node, capped by 2.4 check 5.
 * @param {Node[]} active
 * @param {number} minimum
 * @param {number} maximum
 * @returns {number}
 */
export function envoyEntryTotal(active, minimum, maximum) {
  if (active.length === 0) return 0;
  let total = 0;
  for (const c of envoyEntryCounts(envoyEndpointWeights(active), minimum, maximum)) total += c;
  return total;
}

/**
 * Check 3a for envoy_ring_hash and envoy_maglev (5.10.4, 5.11), after
 * MissingAddress: every node's address in id order, active or not, so
 * that a node no xDS client could be given is refused when it is written
 * (AddressNotServer); then among the active nodes one label each
 * (EndpointKeyTaken), one address each (DuplicateAddress: gRPC keys
 * endpoints by address) and a share of 2^31 each (WeightShareTooSmall).
 * @param {Node[]} every all nodes in id order
 * @param {Node[]} active the active nodes in id order
 * @param {Algorithm} [algorithm] the ring's, for the messages: envoy_ring_hash or envoy_maglev
 */
export function checkEnvoyNodes(every, active, algorithm = 'envoy_ring_hash') {
  for (const n of every) {
    if (n.address === null) continue;
    const problem = envoyAddressProblem(n.address);
    if (problem !== null) {
      throw fail('AddressNotServer', `node ${n.id} at ${JSON.stringify(excerpt(n.address))}: ${problem}`);
    }
  }
  const byLabel = labelOrder(active);
  for (let k = 1; k < byLabel.length; k++) {
    const [a, b] = [active[byLabel[k - 1]], active[byLabel[k]]];
    if (label(a) === label(b)) {
      throw fail(
        'EndpointKeyTaken',
        `${a.id} and ${b.id} would both be the ${algorithm} endpoint ${JSON.stringify(excerpt(label(a)))}: give one a distinct hash_key`,
      );
    }
  }
  // Addresses are ASCII here (checked above), so string order is byte order.
  const byAddress = [...active].sort((a, b) =>
    (a.address ?? '') < (b.address ?? '') ? -1 : (a.address ?? '') > (b.address ?? '') ? 1 : 0,
  );
  for (let k = 1; k < byAddress.length; k++) {
    const [a, b] = [byAddress[k - 1], byAddress[k]];
    if (a.address === b.address) {
      throw fail('DuplicateAddress', `nodes ${a.id} and ${b.id} share the address ${JSON.stringify(a.address)}`);
    }
  }
  envoyEndpointWeights(active, algorithm);
}

/**
 * The ring of the active nodes (checked), sorted by position with a
 * stable sort: the entries are generated in label order, so equal
 * positions (two strings with one XXH64, never seen) keep it (5.10.2).
 * @param {Node[]} active
 * @param {number} minimum
 * @param {number} maximum
 * @returns {Points}
 */
export function buildEnvoyRingHash(active, minimum, maximum) {
  if (active.length === 0) return { hi: new Uint32Array(0), lo: new Uint32Array(0), owner: new Uint32Array(0) };
  const weights = envoyEndpointWeights(active);
  const order = labelOrder(active);
  const counts = envoyEntryCounts(
    order.map((i) => weights[i]),
    minimum,
    maximum,
  );
  let total = 0;
  for (const c of counts) total += c;
  const hi = new Uint32Array(total);
  const lo = new Uint32Array(total);
  const owner = new Uint32Array(total);
  let j = 0;
  order.forEach((node, e) => {
    const b = utf8.encode(`${label(active[node])}_`);
    // The label and "_", then i in decimal: at most 7 digits (i < 2^23).
    const buf = new Uint8Array(b.length + 7);
    buf.set(b);
    for (let i = 0; i < counts[e]; i++) {
      let end = b.length;
      for (const d of String(i)) buf[end++] = d.charCodeAt(0);
      xxh64(buf.subarray(0, end), 0);
      hi[j] = r64.hi;
      lo[j] = r64.lo;
      owner[j++] = node;
    }
  });
  return sortPoints({ hi, lo, owner }, true);
}
