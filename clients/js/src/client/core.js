// Everything the client assumes of the placement core, in one place: how
// a snapshot is decoded, what it says, and how its placement is built and
// verified. The rest of the client goes through this module only.

import { parseSnapshot } from '../placement/index.js';

/** @typedef {ReturnType<typeof parseSnapshot>} Snapshot */
/** @typedef {Awaited<ReturnType<Snapshot["placement"]>>} Placement */

/**
 * Decodes a snapshot's JSON; throws what the core throws.
 * @param {string} text
 * @returns {Snapshot}
 */
export function decodeSnapshot(text) {
  return parseSnapshot(text);
}

/**
 * What the watch needs to know of a snapshot.
 * @param {Snapshot} s
 */
export function describeSnapshot(s) {
  return {
    ring: s.ring,
    version: s.version,
    fingerprint: s.fingerprint,
    isTable: s.config.algorithm === 'table',
    hasMoves: s.tableMoves !== undefined && s.tableMoves !== null,
    activeNodes: activeNodeIds(s),
  };
}

/**
 * The ids of the active nodes, in the snapshot's (id) order; a node
 * without a state is active (spec 2.2).
 * @param {Snapshot} s
 * @returns {string[]}
 */
export function activeNodeIds(s) {
  return s.nodes.filter((n) => n.state === undefined || n.state === 'active').map((n) => n.id);
}

/**
 * Builds and verifies s's placement: from the snapshot alone, from the
 * previous placement and the version's table moves, or from a downloaded
 * table body. Rejects (a fingerprint mismatch, a refused snapshot) with
 * the core's error.
 * @param {Snapshot} s
 * @param {{ previous?: Placement, table?: Uint8Array }} source
 * @returns {Promise<Placement>}
 */
export function buildPlacement(s, source) {
  return s.placement({ encoding: source.table, previous: source.previous });
}
