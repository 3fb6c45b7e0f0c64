// Consistent hashing with bounded loads (Mirrokni, Thorup and
// Zadimoghaddam), the rule of HAProxy's hash-balance-factor, as the Go
// and Rust clients compute it.

import { InvalidOptionError } from './errors.js';

/**
 * What a pick needs of a version: its active nodes and its preference
 * lists. A RingView is one.
 * @typedef {object} PickTarget
 * @property {readonly string[]} activeNodes
 * @property {(key: string | Uint8Array, r: number) => string[]} preferenceList
 */

/**
 * Picks, for requests any replica can serve, the first node on a key's
 * preference list whose in-flight count is below
 * ceil(factor × (total in flight + 1) / active nodes). The loads are the
 * caller's own, so two clients may pick differently for one hot key while
 * the placement, and every client's owner, stay identical: never use it
 * to decide where data is written.
 */
export class BoundedLoad {
  #factor;

  /**
   * @param {number} factor a finite number of at least 1 (1 is perfect
   *   balance, at the price of moving many requests off their owner; 1.25
   *   caps every node at 25 % above the average)
   */
  constructor(factor) {
    if (!Number.isFinite(factor) || factor < 1) {
      throw new InvalidOptionError(`balance factor ${factor}: use a number of at least 1, e.g. 1.25`);
    }
    this.#factor = factor;
  }

  /** The balance factor. */
  get factor() {
    return this.#factor;
  }

  /**
   * The most requests a node may already have in flight and still take
   * one more: ceil(factor × (inFlight + 1) / nodes), in integers after
   * scaling the factor to millionths, so every platform agrees. Past
   * Number.MAX_SAFE_INTEGER it answers Infinity (no bound).
   * @param {number | bigint} inFlight total over the active nodes
   * @param {number} nodes
   * @returns {number}
   */
  bound(inFlight, nodes) {
    if (nodes <= 0) return 0;
    const num = BigInt(Math.round(this.#factor * 1e6)) * (BigInt(inFlight) + 1n);
    const den = 1_000_000n * BigInt(nodes);
    const q = (num + den - 1n) / den;
    return q > BigInt(Number.MAX_SAFE_INTEGER) ? Infinity : Number(q);
  }

  /**
   * The node to send a request for key to; load is asked once per active
   * node for its in-flight count. Null only when no node is active.
   * @param {PickTarget} target
   * @param {string | Uint8Array} key
   * @param {(node: string) => number} load
   * @returns {string | null}
   */
  pick(target, key, load) {
    const nodes = target.activeNodes;
    if (nodes.length === 0) return null;
    /** @type {Map<string, number>} */
    const loads = new Map();
    let total = 0n;
    for (const id of nodes) {
      const l = load(id);
      loads.set(id, l);
      total += BigInt(Math.max(0, Math.floor(l)));
    }
    const bound = this.bound(total, nodes.length);
    // Walk the preference list in growing prefixes: a hot key's owner is
    // usually under the bound, and the whole list walks the whole ring.
    let checked = 0;
    let r = Math.min(nodes.length, 4);
    for (;;) {
      const list = target.preferenceList(key, r);
      for (const id of list.slice(checked)) {
        if ((loads.get(id) ?? 0) < bound) return id;
      }
      if (r === nodes.length || list.length === 0) {
        // Only reachable if load answered inconsistently.
        return list[0] ?? null;
      }
      checked = list.length;
      r = Math.min(r * 4, nodes.length);
    }
  }
}
