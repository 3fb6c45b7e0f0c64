// A ring version as `GET /v1/rings/{ring}/snapshot`, `…/snapshots/{v}` and
// the watch events carry it (docs/api.md), read for placement, and the
// placement it stands for, verified against its fingerprint. A table
// snapshot carries no table: it takes the downloaded encoding or the
// previous version's placement to apply its moves to (spec 9.4).

import { parseConfig, validateConfig } from './config.js';
import { encodeEncoding } from './encoding.js';
import { excerpt, fail, FingerprintMismatchError } from './errors.js';
import { isFingerprint } from './fingerprint.js';
import { jsonInt, jsonString, objectFields, parseJson } from './json.js';
import { parseNodes } from './node.js';
import { normalize } from './nodeset.js';
import { build, setVersion } from './placement.js';
import { applyMoves } from './table-moves.js';

/** @typedef {import('./config.js').Config} Config */
/** @typedef {import('./jump.js').BucketRun} BucketRun */
/** @typedef {import('./json.js').JsonInput} JsonInput */
/** @typedef {import('./json.js').JsonValue} JsonValue */
/** @typedef {import('./node.js').Node} Node */
/** @typedef {import('./placement.js').Placement} Placement */

/**
 * What gives a table snapshot its table (9.4); other algorithms ignore it.
 * @typedef {object} TableSource
 * @property {Uint8Array | null} [encoding] the body of `GET …/snapshots/{v}/table`: this version's canonical encoding
 * @property {Placement | null} [previous] the verified placement of version − 1, to apply the snapshot's moves to
 */

/** One ring version, read for placement. */
export class Snapshot {
  /**
   * @param {object} fields
   * @param {string} fields.ring
   * @param {number} fields.version
   * @param {Config} fields.config
   * @param {Node[]} fields.nodes
   * @param {string} fields.fingerprint
   * @param {BucketRun[] | null} fields.buckets
   * @param {Map<string, number> | null} fields.serverIds
   * @param {number} fields.nextServerId
   * @param {Uint8Array | null} fields.tableMoves
   */
  constructor(fields) {
    /** The ring's name. */
    this.ring = fields.ring;
    /** The version's number, 1 at creation. */
    this.version = fields.version;
    /** The ring config. */
    this.config = fields.config;
    /** Every node, in any state. */
    this.nodes = fields.nodes;
    /** SHA-256 of the placement's canonical encoding. */
    this.fingerprint = fields.fingerprint;
    /** jump's persisted bucket order; null when absent. */
    this.buckets = fields.buckets;
    /** Every node's haproxy server id; null when absent. */
    this.serverIds = fields.serverIds;
    /** Above every id the ring has given (haproxy). */
    this.nextServerId = fields.nextServerId;
    /** The table slots changed since version − 1 (9.4); null when absent. */
    this.tableMoves = fields.tableMoves;
  }

  /**
   * Rebuilds the snapshot's placement and verifies it: unless it hashes to
   * the snapshot's fingerprint, FingerprintMismatchError. A table snapshot
   * needs a table source (TableRequired without one), except with no
   * active node.
   * @param {TableSource} [source]
   * @returns {Promise<Placement>}
   */
  async placement(source = {}) {
    const c = this.config;
    let p;
    if (c.algorithm === 'haproxy') {
      if (this.serverIds === null) throw fail('InvalidServerIds', 'the snapshot carries no server ids');
      this.checkServerIds(this.serverIds);
      p = await build(c, this.nodes, { serverIds: this.serverIds });
    } else if (c.algorithm === 'table') {
      p = await this.tablePlacement(source);
    } else {
      p = await build(c, this.nodes, { buckets: this.buckets });
    }
    if (p.fingerprint !== this.fingerprint) throw new FingerprintMismatchError(this.fingerprint, p.fingerprint);
    setVersion(p, this.version);
    return p;
  }

  /**
   * Stored ids against the version's nodes (5.8.3): every node has one, no
   * two share one, all run from 1 to below next.
   * @param {Map<string, number>} ids
   */
  checkServerIds(ids) {
    if (ids.size !== this.nodes.length || this.nodes.some((n) => !ids.has(n.id))) {
      throw fail('InvalidServerIds', 'the ids do not name exactly the ring’s nodes');
    }
    const seen = new Set();
    for (const n of this.nodes) {
      const id = ids.get(n.id) ?? 0;
      if (seen.has(id)) throw fail('InvalidServerIds', `two nodes share server id ${id}`);
      if (id < 1 || id >= this.nextServerId) {
        throw fail('InvalidServerIds', `server ids must run from 1 to below next (${this.nextServerId})`);
      }
      seen.add(id);
    }
  }

  /**
   * @param {TableSource} source
   * @returns {Promise<Placement>}
   */
  async tablePlacement(source) {
    const c = this.config;
    if (!this.nodes.some((n) => n.state === 'active')) return build(c, this.nodes); // every row empty
    if (source.encoding) {
      // The table is the encoding's body; the fingerprint then covers the
      // whole encoding.
      validateConfig(c);
      const active = normalize(c, this.nodes);
      const empty = {
        algorithm: /** @type {const} */ ('table'),
        partitions: 0,
        replicas: 0,
        cells: new Uint32Array(0),
      };
      const header = encodeEncoding({
        hash: c.hash,
        zoneAware: c.zoneAware,
        ramped: false,
        replicationFactor: c.replicationFactor,
        nodes: active,
        body: empty,
      });
      const start = header.length - 5;
      if (source.encoding.length < start) throw fail('InvalidTable', 'the encoding ends before its table');
      return build(c, this.nodes, { tableBody: source.encoding.subarray(start) });
    }
    if (source.previous && this.tableMoves) {
      const prev = source.previous;
      if (prev.version !== 0 && this.version !== prev.version + 1) {
        throw fail(
          'InvalidTable',
          `moves to version ${this.version} apply to version ${this.version - 1}, not ${prev.version}`,
        );
      }
      validateConfig(c);
      const active = normalize(c, this.nodes);
      const rows = applyMoves(prev, active, c.partitions, c.replicationFactor, this.tableMoves);
      return build(c, this.nodes, { tableRows: rows });
    }
    throw fail(
      'TableRequired',
      `the snapshot of version ${this.version} carries no table: download …/snapshots/${this.version}/table or apply its moves`,
    );
  }
}

/**
 * Reads a snapshot's JSON (a SnapshotView). It checks what the JSON holds,
 * not the placement: `Snapshot.placement` does that.
 * @param {JsonInput} input
 * @returns {Snapshot}
 */
export function parseSnapshot(input) {
  /** @type {ConstructorParameters<typeof Snapshot>[0]} */
  const s = {
    ring: '',
    version: 0,
    config: parseConfig({}),
    nodes: [],
    fingerprint: '',
    buckets: null,
    serverIds: null,
    nextServerId: 0,
    tableMoves: null,
  };
  let haveConfig = false;
  let haveNodes = false;
  for (const [name, value] of objectFields(parseJson(input, 'snapshot'), 'snapshot')) {
    switch (name) {
      case 'ring':
        s.ring = jsonString(value, name);
        break;
      case 'version':
        s.version = jsonInt(value, name);
        if (s.version < 0) throw fail('InvalidSnapshot', `version ${s.version}`);
        break;
      case 'config':
        s.config = parseConfig(value);
        haveConfig = true;
        break;
      case 'nodes':
        s.nodes = parseNodes(value);
        haveNodes = true;
        break;
      case 'fingerprint':
        s.fingerprint = jsonString(value, name);
        if (!isFingerprint(s.fingerprint)) {
          throw fail(
            'InvalidSnapshot',
            `fingerprint ${JSON.stringify(excerpt(s.fingerprint))} is not 64 lowercase hex digits`,
          );
        }
        break;
      case 'buckets':
        s.buckets = parseBuckets(value);
        break;
      case 'server_ids':
        readServerIds(value, s);
        break;
      case 'table_moves':
        s.tableMoves = base64(jsonString(value, name));
        break;
    }
  }
  if (!haveConfig || !haveNodes || s.fingerprint === '') {
    throw fail('InvalidSnapshot', 'a snapshot needs config, nodes and fingerprint');
  }
  return new Snapshot(s);
}

/**
 * @param {JsonValue} value
 * @param {{ serverIds: Map<string, number> | null, nextServerId: number }} s
 */
function readServerIds(value, s) {
  const shape = 'server_ids must be {"ids": {node: id}, "next": id}';
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw fail('InvalidJson', shape);
  const { ids, next } = value;
  if (ids === null || typeof ids !== 'object' || Array.isArray(ids) || typeof next !== 'number') {
    throw fail('InvalidJson', shape);
  }
  if (!Number.isInteger(next) || next < 0 || next > 0xffffffff)
    throw fail('InvalidServerIds', `next ${next} is not a u32`);
  s.serverIds = new Map();
  for (const [node, id] of Object.entries(ids)) {
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 0 || id > 0xffffffff) {
      throw fail('InvalidServerIds', `node ${excerpt(node)} has server id ${JSON.stringify(id)}`);
    }
    s.serverIds.set(node, id);
  }
  s.nextServerId = next;
}

/**
 * Standard base64, padded, strictly (9.4).
 * @param {string} text
 * @returns {Uint8Array}
 */
function base64(text) {
  if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) {
    throw fail('InvalidTable', 'table_moves is not standard base64');
  }
  const binary = atob(text);
  const out = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  // Strict: the text must be exactly the encoding of the bytes it holds.
  if (btoa(binary) !== text) throw fail('InvalidTable', 'table_moves is not standard base64');
  return out;
}

/**
 * Reads a jump bucket order as JSON carries it: one node id or null (a
 * hole) per bucket, as snapshots and vector files write it, or [id or
 * null, count] runs, as ringd's stores do. Consecutive buckets are merged
 * into runs.
 * @param {JsonInput} input
 * @returns {BucketRun[]}
 */
export function parseBuckets(input) {
  const entries = parseJson(input, 'buckets');
  if (!Array.isArray(entries)) throw fail('InvalidJson', 'a bucket order must be a JSON array');
  /** @type {BucketRun[]} */
  const runs = [];
  /**
   * @param {string | null} id
   * @param {number} count
   */
  const push = (id, count) => {
    const last = runs[runs.length - 1];
    // A run past the cap is not merged further: restoring refuses it.
    if (last !== undefined && last.id === id && last.count <= 1 << 23) last.count += count;
    else runs.push({ id, count });
  };
  for (const e of entries) {
    if (e === null || typeof e === 'string') {
      if (e === '') throw fail('InvalidBucketOrder', 'a bucket names the empty id');
      push(e, 1);
      continue;
    }
    if (!Array.isArray(e) || e.length !== 2 || !(e[0] === null || (typeof e[0] === 'string' && e[0] !== ''))) {
      throw fail('InvalidBucketOrder', `not a bucket or a run: ${excerpt(JSON.stringify(e))}`);
    }
    const count = e[1];
    if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > 1 << 23) {
      throw fail('InvalidBucketOrder', `a run's count must be 1..=${1 << 23}: ${excerpt(JSON.stringify(e))}`);
    }
    push(e[0], count);
  }
  return runs;
}
