// A table version from the previous version's table and its moves (spec
// 9.4): a u32 count, then per move a u32 partition, a u8 slot and the
// node's index among the new version's active nodes (u16, or u32 above
// 65,535 nodes).

import { fail } from './errors.js';
import { tableIndexWidth } from './table.js';

/** @typedef {import('./node.js').Node} Node */
/** @typedef {import('./placement.js').Placement} Placement */

/**
 * Applies moves to the previous table's rows, as ids (node indices shift
 * when nodes come and go), following 9.4's steps; returns the new rows.
 * @param {Placement} previous
 * @param {Node[]} active the new version's active nodes
 * @param {number} partitions
 * @param {number} replicationFactor
 * @param {Uint8Array} moves
 * @returns {string[][]}
 */
export function applyMoves(previous, active, partitions, replicationFactor, moves) {
  const prevRows = previous.tableRows();
  if (prevRows === null) throw fail('InvalidTable', 'the previous placement is not a table');
  const n = active.length;
  const r = Math.min(replicationFactor, n);
  const width = tableIndexWidth(n);
  // Step 1: the partition count, the length, the node indices.
  if (prevRows.length !== partitions) {
    throw fail('InvalidTable', `moves cannot change the partition count (${prevRows.length} to ${partitions})`);
  }
  if (moves.length < 4) throw fail('InvalidTable', 'the moves end early');
  const view = new DataView(moves.buffer, moves.byteOffset, moves.byteLength);
  const count = view.getUint32(0, true);
  const size = 5 + width;
  if (moves.length !== 4 + count * size) {
    throw fail('InvalidTable', `${count} moves need ${4 + count * size} bytes, not ${moves.length}`);
  }
  // Step 2: the previous rows as ids, cut or padded with empty slots to r.
  /**
   * @param {number} p
   * @param {number} slot
   * @returns {string}
   */
  const old = (p, slot) => prevRows[p][slot] ?? '';
  const rows = prevRows.map((_, p) => Array.from({ length: r }, (_, slot) => old(p, slot)));
  // Step 3: each move, into a slot that still holds what it held.
  for (let k = 0; k < count; k++) {
    const at = 4 + k * size;
    const part = view.getUint32(at, true);
    const slot = view.getUint8(at + 4);
    const to = width === 2 ? view.getUint16(at + 5, true) : view.getUint32(at + 5, true);
    if (to >= n) throw fail('InvalidTable', `a move names node ${to} of ${n}`);
    if (part >= partitions || slot >= r) {
      throw fail('InvalidTable', `a move to partition ${part} slot ${slot} is outside the table`);
    }
    if (rows[part][slot] !== old(part, slot))
      throw fail('InvalidTable', `partition ${part} slot ${slot} changed twice`);
    rows[part][slot] = active[to].id;
  }
  // Step 4: no empty slot; restoring the rows refuses inactive nodes and
  // nodes twice in a row.
  rows.forEach((row, p) => {
    row.forEach((id, slot) => {
      if (id === '') throw fail('InvalidTable', `the moves leave partition ${p} slot ${slot} empty`);
    });
  });
  return rows;
}
