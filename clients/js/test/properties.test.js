// Property tests of the placement core's promises, as the Rust and Go ones,
// over seeded random node sets: 1-12 nodes with distinct ids, weights 1-4,
// one of three zones and an IPv4 address, which every algorithm that
// needs one takes. table is left out: a client never
// computes a table, and the vectors pin what it does with a stored one.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { build, decodeEncoding, encodeEncoding, nextBucketOrder } from '../src/placement/index.js';

const CASES = 24;
/** @type {import('../src/placement/index.js').Algorithm[]} */
const ALGORITHMS = [
  'ring',
  'ketama',
  'maglev',
  'jump',
  'rendezvous',
  'nginx',
  'haproxy',
  'twemproxy',
  'envoy_ring_hash',
  'envoy_maglev',
];

/**
 * mulberry32: a small seeded generator, so failures reproduce.
 * @param {number} seed
 */
function rng(seed) {
  let a = seed >>> 0;
  return {
    /** @param {number} n @returns {number} an integer in 0..n−1 */
    int(n) {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
    },
  };
}

/**
 * @param {ReturnType<typeof rng>} r
 * @param {number} max
 */
function randomNodes(r, max) {
  const count = 1 + r.int(max);
  /** @type {Map<string, import('../src/placement/index.js').NodeInput>} */
  const nodes = new Map();
  for (let serial = 0; nodes.size < count; serial++) {
    let id = String.fromCharCode(97 + r.int(26));
    for (let k = r.int(8); k > 0; k--) id += 'abcdefghijklmnopqrstuvwxyz0123456789'[r.int(36)];
    nodes.set(id, { id, weight: 1 + r.int(4), zone: ['za', 'zb', 'zc'][r.int(3)], address: `10.0.0.${serial}:11211` });
  }
  return [...nodes.values()];
}

/**
 * @param {import('../src/placement/index.js').Algorithm} algorithm
 * @returns {import('../src/placement/index.js').ConfigInput}
 */
const config = (algorithm) => ({ algorithm, tableSize: 4099 }); // keeps maglev and envoy_maglev fast; still prime
const keys = Array.from({ length: 200 }, (_, i) => `k${i}`);

/**
 * Runs f over CASES seeded cases for each algorithm.
 * @param {string} name
 * @param {import('../src/placement/index.js').Algorithm[]} algorithms
 * @param {(a: import('../src/placement/index.js').Algorithm, r: ReturnType<typeof rng>) => Promise<void>} f
 */
function property(name, algorithms, f) {
  test(name, async () => {
    for (const [i, a] of algorithms.entries()) {
      for (let c = 0; c < CASES; c++) await f(a, rng(1000 * i + c));
    }
  });
}

property('input order never matters', ALGORITHMS, async (a, r) => {
  const nodes = randomNodes(r, 12);
  const shuffled = [...nodes];
  for (let i = shuffled.length - 1; i > 0; i--) {
    const j = r.int(i + 1);
    [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
  }
  const p = await build(config(a), nodes);
  const q = await build(config(a), shuffled);
  assert.equal(p.fingerprint, q.fingerprint, a);
  for (const k of keys) assert.deepEqual(p.preferenceList(k, 3), q.preferenceList(k, 3));
});

property(
  'preference lists hold min(r, n) distinct nodes, owner first, zones spread first',
  ALGORITHMS,
  async (a, r) => {
    const nodes = randomNodes(r, 12);
    const zoneAware = r.int(2) === 0;
    const want = 1 + r.int(8);
    const p = await build({ ...config(a), zoneAware }, nodes);
    const zoneOf = new Map(nodes.map((n) => [n.id, n.zone]));
    const zones = new Set(zoneOf.values()).size;
    for (const k of keys) {
      const list = p.preferenceList(k, want);
      assert.equal(list.length, Math.min(want, nodes.length), `${a} ${k}`);
      assert.equal(list[0], p.owner(k));
      assert.equal(new Set(list).size, list.length, `${a} ${k}: ${list} repeats a node`);
      if (zoneAware) {
        const spread = new Set(list.slice(0, Math.min(want, zones)).map((id) => zoneOf.get(id)));
        assert.equal(spread.size, Math.min(want, zones), `${a} ${k}: ${list} does not spread over zones first`);
      }
    }
  },
);

property('ownership units sum to the total', ALGORITHMS, async (a, r) => {
  const nodes = randomNodes(r, 12);
  const o = (await build(config(a), nodes)).ownership();
  const weights = BigInt(nodes.reduce((s, n) => s + (n.weight ?? 1), 0));
  /** @type {Record<string, bigint>} */
  const totals = {
    ring: 2n ** 64n,
    envoy_ring_hash: 2n ** 64n,
    maglev: 4099n,
    envoy_maglev: 4099n,
    jump: weights,
    rendezvous: weights,
  };
  const total = totals[a] ?? 2n ** 32n;
  assert.equal(o.totalUnits, total, a);
  assert.equal(
    o.nodes.reduce((s, n) => s + n.units, 0n),
    total,
  );
});

property('encode(decode(x)) == x', [...ALGORITHMS], async (a, r) => {
  const nodes = randomNodes(r, 12);
  const zoneAware = r.int(2) === 0;
  const bytes = (await build({ ...config(a), zoneAware }, nodes)).encode();
  assert.deepEqual(encodeEncoding(decodeEncoding(bytes)), bytes);
});

property('removing a node moves only its keys', ['ring', 'jump', 'rendezvous', 'nginx', 'haproxy'], async (a, r) => {
  const nodes = randomNodes(r, 12);
  if (nodes.length < 2) return;
  const before = await build(config(a), nodes);
  const gone = nodes[r.int(nodes.length)].id;
  const rest = nodes.filter((n) => n.id !== gone);
  /** @type {import('../src/placement/index.js').Stored} */
  const stored = {};
  if (a === 'jump') stored.buckets = nextBucketOrder(before.bucketOrder() ?? [], rest);
  if (a === 'haproxy') stored.serverIds = before.serverIds();
  const after = await build(config(a), rest, stored);
  for (const k of keys) {
    const [was, now] = [before.owner(k), after.owner(k)];
    assert.ok(was === now || was === gone, `${a}: ${k} moved from ${was} to ${now}`);
  }
});

property(
  'the xDS algorithms place by label: new addresses move nothing, a hash_key takes over',
  ['envoy_ring_hash', 'envoy_maglev'],
  async (a, r) => {
    const nodes = randomNodes(r, 12);
    const before = await build(config(a), nodes);
    const moved = nodes.map((n, i) => ({ ...n, address: `[2001:db8::${(i + 1).toString(16)}]:${1 + r.int(65_535)}` }));
    const after = await build(config(a), moved);
    assert.equal(after.fingerprint, before.fingerprint);
    // A replacement given the old node's label as hash_key gets its entries
    // (or slots) and its keys; the old node drains.
    const old = nodes[r.int(nodes.length)];
    const replaced = [
      ...nodes.map((n) => (n.id === old.id ? { ...n, state: /** @type {const} */ ('draining') } : n)),
      { ...old, id: 'zz-spare', hashKey: old.id, address: '10.0.1.1:11211' },
    ];
    const spare = await build(config(a), replaced);
    for (const k of keys) {
      const was = before.owner(k);
      assert.equal(spare.owner(k), was === old.id ? 'zz-spare' : was, k);
    }
    assert.equal(
      spare.ownership().nodes.find((n) => n.id === 'zz-spare')?.units,
      before.ownership().nodes.find((n) => n.id === old.id)?.units,
    );
  },
);

test('nextBucketOrder follows the worked sequence of 5.4.3', () => {
  /** @param {string} spec */
  const nodes = (spec) => spec.split(' ').map((f) => ({ id: f[0], weight: Number(f[1]) }));
  /** @param {import('../src/placement/index.js').BucketRun[]} runs */
  const str = (runs) => runs.map((r) => (r.id ?? '-').repeat(r.count)).join('');
  const o1 = nextBucketOrder([], nodes('a2 b1 c1 d2'));
  const o2 = nextBucketOrder(o1, nodes('b1 c1 d2'));
  const o3 = nextBucketOrder(o2, nodes('b1 c3 d1 e1'));
  const o4 = nextBucketOrder(o3, nodes('b1 c1'));
  assert.deepEqual([o1, o2, o3, o4].map(str), ['aabcdd', '--bcdd', 'ccbcde', 'c-b']);
});
