// What the placement core must compute for a vector file, in the shape
// vector-runner.js reports it: the files' expected values, and for the
// checks the files imply (thin client, snapshot, stored state) what they
// imply. Runs in Node.js only, over results from Node.js or Chromium.

import { TWEMPROXY_HASHES, kindOf } from './vector-runner.js';

/**
 * @param {string} rel
 * @param {any} file
 * @returns {Record<string, unknown>}
 */
export function expectedOf(rel, file) {
  switch (kindOf(rel)) {
    case 'placement':
      return expectedPlacement(rel, file);
    case 'twemproxy-hashes': {
      const names = Object.keys(file.hashes).sort();
      if (names.join() !== [...TWEMPROXY_HASHES].sort().join()) throw new Error(`${rel} names ${names}`);
      return { hashes: file.hashes };
    }
    case 'libketama':
      return {
        cases: file.cases.map((/** @type {any} */ c) => ({
          ks_per_server: c.ks_per_server,
          points_per_server: c.points_per_server,
          numpoints: c.numpoints,
          last_point: c.last_point,
          first_points: c.first_points,
          collisions: c.collisions.map((/** @type {any} */ col) => ({
            point: col.point,
            predecessor_point: col.predecessor_point,
            addrs_in_sorted_order: col.addrs_in_sorted_order,
            probe_key: col.probe_key,
            probe_addr: col.probe_addr,
            probe_in_arc: true,
          })),
          wrap_keys: c.wrap_keys.map(() => ({ past_last: true, owner_is_first: true })),
          lookups: c.lookups,
        })),
      };
    case 'envoy-maglev':
      // Envoy's indices are positions in hosts as listed: map them to ids.
      return {
        tables: file.cases.map((/** @type {any} */ c) =>
          c.expected_table.map((/** @type {number} */ h) => c.hosts[h].hashed),
        ),
      };
    case 'jump':
      if (!file.cases.some((/** @type {any} */ c) => c.key === '256' && c.buckets === 1024 && c.expected === 520)) {
        throw new Error('jump(256, 1024) = 520 is missing');
      }
      return { cases: file.cases.map((/** @type {any} */ c) => c.expected) };
  }
  throw new Error(`${rel}: not a vector file this test recognises: add a check for it`);
}

/** The fields a placement vector may hold; a new one needs a check here. */
const FIELDS = new Set([
  'algorithm',
  'shape',
  'config',
  'nodes',
  'buckets',
  'server_ids',
  'table',
  'fingerprint',
  'ownership',
  'lookups',
  'preference_lists',
]);

/**
 * @param {string} rel
 * @param {any} v
 * @returns {Record<string, unknown>}
 */
function expectedPlacement(rel, v) {
  for (const k of Object.keys(v)) if (!FIELDS.has(k)) throw new Error(`${rel}: unknown field ${k}: check it`);
  if (rel !== `${v.algorithm}-${v.shape}.json`) throw new Error(`${rel} holds ${v.algorithm}-${v.shape}`);
  if (v.lookups.length === 0 || v.preference_lists.length === 0) throw new Error(`${rel}: no lookups`);
  const isTable = v.algorithm === 'table';
  const ownership = {
    basis: v.ownership.basis,
    total_units: v.ownership.total_units,
    max_over_mean: v.ownership.max_over_mean,
    nodes: v.ownership.nodes.map((/** @type {any} */ n) => {
      if ((n.replicas !== undefined) !== isTable) throw new Error(`${rel}: replicas only under table`);
      return n;
    }),
  };
  const lookups = v.lookups;
  const preferenceLists = v.preference_lists;
  const answers = { lookups, preference_lists: preferenceLists, ownership };
  return {
    algorithm: v.algorithm,
    fingerprint: v.fingerprint,
    ...answers,
    layout: {
      buckets: v.algorithm === 'jump' ? (v.buckets ?? []) : null,
      // A table with no active node has empty rows: the file writes them.
      table: isTable ? v.table : null,
      server_ids: v.algorithm === 'haproxy' ? v.server_ids : null,
    },
    thin: { fingerprint: v.fingerprint, reencodes: true, ...answers },
    snapshot: {
      fingerprint: v.fingerprint,
      version: 7,
      owners: lookups.map((/** @type {any} */ l) => l.owner),
      refusal: `FingerprintMismatch ${v.fingerprint}`,
    },
  };
}
