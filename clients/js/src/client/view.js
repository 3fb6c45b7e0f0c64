// One verified ring version and what the client answers from it.

import { activeNodeIds } from './core.js';

/** @typedef {import("./core.js").Snapshot} Snapshot */
/** @typedef {import("./core.js").Placement} Placement */
/** @typedef {string | Uint8Array} Key */

/**
 * One verified ring version: the snapshot as the server sent it and the
 * placement this process rebuilt from it, whose fingerprint matched.
 * Immutable.
 */
export class RingView {
  /**
   * @param {Snapshot} snapshot
   * @param {Placement} placement
   */
  constructor(snapshot, placement) {
    /** @readonly */ this.snapshot = snapshot;
    /** @readonly */ this.placement = placement;
    /** @readonly @type {readonly string[]} */
    this.activeNodes = Object.freeze(activeNodeIds(snapshot));
    Object.freeze(this);
  }

  /** The ring version. */
  get version() {
    return this.snapshot.version;
  }

  /** The verified fingerprint. */
  get fingerprint() {
    return this.snapshot.fingerprint;
  }

  /**
   * The node that owns key, null when no node is active.
   * @param {Key} key
   * @returns {string | null}
   */
  owner(key) {
    return this.placement.owner(key) ?? null;
  }

  /**
   * The first r distinct nodes for key, owner first.
   * @param {Key} key
   * @param {number} r
   * @returns {string[]}
   */
  preferenceList(key, r) {
    return this.placement.preferenceList(key, r);
  }
}
