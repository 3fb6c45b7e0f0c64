// Normalizing a node set for a config (spec 2.3) with checks 0 and 2 to 6
// of 2.4 in their order. Check 7 belongs to a server computing a table,
// which a client never does.

import { isXds, needsAddress, takesRamps, usesTableSize } from './algorithms.js';
import { checkNginxAddresses, serverName, serverNames } from './addresses.js';
import { MAX_POINTS } from './config.js';
import { checkEnvoyNodes, envoyEntryTotal } from './envoy-ring-hash.js';
import { fail } from './errors.js';
import { HAPROXY_MAX_WEIGHT, HAPROXY_POINTS_PER_WEIGHT } from './haproxy.js';
import { ketamaDigests } from './ketama.js';
import { NGINX_POINTS_PER_WEIGHT } from './nginx.js';
import { FULL_RAMP, validateNode } from './node.js';
import { twemproxyPointCounts } from './twemproxy.js';

/** @typedef {import('./config.js').Config} Config */
/** @typedef {import('./node.js').Node} Node */

/**
 * @param {Node} a
 * @param {Node} b
 * @returns {number}
 */
export function byId(a, b) {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * The active nodes sorted by id in byte order (ids are ASCII), after the
 * checks; the config must already be valid.
 * @param {Config} c
 * @param {Node[]} nodes
 * @returns {Node[]}
 */
export function normalize(c, nodes) {
  // Check 0: each node's own fields, the first bad node in input order.
  for (const n of nodes) validateNode(n);
  const every = [...nodes].sort(byId);
  for (let i = 1; i < every.length; i++) {
    if (every[i].id === every[i - 1].id) throw fail('DuplicateNodeId', `two nodes have the id ${every[i].id}`);
  }
  const active = every.filter((n) => n.state === 'active');
  if (c.zoneAware) {
    for (const n of active) {
      if (n.zone === null) throw fail('MissingZone', `zone_aware, but active node ${n.id} has no zone`);
    }
  }
  checkAddresses(c, every, active);
  if (!takesRamps(c.algorithm)) {
    for (const n of active) {
      if (n.ramp !== FULL_RAMP) {
        throw fail('RampNotSupported', `node ${n.id} at ramp ${n.ramp}: ${c.algorithm} takes no ramp`);
      }
    }
  }
  if (c.algorithm === 'haproxy') {
    for (const n of active) {
      if (n.weight > HAPROXY_MAX_WEIGHT) {
        throw fail(
          'WeightTooHighForProxy',
          `node ${n.id} has weight ${n.weight}; haproxy takes 1..=${HAPROXY_MAX_WEIGHT}`,
        );
      }
    }
  }
  checkCaps(c, active);
  return active;
}

/**
 * Check 3a: the algorithms that place by address, and the xDS ones
 * (envoy_ring_hash, envoy_maglev), whose nodes are endpoints, need one on
 * every active node, and one their proxy takes as a server.
 * @param {Config} c
 * @param {Node[]} every
 * @param {Node[]} active
 */
function checkAddresses(c, every, active) {
  if (!needsAddress(c.algorithm)) return;
  for (const n of active) {
    if (n.address === null)
      throw fail('MissingAddress', `active node ${n.id} has no address, which every ${c.algorithm} node needs`);
  }
  if (c.algorithm === 'nginx') {
    checkNginxAddresses(active);
    return;
  }
  if (isXds(c.algorithm)) {
    checkEnvoyNodes(every, active, c.algorithm);
    return;
  }
  // twemproxy: every node is checked, not only the active ones, so that a
  // node nutcracker could not be given is refused when it is written.
  for (const n of every) serverName(n);
  serverNames(active);
}

/**
 * Checks 5 and 6: the point cap and maglev's and envoy_maglev's table size.
 * @param {Config} c
 * @param {Node[]} active
 */
function checkCaps(c, active) {
  let weights = 0;
  for (const n of active) weights += n.weight;
  let points = 0;
  switch (c.algorithm) {
    case 'ring':
      points = c.vnodesPerWeight * weights; // full points, whatever the ramps
      break;
    case 'ketama':
      for (const d of ketamaDigests(active)) points += 4 * d;
      break;
    case 'nginx':
      points = NGINX_POINTS_PER_WEIGHT * weights;
      break;
    case 'haproxy':
      points = HAPROXY_POINTS_PER_WEIGHT * weights;
      break;
    case 'twemproxy':
      for (const k of twemproxyPointCounts(active)) points += k;
      break;
    case 'envoy_ring_hash':
      points = envoyEntryTotal(active, c.minimumRingSize, c.maximumRingSize);
      break;
    case 'jump':
      points = weights;
      break;
    case 'table': {
      const cells = c.partitions * Math.min(c.replicationFactor, active.length);
      if (cells > MAX_POINTS) throw fail('TableTooLarge', `${cells} partitions × replicas > ${MAX_POINTS}`);
      break;
    }
  }
  if (points > MAX_POINTS) throw fail('TooManyPoints', `${points} points > ${MAX_POINTS}`);
  if (usesTableSize(c.algorithm) && c.tableSize < active.length) {
    throw fail('TableSizeOutOfRange', `table_size ${c.tableSize} < ${active.length} active nodes`);
  }
}

/**
 * Zone numbers: the distinct zone names sorted (ASCII), a zone's number its
 * position (2.3 step 4); -1 for nodes without a zone.
 * @param {Node[]} active
 * @returns {{ zoneOf: Int32Array, zoneCount: number }}
 */
export function zoneNumbers(active) {
  const names = [...new Set(active.map((n) => n.zone).filter((z) => z !== null))].sort();
  const index = new Map(names.map((z, i) => [z, i]));
  const zoneOf = Int32Array.from(active, (n) => (n.zone === null ? -1 : (index.get(n.zone) ?? -1)));
  return { zoneOf, zoneCount: names.length };
}
