// Runs the shared vector files (tests/placement/vectors) through the
// placement core and reports what it computes, in the files' own JSON
// form. It imports only the placement modules, so the same code runs in
// Node.js (vectors.test.js) and in Chromium (browser.test.js); both hand
// the result to expectedOf (vector-expect.js) to compare.

import { build, decode, jumpHash, parseSnapshot, PlacementError } from '../src/placement/index.js';
import { loadHashes } from '../src/placement/hashes.js';
import { ketamaDigestCount } from '../src/placement/ketama.js';
import { hash32 } from '../src/placement/key-hash.js';

/** @typedef {import('../src/placement/index.js').Placement} Placement */
/** @typedef {import('../src/placement/json.js').JsonValue} JsonValue */
/** @typedef {import('../src/placement/json.js').JsonObject} JsonObject */

/** The twemproxy hashes the shared hash file must give values for. */
export const TWEMPROXY_HASHES = [
  'fnv1a_64',
  'md5',
  'crc32a',
  'one_at_a_time',
  'murmur',
  'jenkins',
  'hsieh',
  'fnv1_64',
  'fnv1a_32',
  'fnv1_32',
];

/**
 * What kind of vector file `rel` (its path under the vectors directory)
 * is; null for a file no check recognises, which the tests refuse.
 * @param {string} rel
 * @returns {'placement' | 'twemproxy-hashes' | 'libketama' | 'envoy-maglev' | 'jump' | null}
 */
export function kindOf(rel) {
  switch (rel) {
    case 'hashes/twemproxy.json':
      return 'twemproxy-hashes';
    case 'reference/libketama.json':
      return 'libketama';
    case 'reference/envoy-maglev.json':
      return 'envoy-maglev';
    case 'reference/jump.json':
      return 'jump';
  }
  return !rel.includes('/') && rel.endsWith('.json') ? 'placement' : null;
}

/**
 * What the placement core computes for a vector file.
 * @param {string} rel
 * @param {any} file the file's parsed JSON
 * @returns {Promise<JsonObject>}
 */
export async function runVector(rel, file) {
  await loadHashes();
  switch (kindOf(rel)) {
    case 'placement':
      return runPlacement(file);
    case 'twemproxy-hashes':
      return runTwemproxyHashes(file);
    case 'libketama':
      return runLibketama(file);
    case 'envoy-maglev':
      return runEnvoyMaglev(file);
    case 'jump':
      return { cases: file.cases.map((/** @type {any} */ c) => jumpHash(BigInt(c.key), c.buckets)) };
  }
  throw new Error(`${rel}: not a vector file this test recognises`);
}

/**
 * A vector's inputs (spec 12): config, nodes and stored state.
 * @param {any} v
 */
export function inputsOf(v) {
  return {
    config: v.config,
    nodes: v.nodes,
    stored: { buckets: v.buckets ?? null, serverIds: v.server_ids ?? null, tableRows: v.table ?? null },
  };
}

/**
 * @param {any} v
 * @returns {Promise<JsonObject>}
 */
async function runPlacement(v) {
  const { parseConfig, parseNodes, parseBuckets } = await import('../src/placement/index.js');
  const stored = {
    buckets: v.buckets ? parseBuckets(v.buckets) : null,
    serverIds: v.server_ids ?? null,
    tableRows: v.table ?? null,
  };
  const p = await build(parseConfig(v.config), parseNodes(v.nodes), stored);
  const thin = await decode(p.encode(), p.fingerprint);
  return {
    algorithm: p.algorithm,
    fingerprint: p.fingerprint,
    ...answers(p, v),
    layout: layoutOf(p),
    thin: { fingerprint: thin.fingerprint, reencodes: same(thin.encode(), p.encode()), ...answers(thin, v) },
    snapshot: await viaSnapshot(p, v),
  };
}

/**
 * Lookups, preference lists and ownership for the file's keys.
 * @param {Placement} p
 * @param {any} v
 * @returns {JsonObject}
 */
function answers(p, v) {
  const o = p.ownership();
  return {
    lookups: v.lookups.map((/** @type {any} */ l) => ({
      key: l.key,
      hash: String(p.keyHash(l.key)),
      owner: p.owner(l.key),
    })),
    preference_lists: v.preference_lists.map((/** @type {any} */ l) => ({
      key: l.key,
      replicas: p.preferenceList(l.key),
    })),
    ownership: {
      basis: o.basis,
      total_units: String(o.totalUnits),
      max_over_mean: o.maxOverMean,
      nodes: o.nodes.map((n) => ({
        id: n.id,
        units: String(n.units),
        share: n.share,
        expected_share: n.expectedShare,
        ratio: n.ratio,
        ...(n.replicas === null ? {} : { replicas: n.replicas }),
      })),
    },
  };
}

/**
 * The stored state read back: jump's buckets, table's rows, haproxy's ids.
 * @param {Placement} p
 * @returns {JsonObject}
 */
function layoutOf(p) {
  const order = p.bucketOrder();
  const ids = p.serverIds();
  return {
    buckets: order === null ? null : order.flatMap((r) => Array.from({ length: r.count }, () => r.id)),
    table: p.tableRows(),
    server_ids: ids === null ? null : Object.fromEntries(ids),
  };
}

/**
 * @param {Uint8Array} a
 * @param {Uint8Array} b
 * @returns {boolean}
 */
function same(a, b) {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/**
 * The placement from the file as `GET …/snapshot` would send it; and the
 * refusal of the same snapshot with another fingerprint.
 * @param {Placement} built
 * @param {any} v
 * @returns {Promise<JsonObject>}
 */
async function viaSnapshot(built, v) {
  /** @type {Record<string, any>} */
  const doc = {
    ring: 'vectors',
    version: 7,
    config: { ...v.config, membership: { mode: 'manual' } }, // places nothing: ignored
    nodes: v.nodes,
    fingerprint: v.fingerprint,
    created_at: '2026-01-01T00:00:00Z',
    change: {},
  };
  if (v.buckets) doc.buckets = v.buckets;
  if (v.server_ids) {
    // A snapshot's ids name every node, active or not, and next is above them all.
    const ids = { ...v.server_ids };
    let next = Math.max(1, ...Object.values(ids).map((s) => Number(s) + 1));
    for (const n of v.nodes) if (!(n.id in ids)) ids[n.id] = next++;
    doc.server_ids = { ids, next };
  }
  const source = built.algorithm === 'table' ? { encoding: built.encode() } : {};
  const p = await parseSnapshot(JSON.stringify(doc)).placement(source);
  /** @type {JsonValue} */
  let refusal = null;
  try {
    await parseSnapshot({ ...doc, fingerprint: '0'.repeat(64) }).placement(source);
  } catch (e) {
    refusal = e instanceof PlacementError ? `${e.code} ${'actual' in e ? e.actual : ''}` : String(e);
  }
  return {
    fingerprint: p.fingerprint,
    version: p.version,
    owners: v.lookups.map((/** @type {any} */ l) => p.owner(l.key)),
    refusal,
  };
}

/**
 * @param {any} file
 * @returns {JsonObject}
 */
function runTwemproxyHashes(file) {
  /** @type {Record<string, number[]>} */
  const hashes = {};
  for (const name of TWEMPROXY_HASHES) {
    hashes[name] = file.keys_hex.map((/** @type {string} */ hex) => {
      const key = Uint8Array.from(hex.match(/../g) ?? [], (b) => Number.parseInt(b, 16));
      return hash32(/** @type {any} */ (name), key);
    });
  }
  return { hashes };
}

/**
 * @param {any} file
 * @returns {Promise<JsonObject>}
 */
async function runLibketama(file) {
  const cases = [];
  for (const c of file.cases) {
    const total = c.servers.reduce((/** @type {number} */ a, /** @type {any} */ s) => a + s.memory, 0);
    const p = await build(
      { algorithm: 'ketama' },
      c.servers.map((/** @type {any} */ s) => ({ id: s.addr, weight: s.memory })),
    );
    const points = p.points() ?? [];
    /** @type {Record<string, number>} */
    const perNode = {};
    for (const pt of points) perNode[pt.id] = (perNode[pt.id] ?? 0) + 1;
    cases.push({
      ks_per_server: c.servers.map((/** @type {any} */ s) => ketamaDigestCount(s.memory, total, c.servers.length)),
      points_per_server: c.servers.map((/** @type {any} */ s) => perNode[s.addr] ?? 0),
      numpoints: points.length,
      last_point: Number(points[points.length - 1].position),
      first_points: points.slice(0, c.first_points.length).map((pt) => ({ point: Number(pt.position), addr: pt.id })),
      collisions: c.collisions.map((/** @type {any} */ col) => {
        // Tied points in libketama's (stable qsort) order, after the given
        // predecessor; a probe hashing into that arc lands on the first.
        const first = points.findIndex((pt) => Number(pt.position) === col.point);
        const h = Number(p.keyHash(col.probe_key));
        return {
          point: col.point,
          predecessor_point: first > 0 ? Number(points[first - 1].position) : null,
          addrs_in_sorted_order: points.filter((pt) => Number(pt.position) === col.point).map((pt) => pt.id),
          probe_key: col.probe_key,
          probe_addr: p.owner(col.probe_key),
          probe_in_arc: h > col.predecessor_point && h <= col.point,
        };
      }),
      wrap_keys: c.wrap_keys.map((/** @type {string} */ k) => ({
        past_last: Number(p.keyHash(k)) > Number(points[points.length - 1].position),
        owner_is_first: p.owner(k) === points[0].id,
      })),
      lookups: c.lookups.map((/** @type {any} */ l) => ({
        key: l.key,
        hash: Number(p.keyHash(l.key)),
        addr: p.owner(l.key),
      })),
    });
  }
  return { cases };
}

/**
 * @param {any} file
 * @returns {Promise<JsonObject>}
 */
async function runEnvoyMaglev(file) {
  const tables = [];
  for (const c of file.cases) {
    const p = await build(
      { algorithm: 'maglev', tableSize: c.table_size },
      c.hosts.map((/** @type {any} */ h) => ({ id: h.hashed, weight: h.weight })),
    );
    tables.push(p.maglevTable());
  }
  return { tables };
}
