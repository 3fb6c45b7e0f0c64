// A placement: who owns every key of one ring version (spec 1). Built from
// a config and nodes (`build`), from a canonical encoding (`decode`) or
// from a snapshot (snapshot.js). Building is asynchronous (the WebAssembly
// hashers and Web Crypto start so); lookups are synchronous.

import { makeConfig, validateConfig } from './config.js';
import { decodeEncoding, encodeEncoding } from './encoding.js';
import { fail, FingerprintMismatchError } from './errors.js';
import { fingerprint } from './fingerprint.js';
import { haproxyPoints, haproxyServerIds, initialServerIds } from './haproxy.js';
import { loadHashes } from './hashes.js';
import { buildKetama } from './ketama.js';
import { KeyHasher, keyBytes } from './key-hash.js';
import { initialJumpRuns, restoreJump, runsOf } from './jump.js';
import { buildMaglev } from './maglev.js';
import { lookupOf, placingWeights } from './lookups.js';
import { buildNginx } from './nginx.js';
import { makeNode } from './node.js';
import { normalize, zoneNumbers } from './nodeset.js';
import { ownershipOf } from './ownership.js';
import { selectReplicas } from './preference.js';
import { buildRendezvous } from './rendezvous.js';
import { buildRing } from './ring.js';
import { restoreTableBody, tableFromRows } from './table.js';
import { buildTwemproxy } from './twemproxy.js';
import { buildEnvoyRingHash } from './envoy-ring-hash.js';
import { buildEnvoyMaglev } from './envoy-maglev.js';
import { serverNames } from './addresses.js';
import { r64, toBigInt } from './u64.js';

/** @typedef {import('./algorithms.js').Algorithm} Algorithm */
/** @typedef {import('./algorithms.js').Hash} Hash */
/** @typedef {import('./config.js').Config} Config */
/** @typedef {import('./config.js').ConfigInput} ConfigInput */
/** @typedef {import('./encoding.js').Body} Body */
/** @typedef {import('./encoding.js').Encoded} Encoded */
/** @typedef {import('./jump.js').BucketRun} BucketRun */
/** @typedef {import('./node.js').Node} Node */
/** @typedef {import('./node.js').NodeInput} NodeInput */
/** @typedef {import('./ownership.js').Ownership} Ownership */
/** @typedef {import('./lookups.js').Lookup} Lookup */

/**
 * A key: bytes, or a string, which stands for its UTF-8 bytes.
 * @typedef {Uint8Array | string} Key
 */

/**
 * The state a ring keeps beside its config and nodes, which some
 * algorithms need: it is not a function of the node set. Fields for other
 * algorithms are ignored.
 * @typedef {object} Stored
 * @property {BucketRun[] | null} [buckets] jump's persisted order; absent: the initial order
 * @property {ReadonlyMap<string, number> | Readonly<Record<string, number>> | null} [serverIds]
 *   haproxy server ids by node id; absent: every node numbered from 1 in id order
 * @property {readonly (readonly string[])[] | null} [tableRows] table's rows of node ids, primary first
 * @property {Uint8Array | null} [tableBody] table's rows as the body of its encoding (9.1)
 */

/**
 * A point of a circle: its position and the id of its node.
 * @typedef {object} Point
 * @property {bigint} position
 * @property {string} id
 */

/** The ring versions of placements built from snapshots. @type {WeakMap<Placement, number>} */
const versions = new WeakMap();

/**
 * Who owns every key of one ring version. Immutable once built. Make one
 * with `build`, `decode` or `Snapshot.placement`, not with `new`.
 */
export class Placement {
  /**
   * @param {Encoded} parts
   * @param {Uint8Array} encoding
   * @param {string} fingerprint
   * @param {boolean} avalanche
   * @param {string | null} hashTag
   */
  constructor(parts, encoding, fingerprint, avalanche, hashTag) {
    /** @private */
    this.parts = parts;
    /** @private */
    this.bytes = encoding;
    /** SHA-256 of the canonical encoding, 64 lowercase hex digits. @readonly */
    this.fingerprint = fingerprint;
    /** @readonly @type {Algorithm} */
    this.algorithm = parts.body.algorithm;
    /** @readonly @type {Hash} */
    this.hash = parts.hash;
    /** The default preference list length. @readonly */
    this.replicationFactor = parts.replicationFactor;
    /** Whether preference lists spread over zones first. @readonly */
    this.zoneAware = parts.zoneAware;
    /** twemproxy's hash tag; null when keys are hashed whole. @readonly */
    this.hashTag = hashTag;
    /** @private */
    this.keys = new KeyHasher(this.algorithm, parts.hash, avalanche, hashTag);
    /** @private @type {string[]} */
    this.ids = parts.nodes.map((n) => n.id);
    /** @private @type {Lookup} */
    this.lookup = lookupOf(parts);
    const zones = parts.zoneAware ? zoneNumbers(parts.nodes) : null;
    /** @private */
    this.zoneOf = zones ? zones.zoneOf : null;
    /** @private */
    this.zoneCount = zones ? zones.zoneCount : 0;
  }

  /**
   * The ring version the placement was built from; 0 when not from a
   * snapshot.
   * @returns {number}
   */
  get version() {
    return versions.get(this) ?? 0;
  }

  /**
   * The id of the node owning `key`, or null when no node is active (or,
   * under ketama and table, none holds a point or slot for it).
   * @param {Key} key
   * @returns {string | null}
   */
  owner(key) {
    this.keys.sum(keyBytes(key));
    const i = this.lookup.ownerIndex(r64.hi, r64.lo);
    return i < 0 ? null : this.ids[i];
  }

  /**
   * Up to r distinct node ids for `key`, owner first (section 6):
   * min(r, active nodes) of them, fewer only when some node holds no point
   * (ketama) or no slot (table). Zone-aware rings spread the first entries
   * over distinct zones.
   * @param {Key} key
   * @param {number} [r] the list's length; the replication factor by default
   * @returns {string[]}
   */
  preferenceList(key, r = this.replicationFactor) {
    this.keys.sum(keyBytes(key));
    const picked = selectReplicas(this.lookup, r64.hi, r64.lo, r, this.ids.length, this.zoneOf, this.zoneCount);
    return picked.map((i) => this.ids[i]);
  }

  /**
   * The key's hash in the algorithm's space (section 4): 64 bits, or 32
   * for ketama, nginx, haproxy and twemproxy.
   * @param {Key} key
   * @returns {bigint}
   */
  keyHash(key) {
    this.keys.sum(keyBytes(key));
    return this.keys.narrow ? BigInt(r64.hi) : toBigInt(r64.hi, r64.lo);
  }

  /**
   * Section 7's ownership report.
   * @returns {Ownership}
   */
  ownership() {
    return ownershipOf(this.parts);
  }

  /**
   * The canonical encoding (9.1), what thin clients download.
   * @returns {Uint8Array}
   */
  encode() {
    return this.bytes.slice();
  }

  /**
   * The active nodes in id order; a node's position is its index in the
   * encoding. Decoded placements know only what the encoding holds.
   * @returns {Node[]}
   */
  nodes() {
    return this.parts.nodes.map((n) => ({ ...n }));
  }

  /**
   * The sorted point list of ring, ketama, nginx, twemproxy and
   * envoy_ring_hash (its entries; ties in the algorithm's order),
   * HAProxy's own points for haproxy; null under the other algorithms.
   * @returns {Point[] | null}
   */
  points() {
    const b = this.parts.body;
    if (!('points' in b)) return null;
    const { hi, lo, owner } = b.points;
    const wide = b.algorithm === 'ring' || b.algorithm === 'envoy_ring_hash';
    return Array.from(owner, (o, i) => ({ position: wide ? toBigInt(hi[i], lo[i]) : BigInt(hi[i]), id: this.ids[o] }));
  }

  /**
   * maglev's and envoy_maglev's lookup table as node ids, slot by slot;
   * null otherwise.
   * @returns {string[] | null}
   */
  maglevTable() {
    const b = this.parts.body;
    return b.algorithm === 'maglev' || b.algorithm === 'envoy_maglev' ? Array.from(b.table, (o) => this.ids[o]) : null;
  }

  /**
   * jump's bucket order as runs (null ids for holes); null otherwise.
   * @returns {BucketRun[] | null}
   */
  bucketOrder() {
    const b = this.parts.body;
    return b.algorithm === 'jump' ? runsOf(b.runs, this.parts.nodes) : null;
  }

  /**
   * Each active node's haproxy server id; null otherwise.
   * @returns {Map<string, number> | null}
   */
  serverIds() {
    const b = this.parts.body;
    return b.algorithm === 'haproxy' ? new Map(this.ids.map((id, i) => [id, b.serverIds[i]])) : null;
  }

  /**
   * table's rows of node ids, primary first, partition by partition; null
   * otherwise.
   * @returns {string[][] | null}
   */
  tableRows() {
    const b = this.parts.body;
    if (b.algorithm !== 'table') return null;
    const { partitions, replicas, cells } = b;
    return Array.from({ length: partitions }, (_, p) =>
      Array.from(cells.subarray(p * replicas, (p + 1) * replicas), (o) => this.ids[o]),
    );
  }
}

/**
 * A placement from its parts, with its encoding and fingerprint.
 * @param {Encoded} parts
 * @param {Uint8Array} [encoding] the parts' encoding, when already known
 * @returns {Promise<Placement>}
 */
export async function fromParts(parts, encoding = encodeEncoding(parts)) {
  const body = parts.body;
  return new Placement(
    parts,
    encoding,
    await fingerprint(encoding),
    body.algorithm === 'haproxy' && body.avalanche,
    body.algorithm === 'twemproxy' ? body.hashTag : null,
  );
}

/**
 * Places the active nodes of `nodes` (any states, any order) under a
 * config, with the stored state some algorithms need. It validates as spec
 * 2.4 does and throws the first refusal; table needs its stored table,
 * except with no active node (TableRequired).
 * @param {ConfigInput} config fields left out take their defaults
 * @param {readonly NodeInput[]} nodes
 * @param {Stored} [stored]
 * @returns {Promise<Placement>}
 */
export async function build(config, nodes, stored = {}) {
  await loadHashes();
  const c = makeConfig(config);
  validateConfig(c);
  const all = nodes.map((n) => makeNode(n));
  const active = normalize(c, all);
  const ramped = active.some((n) => n.ramp !== 65_536);
  return fromParts({
    hash: c.hash,
    zoneAware: c.zoneAware,
    ramped,
    replicationFactor: c.replicationFactor,
    nodes: active,
    body: buildBody(c, all, active, ramped, stored),
  });
}

/**
 * The algorithm's body (spec 1, step 3).
 * @param {Config} c
 * @param {Node[]} all
 * @param {Node[]} active
 * @param {boolean} ramped
 * @param {Stored} stored
 * @returns {Body}
 */
function buildBody(c, all, active, ramped, stored) {
  switch (c.algorithm) {
    case 'ring':
      return { algorithm: 'ring', points: buildRing(active, c.hash, c.vnodesPerWeight) };
    case 'ketama':
      return { algorithm: 'ketama', points: buildKetama(active) };
    case 'nginx':
      return { algorithm: 'nginx', points: buildNginx(active) };
    case 'twemproxy':
      return { algorithm: 'twemproxy', hashTag: c.hashTag, points: buildTwemproxy(active, serverNames(active)) };
    case 'envoy_ring_hash':
      return {
        algorithm: 'envoy_ring_hash',
        points: buildEnvoyRingHash(active, c.minimumRingSize, c.maximumRingSize),
      };
    case 'maglev':
      return { algorithm: 'maglev', table: buildMaglev(active, placingWeights(active, ramped), c.tableSize) };
    case 'envoy_maglev':
      return { algorithm: 'envoy_maglev', table: buildEnvoyMaglev(active, c.tableSize) };
    case 'rendezvous':
      return { algorithm: 'rendezvous', ...buildRendezvous(active, c.hash) };
    case 'jump':
      return { algorithm: 'jump', runs: restoreJump(active, stored.buckets ?? initialJumpRuns(active)) };
    case 'haproxy': {
      const given = stored.serverIds ?? initialServerIds(all);
      const ids = given instanceof Map ? given : new Map(Object.entries(given));
      const serverIds = haproxyServerIds(active, ids);
      return {
        algorithm: 'haproxy',
        avalanche: c.avalanche,
        serverIds,
        points: haproxyPoints(
          serverIds,
          active.map((n) => n.weight),
        ),
      };
    }
    case 'table':
      // A client never computes a table (5.6.1).
      if (stored.tableRows) {
        return { algorithm: 'table', ...tableFromRows(active, c.partitions, c.replicationFactor, stored.tableRows) };
      }
      if (stored.tableBody) {
        return {
          algorithm: 'table',
          ...restoreTableBody(active.length, c.partitions, c.replicationFactor, stored.tableBody),
        };
      }
      if (active.length === 0) {
        return { algorithm: 'table', partitions: c.partitions, replicas: 0, cells: new Uint32Array(0) };
      }
      throw fail('TableRequired', 'a table placement needs its stored table');
  }
}

/**
 * Thin mode (9.2): a placement from a canonical encoding alone, as
 * `GET …/snapshots/{v}/table` serves it for every algorithm. Its SHA-256
 * must equal `expectedFingerprint`, else FingerprintMismatchError; an
 * encoding that does not decode, or does not re-encode to the same bytes,
 * is InvalidEncoding. Malformed input is a PlacementError, never a crash.
 * @param {Uint8Array} encoding
 * @param {string} expectedFingerprint
 * @returns {Promise<Placement>}
 */
export async function decode(encoding, expectedFingerprint) {
  await loadHashes();
  const bytes = encoding.slice();
  const actual = await fingerprint(bytes);
  if (actual !== expectedFingerprint) throw new FingerprintMismatchError(expectedFingerprint, actual);
  return fromParts(decodeEncoding(bytes), bytes);
}

/**
 * Sets the version of a placement built from a snapshot.
 * @param {Placement} p
 * @param {number} version
 */
export function setVersion(p, version) {
  versions.set(p, version);
}
