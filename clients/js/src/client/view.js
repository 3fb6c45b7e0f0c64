// One verified ring version and what the client answers from it.

import { OwnerCache } from '../placement/owner-cache.js';
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
   * @param {number} [ownerCache] string keys whose owner to remember; 0 for none
   */
  constructor(snapshot, placement, ownerCache = 0) {
    /** @readonly */ this.snapshot = snapshot;
    /** @readonly */ this.placement = placement;
    /** @readonly */ this.owners = ownerCache > 0 ? new OwnerCache(placement, ownerCache) : placement;
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
    return this.owners.owner(key) ?? null;
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
