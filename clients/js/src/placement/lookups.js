// Each algorithm's lookup structure over a placement's parts: what
// Placement searches for a key's hash (spec 5 and 6).

import { Continuum } from './continuum.js';
import { haproxyBoundaries } from './haproxy.js';
import { JumpLookup } from './jump.js';
import { MaglevLookup } from './maglev.js';
import { RendezvousLookup } from './rendezvous.js';
import { TableLookup } from './table.js';

/** @typedef {import('./encoding.js').Encoded} Encoded */
/** @typedef {import('./node.js').Node} Node */
/** @typedef {import('./preference.js').Walker} Walker */

/**
 * @typedef {Walker & { ownerIndex(h: number, l: number): number }} Lookup
 */

/**
 * The lookup structure of a placement's body.
 * @param {Encoded} parts
 * @returns {Lookup}
 */
export function lookupOf(parts) {
  const body = parts.body;
  switch (body.algorithm) {
    case 'ring':
    case 'envoy_ring_hash':
      return new Continuum(body.points, 64);
    case 'ketama':
    case 'nginx':
    case 'twemproxy':
      return new Continuum(body.points, 32);
    case 'haproxy':
      return new Continuum(haproxyBoundaries(body.points), 32);
    case 'maglev':
    case 'envoy_maglev':
      return new MaglevLookup(body.table);
    case 'jump':
      return new JumpLookup(body.runs);
    case 'rendezvous':
      return new RendezvousLookup(body.hi, body.lo, placingWeights(parts.nodes, parts.ramped));
    case 'table':
      return new TableLookup(body);
  }
}

/**
 * The weights maglev and rendezvous place by: weight × ramp in a ramped
 * set, else the weights (2.2).
 * @param {Node[]} active
 * @param {boolean} ramped
 * @returns {number[]}
 */
export function placingWeights(active, ramped) {
  return active.map((n) => (ramped ? n.weight * n.ramp : n.weight));
}
