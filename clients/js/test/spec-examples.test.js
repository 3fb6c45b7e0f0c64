// The worked examples of docs/placement-spec.md (sections 3, 5, 5.10,
// 5.11, 9, 9.4 and 10), produced by the reference implementation.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { build, jumpHash, PlacementError, parseConfig, parseNodes, Snapshot } from '../src/placement/index.js';
import { envoyEndpointWeights, envoyEntryCounts } from '../src/placement/envoy-ring-hash.js';
import { hash64, loadHashes, md5First32, xxh64 } from '../src/placement/hashes.js';
import { makeNode } from '../src/placement/node.js';
import { log2Q32 } from '../src/placement/rendezvous.js';
import { fmix64, r64, toBigInt } from '../src/placement/u64.js';

const utf8 = new TextEncoder();
const hex = (/** @type {Uint8Array} */ b) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');

test('hash test values (3.3)', async () => {
  await loadHashes();
  /** @type {[string, bigint, bigint, bigint, bigint, bigint, bigint, number][]} */
  const rows = [
    [
      '',
      0x2d06800538d394c2n,
      0x04b2008fd98c1dd4n,
      0x141cfc9842c4b0e3n,
      0n,
      0xef46db3751d8e999n,
      0xd5afba1336a3be4bn,
      3649838548,
    ],
    [
      'hello',
      0x9555e8555c62dcfdn,
      0x762a4bbc2a40415dn,
      0x0ea3b05fba4df22cn,
      0xcbd8a7b341bd9b02n,
      0x26c7827d889f6da3n,
      0x23dd71cb04d0a1b2n,
      708854109,
    ],
    [
      'node-a',
      0xdadea24aa12481fen,
      0x5ce83ab35b8aec6cn,
      0x0474205af00f5766n,
      0x44a5bcec4b0764bfn,
      0x05378e2c8885d70bn,
      0xf7f4751e959874abn,
      1535831148,
    ],
  ];
  const h = (/** @type {import('../src/placement/index.js').Hash} */ f, /** @type {string} */ s) => {
    hash64(f, utf8.encode(s));
    return toBigInt(r64.hi, r64.lo);
  };
  const x = (/** @type {0 | 1} */ seed, /** @type {string} */ s) => {
    xxh64(utf8.encode(s), seed);
    return toBigInt(r64.hi, r64.lo);
  };
  for (const [s, xxh3, md5, sha256, murmur3, seed0, seed1, md532] of rows) {
    assert.deepEqual(
      [h('xxh3', s), h('md5', s), h('sha256', s), h('murmur3', s), x(0, s), x(1, s), md5First32(utf8.encode(s))],
      [xxh3, md5, sha256, murmur3, seed0, seed1, md532],
      s,
    );
  }
  assert.equal(h('murmur3', 'The quick brown fox jumps over the lazy dog'), 0xe34bbc7bbc071b6cn);
  assert.equal(h('murmur3', '0123456789abcdefX'), 0xcdebd2acb570d6f7n);
  fmix64(0, 1);
  assert.equal(toBigInt(r64.hi, r64.lo), 0xb456bcfc34c2cb2cn);
});

test('envoy_ring_hash: xxh64, endpoint weights, entry counts and the two-hosts ring (5.10)', async () => {
  await loadHashes();
  const xxh = (/** @type {string} */ s) => {
    hash64('xxh64', utf8.encode(s));
    return toBigInt(r64.hi, r64.lo);
  };
  assert.deepEqual(['', 'hello', '127.0.0.1:90_0'].map(xxh), [
    0xef46db3751d8e999n,
    0x26c7827d889f6da3n,
    16117243373044804889n,
  ]);
  /** @param {import('../src/placement/index.js').NodeInput[]} nodes */
  const weights = (nodes) => envoyEndpointWeights(nodes.map((n) => makeNode(n)));
  // 5.10.1: 2^31 by largest remainders, equal remainders in label order.
  assert.deepEqual(weights([{ id: 'a' }, { id: 'b', weight: 2 }]), [715827883, 1431655765]);
  assert.deepEqual(weights([{ id: 'a' }, { id: 'bb' }, { id: 'ccc' }]), [715827883, 715827883, 715827882]);
  // Labels, not ids, in UTF-8 byte order: U+FFFF sorts before U+10000,
  // which UTF-16 puts first (11.2).
  assert.deepEqual(
    weights([
      { id: 'n1', hashKey: 'ccc' },
      { id: 'n2', hashKey: 'bb' },
      { id: 'n3', hashKey: 'a' },
    ]),
    [715827882, 715827883, 715827883],
  );
  assert.deepEqual(
    weights([
      { id: 'n1', hashKey: '\u{10000}' },
      { id: 'n2', hashKey: '\uffff' },
      { id: 'n3', hashKey: 'a' },
    ]),
    [715827882, 715827883, 715827883],
  );
  // Scaled weights pass 2^53 once multiplied by 2^31: exact all the same.
  // One unit left over, to the largest remainder (b's).
  assert.deepEqual(
    weights([
      { id: 'a', weight: 1_000_000, ramp: 65_535 },
      { id: 'b', weight: 999_999 },
      { id: 'c', weight: 3 },
    ]),
    [1073732558, 1073747869, 3221],
  );
  const six = weights(Array.from({ length: 6 }, (_, i) => ({ id: `h${i}` })));
  assert.deepEqual(six, [357913942, 357913942, 357913941, 357913941, 357913941, 357913941]);
  // Six nodes of weight 1 at minimum 12: 13 entries from ringd's weights,
  // the 12 of Envoy's own ring from weights 1.
  assert.deepEqual(envoyEntryCounts(six, 12, 4096), [3, 2, 2, 2, 2, 2]);
  assert.deepEqual(envoyEntryCounts([1, 1, 1, 1, 1, 1], 12, 4096), [2, 2, 2, 2, 2, 2]);
  // One endpoint at the default sizes: the minimum, 1,024 entries.
  assert.deepEqual(envoyEntryCounts([2 ** 31], 1024, 4096), [1024]);
  // The lightest gets ⌈m × minimum⌉ entries (1,667), unless the maximum
  // caps the scale; then the order of the endpoints moves the fractions.
  assert.deepEqual(envoyEntryCounts([1431655765, 715827883], 5000, 6000), [3334, 1667]);
  assert.deepEqual(envoyEntryCounts([1000, 2147482648], 1024, 4096), [1, 4095]);
  assert.deepEqual(envoyEntryCounts([2147482648, 1000], 1024, 4096), [4096, 0]);
  const vector = async (/** @type {string} */ shape) =>
    JSON.parse(
      await readFile(
        new URL(`../../../tests/placement/vectors/envoy_ring_hash-${shape}.json`, import.meta.url),
        'utf8',
      ),
    );
  const v = await vector('six-hosts');
  assert.equal((await build(parseConfig(v.config), parseNodes(v.nodes))).points()?.length, 13);
  // Envoy's UnevenHosts ring: 2^30 each, m = 0.5, scale = 4, two entries each.
  const p = await build({ algorithm: 'envoy_ring_hash', minimumRingSize: 3 }, [
    { id: 'e-81', hashKey: '127.0.0.1:81', address: '127.0.0.1:81' },
    { id: 'e-80', hashKey: '127.0.0.1:80', address: '127.0.0.1:80' },
  ]);
  assert.deepEqual(p.points(), [
    { position: 5454692015285649509n, id: 'e-80' },
    { position: 7859399908942313493n, id: 'e-81' },
    { position: 13838424394637650569n, id: 'e-80' },
    { position: 16064866803292627174n, id: 'e-81' },
  ]);
  assert.equal(p.fingerprint, (await vector('two-hosts')).fingerprint);
  assert.equal(p.keyHash('hello'), 0x26c7827d889f6da3n);
  assert.equal(p.owner('hello'), 'e-80'); // 0x26c7… is before the first entry
  assert.deepEqual(p.preferenceList('hello', 2), ['e-80', 'e-81']);
  assert.deepEqual(
    p.ownership().nodes.map((n) => n.units),
    [
      5454692015285649509n +
        1n +
        (13838424394637650569n - 7859399908942313493n) +
        (2n ** 64n - 1n - 16064866803292627174n),
      7859399908942313493n - 5454692015285649509n + (16064866803292627174n - 13838424394637650569n),
    ],
  );
});

/**
 * Envoy's OriginalMaglevTable fill as maglev_lb.cc writes it, in binary64:
 * hosts are (hash key, weight), each weight normalized by their sum, and
 * the result is each slot's index in hosts. Permutations from XXH64 here,
 * not from maglev.js, so the table is checked against an independent fill.
 * @param {[string, number][]} hosts
 * @param {number} m
 * @returns {number[]}
 */
function envoyMaglevFill(hosts, m) {
  let sum = 0;
  for (const [, w] of hosts) sum += w;
  const seeded = (/** @type {string} */ key, /** @type {0 | 1} */ seed) => {
    xxh64(utf8.encode(key), seed);
    return toBigInt(r64.hi, r64.lo);
  };
  const entries = hosts
    .map(([key, w], host) => ({
      host,
      key,
      offset: Number(seeded(key, 0) % BigInt(m)),
      skip: Number(seeded(key, 1) % BigInt(m - 1)) + 1,
      weight: w / sum,
      target: 0,
      next: 0,
    }))
    .sort((a, b) => Buffer.compare(utf8.encode(a.key), utf8.encode(b.key)));
  let max = 0;
  for (const e of entries) max = Math.max(max, e.weight);
  const table = new Array(m).fill(-1);
  let filled = 0;
  for (let iteration = 1; filled < m; iteration++) {
    for (const e of entries) {
      if (filled === m) break;
      if (iteration * e.weight < e.target) continue;
      e.target += max;
      let c = (e.offset + e.skip * e.next) % m;
      while (table[c] !== -1) c = (e.offset + e.skip * ++e.next) % m;
      table[c] = e.host;
      e.next++;
      filled++;
    }
  }
  return table;
}

test("envoy_maglev: maglev's fill on the EDS weights, Envoy's table (5.11)", async () => {
  await loadHashes();
  // The port gives Envoy's own test tables (maglev_lb_test.cc).
  const reference = JSON.parse(
    await readFile(new URL('../../../tests/placement/vectors/reference/envoy-maglev.json', import.meta.url), 'utf8'),
  );
  for (const c of reference.cases) {
    const hosts = c.hosts.map((/** @type {any} */ h) => /** @type {[string, number]} */ ([h.hashed, h.weight]));
    assert.deepEqual(envoyMaglevFill(hosts, c.table_size), c.expected_table, c.name);
  }
  // The example: weights 5 and 1 at M = 7 get e = 1789569707 and
  // 357913941, and Envoy's table, which maglev's integer fill on the
  // plain weights misses by a slot (5.3).
  const nodes = [
    { id: 'a', hashKey: '10.0.0.1:80', address: '10.0.0.1:80', weight: 5 },
    { id: 'b', hashKey: '10.0.0.2:80', address: '10.0.0.2:80', weight: 1 },
  ];
  assert.deepEqual(envoyEndpointWeights(nodes.map((n) => makeNode(n))), [1789569707, 357913941]);
  const p = await build({ algorithm: 'envoy_maglev', tableSize: 7 }, nodes);
  assert.deepEqual(p.maglevTable(), ['a', 'a', 'a', 'a', 'b', 'a', 'a']);
  assert.deepEqual(
    envoyMaglevFill(
      [
        ['10.0.0.1:80', 5],
        ['10.0.0.2:80', 1],
      ],
      7,
    ),
    [0, 0, 0, 0, 1, 0, 0],
  );
  const plain = await build({ algorithm: 'maglev', tableSize: 7 }, nodes);
  assert.deepEqual(plain.maglevTable(), ['a', 'b', 'a', 'a', 'b', 'a', 'a']);
  const vector = JSON.parse(
    await readFile(new URL('../../../tests/placement/vectors/envoy_maglev-five-and-one.json', import.meta.url), 'utf8'),
  );
  assert.equal(p.fingerprint, vector.fingerprint);
  // Keys hash with XXH64, seed 0: "hello" is 0x26c7827d889f6da3, slot 1.
  assert.equal(p.hash, 'xxh64');
  assert.equal(p.keyHash('hello'), 0x26c7827d889f6da3n);
  assert.equal(0x26c7827d889f6da3n % 7n, 1n);
  assert.equal(p.owner('hello'), 'a');
  assert.deepEqual(p.preferenceList('hello', 2), ['a', 'b']);
  assert.deepEqual(
    p.ownership().nodes.map((n) => [n.id, n.units]),
    [
      ['a', 6n],
      ['b', 1n],
    ],
  );
  assert.equal(p.ownership().basis, 'table_entries');
  // Six endpoints of weight 1 get EDS weights of two sizes, and still
  // Envoy's own Basic table (the six-hosts vector).
  const six = JSON.parse(
    await readFile(new URL('../../../tests/placement/vectors/envoy_maglev-six-hosts.json', import.meta.url), 'utf8'),
  );
  const basic = reference.cases.find((/** @type {any} */ c) => c.name === 'Basic');
  const sixTable = (await build(parseConfig(six.config), parseNodes(six.nodes))).maglevTable() ?? [];
  const hashKeys = new Map(six.nodes.map((/** @type {any} */ n) => [n.id, n.hash_key]));
  assert.deepEqual(
    sixTable.map((id) => basic.hosts.findIndex((/** @type {any} */ h) => h.hashed === hashKeys.get(id))),
    basic.expected_table,
  );
  assert.deepEqual(basic.expected_table, [2, 4, 0, 1, 5, 0, 3]);
  // A single endpoint takes every slot (Envoy's DegenerateMaglevTable).
  const one = await build({ algorithm: 'envoy_maglev', tableSize: 251 }, [{ id: 'x', address: '10.0.0.9:80' }]);
  assert.ok(one.maglevTable()?.every((id) => id === 'x'));
  // Envoy's binary64 fill on ringd's weights is ringd's table, weights,
  // ramps and table sizes as they come: seeded random rings.
  let state = 0x2545f491;
  const next = (/** @type {number} */ bound) => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) % bound;
  };
  const primes = [7, 13, 17, 101, 257, 1009, 4099];
  for (let c = 0; c < 400; c++) {
    const count = 1 + next(12);
    const fitting = primes.filter((q) => q >= count);
    const m = fitting[next(fitting.length)];
    const ring = Array.from({ length: count }, (_, i) => ({
      id: `n${String(i).padStart(2, '0')}`,
      hashKey: `10.0.${c}.${i}:80`,
      address: `10.${c >> 8}.${c & 255}.${i}:80`,
      weight: 1 + next(10),
      ramp: next(4) === 0 ? 1 + next(65_536) : 65_536,
    }));
    const eds = envoyEndpointWeights(ring.map((n) => makeNode(n)));
    const table = (await build({ algorithm: 'envoy_maglev', tableSize: m }, ring)).maglevTable() ?? [];
    assert.deepEqual(
      table.map((id) => ring.findIndex((n) => n.id === id)),
      envoyMaglevFill(
        ring.map((n, i) => [n.hashKey, eds[i]]),
        m,
      ),
      `case ${c}: ${JSON.stringify(ring.map((n) => [n.weight, n.ramp]))} at ${m}`,
    );
  }
});

test('jump and rendezvous test values (5.4.1, 5.5)', () => {
  assert.deepEqual([jumpHash(256n, 1024), jumpHash(0xdeadbeefn, 100), jumpHash(0n, 1)], [520, 87, 0]);
  /** @param {bigint} x */
  const L = (x) => log2Q32(Number((x - 1n) >> 32n), Number((x - 1n) & 0xffffffffn));
  assert.deepEqual([1n, 2n, 3n, 10n, 2n ** 63n, 2n ** 64n - 1n, 2n ** 64n].map(L), [
    0,
    2 ** 32,
    6807362105,
    14267572527,
    0x3f00000000,
    0x3fffffffff,
    0x4000000000,
  ]);
});

test('the ring with zones of section 10', async () => {
  const p = await build({ algorithm: 'ring', vnodesPerWeight: 2, replicationFactor: 2, zoneAware: true }, [
    { id: 'b', weight: 2, zone: 'z2', hashKey: 'b-old' },
    { id: 'a', zone: 'z1' },
    { id: 'c', zone: 'z1', state: 'draining' },
    { id: 'd', zone: 'z1' },
  ]);
  for (const [key, hash, list] of /** @type {const} */ ([
    ['hello', 0x9555e8555c62dcfdn, ['a', 'b', 'd']],
    ['', 0x2d06800538d394c2n, ['a', 'b', 'd']],
    ['user:42', 0x9fc1e605fa7174aan, ['d', 'b', 'a']],
    ['key-7', 0xe683dd62c3f8ac4fn, ['b', 'a', 'd']],
  ])) {
    assert.equal(p.keyHash(key), hash);
    assert.deepEqual(p.preferenceList(key, 3), list);
    assert.equal(p.owner(key), list[0]);
  }
  assert.deepEqual(
    p.ownership().nodes.map((n) => n.units),
    [3768600195400060257n, 13252287072643379652n, 1425856805666111707n],
  );
  assert.equal(p.fingerprint, 'b19d4a0a0eddfd52d0b31587a9fbe503d15dd1a56221bce0739a4772d583811f');
  assert.ok(hex(p.encode()).startsWith('52494e4744504c010101010002000000030000000161027a3101000000'));
});

test('the encodings of 9.3', async () => {
  const p = await build({ algorithm: 'jump' }, [{ id: 'a' }, { id: 'b' }, { id: 'c', weight: 2 }]);
  assert.equal(
    hex(p.encode()),
    '52494e4744504c0104010000030000000300000001610001000000016200010000000163000200000004000000' +
      '00000000010000000200000002000000',
  );
  const q = await build({ algorithm: 'jump' }, [{ id: 'b' }, { id: 'c', weight: 2 }], {
    buckets: [
      { id: null, count: 1 },
      { id: 'b', count: 1 },
      { id: 'c', count: 2 },
    ],
  });
  assert.equal(q.fingerprint, 'bdc6f1f9eb6cb3e8c4e18953d80e4f51d42413163dfcb803ac74b21a40e428a1');
  assert.equal(q.owner('hello'), 'c');
  const empty = await build({ algorithm: 'rendezvous' }, []);
  assert.equal(hex(empty.encode()), '52494e4744504c01050100000300000000000000');
  assert.equal(empty.owner('x'), null);
  const table = await build({ algorithm: 'table' }, []);
  assert.equal(hex(table.encode()), '52494e4744504c010601000003000000000000000000010000');
});

/** Moves (partition, slot, node index) with u16 indices (9.4). */
function movesOf(/** @type {[number, number, number][]} */ ...moves) {
  const out = new Uint8Array(4 + 7 * moves.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, moves.length, true);
  moves.forEach(([p, slot, node], k) => {
    view.setUint32(4 + 7 * k, p, true);
    view.setUint8(8 + 7 * k, slot);
    view.setUint16(9 + 7 * k, node, true);
  });
  return out;
}

test('a table version from the previous one and its moves (9.4)', async () => {
  assert.equal(btoa(String.fromCharCode(...movesOf([5, 0, 2]))), 'AQAAAAUAAAAAAgA=');
  const v = JSON.parse(
    await readFile(new URL('../../../tests/placement/vectors/table-weighted.json', import.meta.url), 'utf8'),
  );
  const config = parseConfig(v.config);
  const nodes = parseNodes(v.nodes);
  const prev = await build(config, nodes, { tableRows: v.table });
  // Version 7 swaps partition 5's primary and second replica.
  const rows = prev.tableRows() ?? [];
  [rows[5][0], rows[5][1]] = [rows[5][1], rows[5][0]];
  const next = await build(config, nodes, { tableRows: rows });
  const ids = next.nodes().map((n) => n.id);
  const index = (/** @type {string} */ id) => ids.indexOf(id);
  const snapshot = (/** @type {number} */ version, /** @type {Uint8Array} */ moves) =>
    new Snapshot({
      ring: 'r',
      version,
      config,
      nodes,
      fingerprint: next.fingerprint,
      buckets: null,
      serverIds: null,
      nextServerId: 0,
      tableMoves: moves,
    });
  const good = movesOf([5, 0, index(rows[5][0])], [5, 1, index(rows[5][1])]);
  const p = await snapshot(7, good).placement({ previous: prev });
  assert.equal(p.fingerprint, next.fingerprint);
  assert.equal(p.version, 7);
  for (const [name, version, moves, code] of /** @type {const} */ ([
    ['changed twice', 7, movesOf([5, 0, 1], [5, 0, 2]), 'InvalidTable'],
    ['past the partitions', 7, movesOf([256, 0, 1]), 'InvalidTable'],
    ['past the replicas', 7, movesOf([5, 3, 1]), 'InvalidTable'],
    ['no such node', 7, movesOf([5, 0, 6]), 'InvalidTable'],
    ['a node twice in a row', 7, movesOf([5, 0, index(rows[5][0])]), 'InvalidTable'],
    ['cut short', 7, movesOf([5, 0, 1]).subarray(0, 8), 'InvalidTable'],
    ['another table', 7, movesOf(), 'FingerprintMismatch'],
  ])) {
    await assert.rejects(
      snapshot(version, moves).placement({ previous: prev }),
      (e) => e instanceof PlacementError && e.code === code,
      name,
    );
  }
  await assert.rejects(
    snapshot(7, good).placement(),
    (e) => e instanceof PlacementError && e.is('TableRequired') && e.is('InvalidTable'),
  );
});
