// The implementations the lookup benchmark compares, each with the loop
// that times it. Every loop is its own function (no shared loop calling a
// function value), so each implementation's call site stays monomorphic;
// and each implementation runs in a process of its own (run.mjs), so
// ringd's four algorithms do not share the JIT's feedback either, as in an
// application that uses one of them.
//
// A loop looks up `count` keys from `start`, cycling through `keys` (a
// power-of-two count, so the index is a mask), and returns the sum of the
// owners' lengths: the caller sinks it, so the JIT cannot drop a lookup,
// and a lookup that returned no string would throw.

import { createRequire } from 'node:module';
import { OwnerCache, build } from '../src/placement/index.js';

const require = createRequire(import.meta.url);

/**
 * @typedef {object} Impl
 * @property {string} name
 * @property {string} label as the tables print it
 * @property {(names: string[]) => Promise<any>} make
 * @property {(inst: any, key: string) => unknown} owner for the checks
 * @property {(inst: any, keys: string[], mask: number, start: number, count: number) => number} loop
 * @property {number} [checkKeys] how many of the keys the check looks up, when not all
 */

/**
 * A ringd placement of `algorithm` over `names` at weight 1, default
 * config: ring 160 points per node over xxh3, maglev 65,537 slots, table
 * 65,536 partitions × 3 replicas, rendezvous over xxh3.
 * @param {'ring' | 'maglev' | 'table' | 'rendezvous'} algorithm
 * @param {string[]} names
 */
async function ringd(algorithm, names) {
  const nodes = names.map((id) => ({ id }));
  return build({ algorithm }, nodes, algorithm === 'table' ? { tableRows: roundRobinTable(names, 65_536, 3) } : {});
}

/**
 * The Go benchmark's table: partition p's replicas are nodes p, p + 1, …
 * (mod n). Clients never compute tables (spec 5.6), they restore the
 * server's; a lookup reads one cell whatever the table holds, so its cost
 * is the same as with the server's.
 * @param {string[]} names
 * @param {number} partitions
 * @param {number} replicationFactor
 * @returns {string[][]}
 */
export function roundRobinTable(names, partitions, replicationFactor) {
  const r = Math.min(replicationFactor, names.length);
  return Array.from({ length: partitions }, (_, p) =>
    Array.from({ length: r }, (_, j) => names[(p + j) % names.length]),
  );
}

/** @type {Record<string, Impl>} */
export const IMPLS = {
  'ringd-ring': {
    name: 'ringd-ring',
    label: 'ringd `ring`',
    make: (names) => ringd('ring', names),
    owner: (p, key) => p.owner(key),
    loop(p, keys, mask, start, count) {
      let acc = 0;
      for (let i = start, end = start + count; i < end; i++) acc += p.owner(keys[i & mask]).length;
      return acc;
    },
  },
  // The same placements with an OwnerCache of 5,000 answers, hashring's
  // default cache size: what RingClient does with `ownerCache: 5000`.
  'ringd-ring-cached': {
    name: 'ringd-ring-cached',
    label: 'ringd `ring`, owner cache',
    make: async (names) => new OwnerCache(await ringd('ring', names), 5000),
    owner: (c, key) => c.owner(key),
    loop(c, keys, mask, start, count) {
      let acc = 0;
      for (let i = start, end = start + count; i < end; i++) acc += c.owner(keys[i & mask]).length;
      return acc;
    },
  },
  'ringd-maglev': {
    name: 'ringd-maglev',
    label: 'ringd `maglev`',
    make: (names) => ringd('maglev', names),
    owner: (p, key) => p.owner(key),
    loop(p, keys, mask, start, count) {
      let acc = 0;
      for (let i = start, end = start + count; i < end; i++) acc += p.owner(keys[i & mask]).length;
      return acc;
    },
  },
  'ringd-table': {
    name: 'ringd-table',
    label: 'ringd `table`',
    make: (names) => ringd('table', names),
    owner: (p, key) => p.owner(key),
    loop(p, keys, mask, start, count) {
      let acc = 0;
      for (let i = start, end = start + count; i < end; i++) acc += p.owner(keys[i & mask]).length;
      return acc;
    },
  },
  'ringd-table-cached': {
    name: 'ringd-table-cached',
    label: 'ringd `table`, owner cache',
    make: async (names) => new OwnerCache(await ringd('table', names), 5000),
    owner: (c, key) => c.owner(key),
    loop(c, keys, mask, start, count) {
      let acc = 0;
      for (let i = start, end = start + count; i < end; i++) acc += c.owner(keys[i & mask]).length;
      return acc;
    },
  },
  'ringd-rendezvous': {
    name: 'ringd-rendezvous',
    label: 'ringd `rendezvous`',
    make: (names) => ringd('rendezvous', names),
    owner: (p, key) => p.owner(key),
    loop(p, keys, mask, start, count) {
      let acc = 0;
      for (let i = start, end = start + count; i < end; i++) acc += p.owner(keys[i & mask]).length;
      return acc;
    },
  },
  // hashring: ketama-style, its defaults (md5 via node:crypto, 40 vnodes ×
  // 4 points = 160 points per server, a 5,000-entry LRU cache of answers).
  hashring: {
    name: 'hashring',
    label: 'hashring',
    make: async (names) => {
      const HashRing = require('hashring');
      return new HashRing(names);
    },
    owner: (r, key) => r.get(key),
    loop(r, keys, mask, start, count) {
      let acc = 0;
      for (let i = start, end = start + count; i < end; i++) acc += r.get(keys[i & mask]).length;
      return acc;
    },
  },
  // The same ring without its cache: what `get` does on a miss, minus the
  // cache's own bookkeeping (`find` is public, `hashValue` is what `get`
  // calls). A diagnostic: the cache cannot be turned off by an option
  // ('max cache size': 0 throws on the first insert).
  'hashring-nocache': {
    name: 'hashring-nocache',
    label: 'hashring, cache bypassed',
    make: async (names) => {
      const HashRing = require('hashring');
      return new HashRing(names);
    },
    owner: (r, key) => r.ring[r.find(r.hashValue(key))].server,
    loop(r, keys, mask, start, count) {
      let acc = 0;
      for (let i = start, end = start + count; i < end; i++) {
        acc += r.ring[r.find(r.hashValue(keys[i & mask]))].server.length;
      }
      return acc;
    },
  },
  // consistent-hash: its defaults (40 control points per node at random
  // positions in a 100,003-point ring, a 24-bit PJW string hash).
  'consistent-hash': {
    name: 'consistent-hash',
    label: 'consistent-hash',
    make: async (names) => {
      const ConsistentHash = require('consistent-hash');
      const r = new ConsistentHash();
      for (const n of names) r.add(n);
      return r;
    },
    owner: (r, key) => r.get(key),
    loop(r, keys, mask, start, count) {
      let acc = 0;
      for (let i = start, end = start + count; i < end; i++) acc += r.get(keys[i & mask]).length;
      return acc;
    },
  },
  // consistent-hashing: its defaults (160 replicas per node, md5 hex
  // strings via node:crypto, compared as strings). Every lookup counts the
  // ring's points (`Object.keys(this.ring).length`), so it is O(points):
  // about 0.1 s per lookup at 1,000 nodes, so its check looks up the
  // first 256 keys, not all 16,384 (which would take half an hour).
  'consistent-hashing': {
    name: 'consistent-hashing',
    label: 'consistent-hashing',
    checkKeys: 256,
    make: async (names) => {
      const ConsistentHashing = require('consistent-hashing');
      return new ConsistentHashing(names);
    },
    owner: (r, key) => r.getNode(key),
    loop(r, keys, mask, start, count) {
      let acc = 0;
      for (let i = start, end = start + count; i < end; i++) acc += r.getNode(keys[i & mask]).length;
      return acc;
    },
  },
};
