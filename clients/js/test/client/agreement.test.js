// The JS package places keys exactly as the server does: for every
// (algorithm, hash) pair ringd accepts, on a real ringd over SQLite and
// over a one-member etcd, a RingClient following the ring gives the owner
// and 3-node preference list that POST …/lookup gives with keys_b64, for
// 100,000 keys, half of them not UTF-8. It mirrors the Go client's
// TestAgreesWithServerLookup (clients/go/agreement_test.go).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RingClient } from '../../src/client/index.js';
import { ALGORITHMS, acceptedHashes, HASHES } from '../../src/placement/index.js';
import { ETCD_SKIP, startEtcd } from './etcd.js';
import { FAST, remove, Ringd, SKIP, waitVersion } from './ringd.js';

/** @typedef {import("../../src/placement/index.js").Algorithm} Algorithm */
/** @typedef {import("../../src/placement/index.js").Hash} Hash */
/** @typedef {{ key_b64: string, owner: string | null, replicas: string[] }} KeyPlacement */

// Every pair gets the 100,000 keys, unlike the Go test, which
// gives non-default hashes 20,000 to keep its -race run short. Measured
// on two cores: about 65 s a store, 2 min 15 s in all, of which the four
// rendezvous rings take 10 s each (the client scores each of 22 nodes per
// key) and every other ring about 0.7 s.
const AGREEMENT_KEYS = 100_000;
/** The most keys one POST …/lookup takes (api.md). */
const LOOKUP_BATCH = 10_000;
/** The preference list length compared. */
const REPLICAS = 3;
/** Differing keys printed before a pair stops: enough to see a pattern. */
const MAX_DIFFS = 5;

/**
 * mulberry32: a small seeded PRNG, so that the keys are the same on every
 * run and a failure names keys that reproduce.
 * @param {number} seed
 */
function prng(seed) {
  let a = seed >>> 0;
  /** @param {number} n @returns {number} 0 to n-1 */
  return (n) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) % n;
  };
}

/**
 * The keys every ring places: the even ones UTF-8 text (ASCII, twemproxy
 * hash-tagged, non-ASCII), given to the client as strings as an
 * application would, so its UTF-8 encoding is compared too; the odd ones
 * random bytes with a 0xFF, which is never UTF-8, given as bytes. The
 * server gets every key's bytes as base64.
 * @type {{ key: string | Uint8Array, bytes: Uint8Array, b64: string }[]}
 */
const KEYS = (() => {
  const rand = prng(0x5eed);
  const utf8 = new TextEncoder();
  return Array.from({ length: AGREEMENT_KEYS }, (_, i) => {
    /** @type {string | Uint8Array} */
    let key;
    if (i % 2 === 1) {
      key = Uint8Array.from({ length: 1 + rand(40) }, () => rand(256));
      key[rand(key.length)] = 0xff;
    } else if (i % 6 === 0) {
      key = `user:${i}`;
    } else if (i % 6 === 2) {
      key = `item:{${Math.floor(i / 6)}}:cart`;
    } else {
      key = `ключ-${i}-ü`;
    }
    const bytes = typeof key === 'string' ? utf8.encode(key) : key;
    return { key, bytes, b64: Buffer.from(bytes).toString('base64') };
  });
})();

/**
 * One ring: an (algorithm, hash) pair and the variant of its config that
 * pair gets. The odd-numbered hashes of an algorithm are not zone aware,
 * which also turns off haproxy's avalanche, gives twemproxy the hash tag
 * {}, envoy_ring_hash ring sizes other than the defaults and envoy_maglev
 * another table size, so both sides of each switch are compared.
 * @typedef {{ alg: Algorithm, hash: Hash, zoneAware: boolean }} Case
 */

/** @param {Case} c */
const caseName = (c) => `${c.alg}-${c.hash.replaceAll('_', '-')}${c.zoneAware ? '' : '-flat'}`;

/** @param {Case} c @returns {Record<string, unknown>} */
function caseConfig(c) {
  /** @type {Record<string, unknown>} */
  const cfg = { algorithm: c.alg, hash: c.hash, zone_aware: c.zoneAware };
  if (c.alg === 'table') cfg.partitions = 4096;
  if (c.alg === 'maglev') cfg.table_size = 10_007; // prime, and not the default 65,537
  // Prime and not the default. (Near Envoy's bound, 4,999,999, a change
  // over etcd can miss the server's 800 ms write deadline while the
  // other test files load the machine; envoy.test.js builds that large a
  // table once.)
  if (c.alg === 'envoy_maglev' && !c.zoneAware) cfg.table_size = 10_007;
  if (c.alg === 'haproxy') cfg.avalanche = c.zoneAware;
  if (c.alg === 'twemproxy' && !c.zoneAware) cfg.hash_tag = '{}';
  if (c.alg === 'envoy_ring_hash' && !c.zoneAware) {
    cfg.minimum_ring_size = 3000;
    cfg.maximum_ring_size = 5000;
  }
  return cfg;
}

/**
 * Every pair ringd accepts (spec 2.1: the hashes each algorithm takes,
 * its default first; the test below checks that the server takes no
 * other). An algorithm with one hash gets that pair twice, zone aware and
 * not.
 * @returns {Case[]}
 */
function cases() {
  return ALGORITHMS.flatMap((alg) => {
    const hashes = acceptedHashes(alg);
    /** @type {Case[]} */
    const out = hashes.map((hash, i) => ({ alg, hash, zoneAware: i % 2 === 0 }));
    if (hashes.length === 1) out.push({ alg, hash: hashes[0], zoneAware: false });
    return out;
  });
}

/**
 * Node i of the set every ring gets: three zones of equal weight (so a
 * zone-aware table passes check 7 of spec 2.4), weights 1 to 4, and an
 * address each proxy mode takes (nginx and twemproxy place by it,
 * envoy_ring_hash and envoy_maglev need an IP:port).
 * @param {number} i
 * @param {'active' | 'draining'} state
 */
function node(i, state) {
  /** @type {Record<string, unknown>} */
  const n = {
    id: `node-${String(i).padStart(2, '0')}`,
    weight: 1 + (Math.floor(i / 3) % 4),
    zone: `zone-${'abc'[i % 3]}`,
    address: `10.0.${Math.floor(i / 3)}.${10 + i}:11211`,
    state,
  };
  if (i === 7) n.hash_key = 'spare-7'; // placed by its hash key, not its id
  return n;
}

/**
 * The server's answers for keys at version v, sent as keys_b64, checked
 * to be at v and each to echo its key.
 * @param {import("./ringd.js").Api} api
 * @param {typeof KEYS} keys
 * @param {number} v
 * @returns {Promise<KeyPlacement[]>}
 */
async function serverLookup(api, keys, v) {
  const b64 = keys.map((k) => k.b64);
  const out = /** @type {{ version: number, replicas: number, results: KeyPlacement[] }} */ (
    await api.do('POST', '/lookup', { keys_b64: b64, replicas: REPLICAS, version: v }, 200)
  );
  assert.deepEqual([out.version, out.replicas, out.results.length], [v, REPLICAS, keys.length], 'POST …/lookup');
  out.results.forEach((r, i) => {
    if (r.key_b64 !== b64[i]) assert.fail(`POST …/lookup: result ${i} is for key_b64 ${r.key_b64}, sent ${b64[i]}`);
  });
  return out.results;
}

/**
 * Makes the case's ring in two versions (nodes added; one node replaced,
 * one draining), follows it, and compares the client with the server's
 * batch lookup at that version, key by key.
 * @param {Ringd} s
 * @param {Case} c
 */
async function checkAgreement(s, c) {
  const name = caseName(c);
  const api = s.api(name);
  await api.create(caseConfig(c));
  await api.change(...Array.from({ length: 21 }, (_, i) => ({ op: 'upsert', node: node(i, 'active') })));
  // node-21 takes node-03's zone and weight: zone weights stay equal.
  const v = await api.change(
    remove('node-03'),
    { op: 'upsert', node: node(21, 'active') },
    { op: 'upsert', node: node(22, 'draining') },
  );

  const client = new RingClient([s.url], name, { ...FAST, clientId: `agree-${name}`, ack: false });
  try {
    await waitVersion(client, v);
    /** @type {string[]} */
    const diffs = [];
    // The next batch is asked for while this one is compared, so that the
    // server and the client work at once.
    let next = serverLookup(api, KEYS.slice(0, LOOKUP_BATCH), v);
    for (let start = 0; start < KEYS.length && diffs.length < MAX_DIFFS; start += LOOKUP_BATCH) {
      const results = await next;
      const after = start + LOOKUP_BATCH;
      if (after < KEYS.length) next = serverLookup(api, KEYS.slice(after, after + LOOKUP_BATCH), v);
      for (const [j, want] of results.entries()) {
        const { key, bytes } = KEYS[start + j];
        const owner = client.owner(key);
        const list = client.preferenceList(key, REPLICAS);
        if (owner === want.owner && sameList(list, want.replicas)) continue;
        diffs.push(
          `key #${start + j} ${Buffer.from(bytes).toString('hex')} (${typeof key === 'string' ? 'text' : 'bytes'}): ` +
            `client owner ${JSON.stringify(owner)}, list ${JSON.stringify(list)}; ` +
            `server owner ${JSON.stringify(want.owner)}, list ${JSON.stringify(want.replicas)}`,
        );
        if (diffs.length === MAX_DIFFS) break;
      }
    }
    await next; // the one asked for when the loop stopped early; its failure is a failure too
    if (diffs.length > 0) {
      assert.fail(`${name} v${v}: the client disagrees with POST …/lookup; first differing keys:\n${diffs.join('\n')}`);
    }
  } finally {
    await client.close();
  }
}

/**
 * @param {readonly string[]} a
 * @param {readonly string[]} b
 */
function sameList(a, b) {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

test('the keys are half UTF-8 text and half not', () => {
  const strict = new TextDecoder('utf-8', { fatal: true });
  const invalid = KEYS.filter(({ bytes }) => {
    try {
      strict.decode(bytes);
      return false;
    } catch {
      return true;
    }
  });
  assert.equal(invalid.length, AGREEMENT_KEYS / 2);
  assert.ok(KEYS.every(({ key }, i) => (typeof key === 'string') === (i % 2 === 0)));
});

test('every pair the JS package lists is accepted by the server, and no other', { skip: SKIP }, async (t) => {
  const all = cases();
  // 11 algorithms; ketama, nginx, envoy_ring_hash and envoy_maglev twice
  // (one hash each), twemproxy 10.
  assert.equal(all.length, 42);
  assert.equal(new Set(all.map(caseName)).size, 42);
  const s = await Ringd.start(t);
  const api = s.api('refused');
  for (const alg of ALGORITHMS) {
    for (const hash of HASHES) {
      if (!acceptedHashes(alg).includes(hash)) {
        await api.do('PUT', '', { algorithm: alg, hash }, 400);
      }
    }
  }
  // The accepted pairs themselves are created by the agreement test.
});

test('the client places keys as POST …/lookup does, for every pair', { skip: SKIP }, async (t) => {
  /** @type {{ name: string, skip: string | false, store: (t: import("node:test").TestContext) => Promise<string> }[]} */
  const stores = [
    { name: 'sqlite', skip: false, store: async () => '' },
    { name: 'etcd', skip: ETCD_SKIP, store: startEtcd },
  ];
  for (const st of stores) {
    await t.test(st.name, { skip: st.skip }, async (t) => {
      const s = await Ringd.startOn(t, await st.store(t));
      for (const c of cases()) {
        await t.test(caseName(c), () => checkAgreement(s, c));
      }
    });
  }
});
