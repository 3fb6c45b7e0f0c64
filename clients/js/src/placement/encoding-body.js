// The bodies of the canonical encoding (spec 9.1), one per algorithm:
// their sizes and how they are written. encoding.js writes the header and
// reads both back. No npm package, as encoding.js.

import { runLength } from './jump.js';
import { tableIndexWidth } from './table.js';

/** @typedef {import('./encoding.js').Body} Body */
/** @typedef {import('./continuum.js').Points} Points */

/**
 * @param {Body} body
 * @param {number} nodes
 * @returns {number}
 */
export function bodySize(body, nodes) {
  switch (body.algorithm) {
    case 'ring':
    case 'envoy_ring_hash':
      return 4 + 12 * body.points.owner.length;
    case 'ketama':
    case 'nginx':
      return 4 + 8 * body.points.owner.length;
    case 'twemproxy':
      return 1 + (body.hashTag === null ? 0 : 2) + 4 + 8 * body.points.owner.length;
    case 'haproxy':
      return 1 + 4 * nodes + 4 + 8 * body.points.owner.length;
    case 'maglev':
    case 'envoy_maglev':
      return 4 + 4 * body.table.length;
    case 'jump':
      return 4 + 4 * body.runs.length;
    case 'rendezvous':
      return 8 * nodes;
    case 'table':
      return 5 + body.cells.length * tableIndexWidth(nodes);
  }
}

/**
 * @param {Points} points
 * @param {boolean} wide u64 positions (ring) rather than u32
 * @param {DataView} view
 * @param {number} at
 * @returns {number}
 */
function writePoints(points, wide, view, at) {
  const { hi, lo, owner } = points;
  view.setUint32(at, owner.length, true);
  at += 4;
  for (let i = 0; i < owner.length; i++) {
    if (wide) {
      view.setUint32(at, lo[i], true);
      view.setUint32(at + 4, hi[i], true);
      at += 8;
    } else {
      view.setUint32(at, hi[i], true);
      at += 4;
    }
    view.setUint32(at, owner[i], true);
    at += 4;
  }
  return at;
}

/**
 * @param {Body} body
 * @param {number} nodes
 * @param {DataView} view
 * @param {number} at
 */
export function writeBody(body, nodes, view, at) {
  switch (body.algorithm) {
    case 'ring':
    case 'ketama':
    case 'nginx':
    case 'envoy_ring_hash':
      writePoints(body.points, body.algorithm === 'ring' || body.algorithm === 'envoy_ring_hash', view, at);
      return;
    case 'twemproxy': {
      const tag = body.hashTag ?? '';
      view.setUint8(at++, tag.length);
      for (let i = 0; i < tag.length; i++) view.setUint8(at++, tag.charCodeAt(i));
      writePoints(body.points, false, view, at);
      return;
    }
    case 'haproxy':
      view.setUint8(at++, body.avalanche ? 1 : 0);
      for (const s of body.serverIds) {
        view.setUint32(at, s, true);
        at += 4;
      }
      writePoints(body.points, false, view, at);
      return;
    case 'maglev':
    case 'envoy_maglev':
      view.setUint32(at, body.table.length, true);
      at += 4;
      for (const o of body.table) {
        view.setUint32(at, o, true);
        at += 4;
      }
      return;
    case 'jump': {
      const runs = body.runs;
      view.setUint32(at, runs.length, true);
      at += 4;
      for (let r = 0; r < runs.owners.length; r++) {
        const o = runs.owners[r];
        for (let k = runLength(runs, r); k > 0; k--) {
          view.setUint32(at, o, true);
          at += 4;
        }
      }
      return;
    }
    case 'rendezvous':
      for (let i = 0; i < body.hi.length; i++) {
        view.setUint32(at, body.lo[i], true);
        view.setUint32(at + 4, body.hi[i], true);
        at += 8;
      }
      return;
    case 'table': {
      view.setUint32(at, body.partitions, true);
      view.setUint8(at + 4, body.replicas);
      at += 5;
      const wide = tableIndexWidth(nodes) === 4;
      for (const c of body.cells) {
        if (wide) view.setUint32(at, c, true);
        else view.setUint16(at, c, true);
        at += wide ? 4 : 2;
      }
    }
  }
}
