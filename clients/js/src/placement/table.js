// table (spec 5.6): a stored partition table. A client never computes one:
// it restores the server's, from rows of ids or from its encoding's body
// (5.6.3), and reads a key's partition from the top bits of its hash.

import { excerpt, fail } from './errors.js';

/** @typedef {import('./node.js').Node} Node */

/**
 * P rows of r distinct node indices, primary first, row by row.
 * @typedef {object} TableCells
 * @property {number} partitions P
 * @property {number} replicas r = min(replication_factor, active nodes)
 * @property {Uint32Array} cells P × r node indices
 */

/**
 * The bytes per node index: u16 up to 65,535 nodes, else u32 (9.1).
 * @param {number} nodes
 * @returns {2 | 4}
 */
export function tableIndexWidth(nodes) {
  return nodes <= 0xffff ? 2 : 4;
}

/**
 * Checks the cells (5.6.3 steps 4 and 5): every index below n, no row
 * holding a node twice.
 * @param {number} n
 * @param {TableCells} t
 * @returns {TableCells}
 */
export function checkTable(n, t) {
  const { partitions, replicas, cells } = t;
  for (let p = 0; p < partitions; p++) {
    for (let k = 0; k < replicas; k++) {
      const c = cells[p * replicas + k];
      if (c >= n) throw fail('InvalidTable', `partition ${p} names node ${c} of ${n}`);
      for (let j = 0; j < k; j++) {
        if (cells[p * replicas + j] === c) throw fail('InvalidTable', `partition ${p} names a node twice`);
      }
    }
  }
  return t;
}

/**
 * Accepts a table body (9.1) for n active nodes only as 5.6.3 says: the
 * configured partition count, r replicas, exactly P × r indices of the
 * right width, each below n, no node twice in a row.
 * @param {number} n
 * @param {number} partitions
 * @param {number} replicationFactor
 * @param {Uint8Array} body
 * @returns {TableCells}
 */
export function restoreTableBody(n, partitions, replicationFactor, body) {
  if (body.length < 5) throw fail('InvalidTable', 'the table body ends early');
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  const p = view.getUint32(0, true);
  const r = body[4];
  if (p !== partitions) throw fail('InvalidTable', `the table has ${p} partitions, the config ${partitions}`);
  const want = Math.min(replicationFactor, n);
  if (r !== want) throw fail('InvalidTable', `the table has ${r} replicas per partition, not ${want}`);
  const width = tableIndexWidth(n);
  if (body.length - 5 !== p * r * width) {
    throw fail('InvalidTable', `the table's cells are ${body.length - 5} bytes, not ${p * r * width}`);
  }
  const cells = new Uint32Array(p * r);
  for (let i = 0; i < cells.length; i++) {
    cells[i] = width === 2 ? view.getUint16(5 + 2 * i, true) : view.getUint32(5 + 4 * i, true);
  }
  return checkTable(n, { partitions: p, replicas: r, cells });
}

/**
 * Accepts a table given as rows of node ids, primary first (a vector
 * file's `table`, or rows after moves).
 * @param {Node[]} active
 * @param {number} partitions
 * @param {number} replicationFactor
 * @param {readonly (readonly string[])[]} rows
 * @returns {TableCells}
 */
export function tableFromRows(active, partitions, replicationFactor, rows) {
  const index = new Map(active.map((n, i) => [n.id, i]));
  const r = Math.min(replicationFactor, active.length);
  if (rows.length !== partitions) throw fail('InvalidTable', `${rows.length} rows for ${partitions} partitions`);
  const cells = new Uint32Array(partitions * r);
  rows.forEach((row, p) => {
    if (row.length !== r) throw fail('InvalidTable', `partition ${p} holds ${row.length} replicas, not ${r}`);
    row.forEach((id, k) => {
      const i = index.get(id);
      if (i === undefined)
        throw fail('InvalidTable', `partition ${p} names ${excerpt(String(id))}, not an active node`);
      cells[p * r + k] = i;
    });
  });
  return checkTable(active.length, { partitions, replicas: r, cells });
}

/** Lookups over a partition table (5.6.1, 6.1). */
export class TableLookup {
  /** @param {TableCells} t */
  constructor(t) {
    this.t = t;
    // A key's partition is the top b bits of its hash, b = log2 P ≤ 20.
    this.shift = 32 - (31 - Math.clz32(t.partitions));
  }

  /**
   * @param {number} h
   * @param {number} _l
   * @returns {number}
   */
  ownerIndex(h, _l) {
    const { replicas, cells } = this.t;
    return replicas === 0 ? -1 : cells[(h >>> this.shift) * replicas];
  }

  /**
   * The key's row, then the following rows, wrapping, each once (6.1).
   * @param {number} h
   * @param {number} _l
   * @param {(node: number) => boolean} visit
   */
  walk(h, _l, visit) {
    const { partitions, replicas, cells } = this.t;
    if (replicas === 0) return;
    const first = h >>> this.shift;
    for (let k = 0; k < partitions; k++) {
      const row = ((first + k) % partitions) * replicas;
      for (let j = 0; j < replicas; j++) if (!visit(cells[row + j])) return;
    }
  }
}
