// envoy_ring_hash and envoy_maglev rings on a real ringd: a RingClient
// following one places keys as POST …/lookup does through versions that
// move every address (IPv4, IPv6, IPv4-mapped), give a node's label to a
// replacement, ramp a node in through a rollout and change the ring sizes
// (the table size); and the node sets and configs the placement core
// refuses, ringd refuses too, while those it takes, ringd takes.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RingClient } from '../../src/client/index.js';
import { build, PlacementError, parseConfig, parseNodes } from '../../src/placement/index.js';
import { FAST, Ringd, SKIP, waitUntil, waitVersion } from './ringd.js';

/** @typedef {import("./ringd.js").Api} Api */
/** @typedef {import("../../src/placement/index.js").ErrorCode} ErrorCode */

/** Keys compared at every version: ASCII, non-ASCII and empty. */
const KEYS = ['', ...Array.from({ length: 3000 }, (_, i) => (i % 3 === 2 ? `ключ-${i}` : `user:${i}`))];

/**
 * @param {string} id
 * @param {string} address
 * @param {Record<string, unknown>} [rest]
 */
const upsert = (id, address, rest = {}) => ({ op: 'upsert', node: { id, address, ...rest } });

/** The first version's endpoints: IPv4, IPv6, IPv4-mapped; labels by id and by hash_key. */
const ENDPOINTS = [
  upsert('e-1', '10.0.0.1:8080'),
  upsert('e-2', '[2001:db8::2]:8080', { weight: 3 }),
  upsert('e-3', '[::ffff:10.0.0.3]:80', { hash_key: 'ключ-3' }),
  upsert('e-4', '10.0.0.4:8080', { weight: 2, hash_key: 'shard-4' }),
  upsert('e-5', '[fe80::1:0:0:5]:443', { weight: 5 }),
];

/**
 * Checks the client at v against the server: the canonical encoding it
 * rebuilt is the one GET …/snapshots/{v}/table serves, byte for byte, and
 * every key of KEYS has the owner and three-node preference list POST
 * …/lookup gives.
 * @param {Api} api
 * @param {RingClient} client
 * @param {number} v
 * @returns {Promise<string>} the fingerprint of v
 */
async function agrees(api, client, v) {
  await waitVersion(client, v);
  const view = client.current();
  assert.ok(view !== null && view.version === v);
  const res = await fetch(`${api.server.url}/v1/rings/${api.ring}/snapshots/${v}/table`, {
    headers: { Connection: 'close' },
  });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('ringd-fingerprint'), view.fingerprint, `v${v}: fingerprint`);
  assert.deepEqual(view.placement.encode(), new Uint8Array(await res.arrayBuffer()), `v${v}: encoding`);
  const lists = await api.lookup(v, KEYS, 3);
  KEYS.forEach((k, i) => {
    assert.deepEqual(client.preferenceList(k, 3), lists[i], `v${v}: list of ${JSON.stringify(k)}`);
    assert.equal(client.owner(k), lists[i][0] ?? null, `v${v}: owner of ${JSON.stringify(k)}`);
  });
  return view.fingerprint;
}

/**
 * Follows api's ring (created, no nodes) through the versions both xDS algorithms
 * share: endpoints, moved addresses, a replacement by label and a ramped
 * rollout, each placed as the server places it.
 * @param {Ringd} s
 * @param {Api} api
 * @param {import("node:test").TestContext} t
 * @returns {Promise<RingClient>} the client, at the rollout's last step
 */
async function followEndpoints(s, api, t) {
  const client = new RingClient([s.url], api.ring, { ...FAST, clientId: `js-${api.ring}`, ack: false });
  t.after(() => client.close());

  const v2 = await api.change(...ENDPOINTS);
  const fp2 = await agrees(api, client, v2);

  // Every node moves to another address: labels place, so nothing moves
  // and the fingerprint stays.
  const moved = ENDPOINTS.map((op, i) => ({ ...op, node: { ...op.node, address: `[2001:db8:1::${i + 1}]:9090` } }));
  const v3 = await api.change(...moved);
  assert.equal(await agrees(api, client, v3), fp2, 'addresses place nothing');

  // A replacement takes e-2's label as hash_key, and with it every key e-2 had.
  const before = new Map(KEYS.map((k) => [k, client.owner(k)]));
  const v4 = await api.change(
    { op: 'upsert', node: { ...moved[1].node, state: 'draining' } },
    upsert('e-2b', '10.0.0.22:8080', { weight: 3, hash_key: 'e-2' }),
  );
  await agrees(api, client, v4);
  for (const k of KEYS) {
    const was = before.get(k);
    assert.equal(client.owner(k), was === 'e-2' ? 'e-2b' : was, `v${v4}: owner of ${JSON.stringify(k)}`);
  }

  // A new endpoint ramped in over three steps: each step's version,
  // ramps and all, is placed as the server places it.
  const rollout = await api.do(
    'POST',
    '/rollouts',
    { ops: [upsert('e-6', '10.0.0.6:8080')], policy: { steps: 3 } },
    201,
  );
  /** @type {any} */
  let r;
  await waitUntil(
    'the rollout to finish',
    async () => {
      r = await api.do('GET', `/rollouts/${rollout.id}`, undefined, 200);
      return r.state === 'done';
    },
    30_000,
  );
  /** @type {number[]} */
  const steps = r.plan
    .map((/** @type {any} */ p) => p.version)
    .filter((/** @type {unknown} */ v) => typeof v === 'number');
  assert.equal(steps.length, 3);
  let ramped = false;
  for (const v of steps) {
    const snapshot = await api.do('GET', `/snapshots/${v}`, undefined, 200);
    ramped ||= snapshot.nodes.some((/** @type {any} */ n) => n.id === 'e-6' && (n.ramp ?? 65_536) < 65_536);
  }
  assert.ok(ramped, 'a step has e-6 below full ramp');
  await agrees(api, client, steps[2]);
  return client;
}

test('an envoy_ring_hash ring followed through its versions', { skip: SKIP }, async (t) => {
  const s = await Ringd.start(t);
  const api = s.api('edge');
  await api.create({ algorithm: 'envoy_ring_hash', minimum_ring_size: 64, maximum_ring_size: 2048 });
  const config = (await api.do('GET', '', undefined, 200)).config;
  assert.deepEqual(
    [config.hash, config.minimum_ring_size, config.maximum_ring_size],
    ['xxh64', 64, 2048],
    'the ring sizes read back',
  );
  const client = await followEndpoints(s, api, t);

  // Other ring sizes re-cut every endpoint's entries.
  const v5 = await api.change({ op: 'update_config', config: { minimum_ring_size: 2000, maximum_ring_size: 3000 } });
  await agrees(api, client, v5);
  const entries = client.current()?.placement.points()?.length ?? 0;
  assert.ok(entries >= 2000 && entries <= 3000, `${entries} entries`);
});

test('an envoy_maglev ring followed through its versions', { skip: SKIP }, async (t) => {
  const s = await Ringd.start(t);
  const api = s.api('maglev-edge');
  await api.create({ algorithm: 'envoy_maglev', table_size: 1009 });
  const config = (await api.do('GET', '', undefined, 200)).config;
  assert.deepEqual([config.hash, config.table_size], ['xxh64', 1009], 'the table size reads back');
  const client = await followEndpoints(s, api, t);
  assert.equal(client.current()?.placement.maglevTable()?.length, 1009);

  // Another table size refills every slot.
  const v5 = await api.change({ op: 'update_config', config: { table_size: 65_521 } });
  await agrees(api, client, v5);
  assert.equal(client.current()?.placement.maglevTable()?.length, 65_521);

  // Spec 5.11's example: weights 5 and 1 at M = 7, Envoy's table.
  const small = s.api('five-and-one');
  await small.create({ algorithm: 'envoy_maglev', table_size: 7 });
  const v = await small.change(
    upsert('a', '10.0.0.1:80', { weight: 5, hash_key: '10.0.0.1:80' }),
    upsert('b', '10.0.0.2:80', { hash_key: '10.0.0.2:80' }),
  );
  const follower = new RingClient([s.url], 'five-and-one', { ...FAST, clientId: 'js-five-and-one', ack: false });
  t.after(() => follower.close());
  await agrees(small, follower, v);
  assert.deepEqual(follower.current()?.placement.maglevTable(), ['a', 'a', 'a', 'a', 'b', 'a', 'a']);
});

/**
 * The node sets and configs the server and the placement core judge alike:
 * [name, config, upserts, the core's refusal or null].
 * @type {[string, Record<string, unknown>, object[], ErrorCode | null][]}
 */
const JUDGED = [
  ['no address', {}, [{ op: 'upsert', node: { id: 'a' } }], 'MissingAddress'],
  ['a host name', {}, [upsert('a', 'cache-a:8080')], 'AddressNotServer'],
  ['port 0', {}, [upsert('a', '10.0.0.1:0')], 'AddressNotServer'],
  ['a leading zero', {}, [upsert('a', '10.0.0.01:80')], 'AddressNotServer'],
  ['uppercase IPv6', {}, [upsert('a', '[2001:DB8::1]:80')], 'AddressNotServer'],
  ['IPv6 not shortest', {}, [upsert('a', '[2001:db8:0:0:1::1]:80')], 'AddressNotServer'],
  ['IPv6 zone', {}, [upsert('a', '[fe80::1%2]:80')], 'AddressNotServer'],
  ['IPv4-mapped in hex', {}, [upsert('a', '[::ffff:a00:1]:80')], 'AddressNotServer'],
  [
    'a bad draining address',
    {},
    [upsert('a', '10.0.0.1:80'), upsert('b', 'b:80', { state: 'draining' })],
    'AddressNotServer',
  ],
  [
    'one label twice',
    {},
    [upsert('a', '10.0.0.1:80'), upsert('b', '10.0.0.2:80', { hash_key: 'a' })],
    'EndpointKeyTaken',
  ],
  ['one address twice', {}, [upsert('a', '[::1]:80'), upsert('b', '[::1]:80')], 'DuplicateAddress'],
  [
    'a share below 2^-31',
    {},
    [upsert('a', '10.0.0.1:80', { weight: 1_000_000 }), upsert('b', '10.0.0.2:80', { weight: 1, ramp: 1 })],
    'WeightShareTooSmall',
  ],
  [
    'canonical forms',
    {},
    [upsert('a', '0.0.0.0:1'), upsert('b', '[::]:65535'), upsert('c', '[1::1:0:0:1:0]:80')],
    null,
  ],
  [
    'one part in 2^31, and no entry',
    {},
    [upsert('a', '10.0.0.1:80', { weight: 32_768, ramp: 65_535 }), upsert('b', '10.0.0.2:80', { weight: 1, ramp: 1 })],
    null,
  ],
  ['ring size 0', { minimum_ring_size: 0 }, [], 'RingSizeOutOfRange'],
  ['ring size 2^23 + 1', { maximum_ring_size: 2 ** 23 + 1 }, [], 'RingSizeOutOfRange'],
  ['ring sizes inverted', { minimum_ring_size: 4097 }, [], 'RingSizesInverted'],
  ['ring sizes at their bounds', { minimum_ring_size: 1, maximum_ring_size: 2 ** 23 }, [], null],
  ['xxh3', { hash: 'xxh3' }, [], 'HashNotAccepted'],
];

/**
 * envoy_maglev's: 5.10.4's checks, and table sizes (spec 5.11, 2.4 checks 1 and 6).
 * @type {[string, Record<string, unknown>, object[], ErrorCode | null][]}
 */
const JUDGED_MAGLEV = [
  ['no address', {}, [{ op: 'upsert', node: { id: 'a' } }], 'MissingAddress'],
  ['a host name', {}, [upsert('a', 'cache-a:8080')], 'AddressNotServer'],
  ['IPv6 not shortest', {}, [upsert('a', '[2001:db8:0:0:1::1]:80')], 'AddressNotServer'],
  [
    'one label twice',
    {},
    [upsert('a', '10.0.0.1:80'), upsert('b', '10.0.0.2:80', { hash_key: 'a' })],
    'EndpointKeyTaken',
  ],
  ['one address twice', {}, [upsert('a', '[::1]:80'), upsert('b', '[::1]:80')], 'DuplicateAddress'],
  [
    'a share below 2^-31',
    {},
    [upsert('a', '10.0.0.1:80', { weight: 1_000_000 }), upsert('b', '10.0.0.2:80', { weight: 1, ramp: 1 })],
    'WeightShareTooSmall',
  ],
  [
    'canonical forms, ramps, a draining node without an address',
    { table_size: 13 },
    [
      upsert('a', '0.0.0.0:1', { ramp: 300 }),
      upsert('b', '[::]:65535', { weight: 7 }),
      upsert('c', '[1::1:0:0:1:0]:80'),
      { op: 'upsert', node: { id: 'd', state: 'draining' } },
    ],
    null,
  ],
  ['table_size 4', { table_size: 4 }, [], 'TableSizeNotPrime'],
  ['table_size 1', { table_size: 1 }, [], 'TableSizeOutOfRange'],
  ['table_size 5000017', { table_size: 5_000_017 }, [], 'TableSizeOutOfRange'],
  ['table_size 5000077, a prime past the bound', { table_size: 5_000_077 }, [], 'TableSizeOutOfRange'],
  ['table_size 5000011', { table_size: 5_000_011 }, [], null],
  [
    'table_size below the nodes',
    { table_size: 2 },
    [upsert('a', '10.0.0.1:80'), upsert('b', '10.0.0.2:80'), upsert('c', '10.0.0.3:80')],
    'TableSizeOutOfRange',
  ],
  [
    'the largest table, one endpoint past 99.9 %',
    { table_size: 5_000_011 },
    [upsert('a', '10.0.0.1:80', { weight: 1_000_000 }), upsert('b', '10.0.0.2:80', { ramp: 40_000 })],
    null,
  ],
  ['xxh3', { hash: 'xxh3' }, [], 'HashNotAccepted'],
];

test('ringd refuses what the placement core refuses, and takes what it takes', { skip: SKIP }, async (t) => {
  const s = await Ringd.start(t);
  const judged = [
    ...JUDGED.map(([name, extra, ops, code]) => ({
      name,
      config: { algorithm: 'envoy_ring_hash', ...extra },
      ops,
      code,
    })),
    ...JUDGED_MAGLEV.map(([name, extra, ops, code]) => ({
      name: `envoy_maglev: ${name}`,
      config: { algorithm: 'envoy_maglev', ...extra },
      ops,
      code,
    })),
  ];
  for (const [i, { name, config, ops, code }] of judged.entries()) {
    const nodes = ops.map((op) => /** @type {{ node: import("../../src/placement/json.js").JsonObject }} */ (op).node);
    /** @type {PlacementError | null} */
    let refused = null;
    let fingerprint = '';
    try {
      fingerprint = (await build(parseConfig(config), parseNodes(nodes))).fingerprint;
    } catch (e) {
      if (!(e instanceof PlacementError)) throw e;
      refused = e;
    }
    assert.equal(refused?.code ?? null, code, `${name}: the core`);
    const api = s.api(`judged-${i}`);
    const want = code === null;
    if (ops.length === 0) await api.do('PUT', '', config, want ? 201 : 400);
    else {
      await api.create(config);
      await api.do('POST', '/changes', { ops }, want ? 200 : 400);
    }
    // What both take, both place alike.
    if (want)
      assert.equal((await api.do('GET', '', undefined, 200)).fingerprint, fingerprint, `${name}: the fingerprint`);
  }
});
