// envoy_maglev (spec 5.11): the table Envoy's MAGLEV load balancer builds
// from the endpoints ringd's xDS server sends, slot for slot. Nodes are
// xDS endpoints placed by their labels, as under envoy_ring_hash, with the
// same EDS weights (2^31 shared out by largest remainders, 5.10.1). Envoy
// divides each by their sum, 2^31, exactly, so its binary64 turn test is
// the integer one on those weights: the table is maglev's fill (5.3) with
// weight_i = e_i, and a key goes to table[XXH64(key) mod M].

import { envoyEndpointWeights } from './envoy-ring-hash.js';
import { buildMaglev } from './maglev.js';

/** @typedef {import('./node.js').Node} Node */

/**
 * The table of m slots (prime, at least active.length) for the active
 * nodes (checked, in id order), as node indices; empty with no node.
 * @param {Node[]} active
 * @param {number} m
 * @returns {Uint32Array}
 */
export function buildEnvoyMaglev(active, m) {
  if (active.length === 0) return new Uint32Array(0);
  return buildMaglev(active, envoyEndpointWeights(active, 'envoy_maglev'), m);
}
