// Bad input: each input spec 2.4 refuses gives a PlacementError of its
// kind, the first failure in 2.4's order; malformed encodings and wrong
// fingerprints are refused as such, never with an error of another kind.

import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import { test } from 'node:test';
import {
  FingerprintMismatchError,
  PlacementError,
  build,
  decode,
  fingerprint,
  parseBuckets,
  parseConfig,
  parseNode,
  parseNodes,
  parseSnapshot,
} from '../src/placement/index.js';

/** @typedef {import('../src/placement/index.js').ErrorCode} ErrorCode */

/**
 * Asserts that f throws (or rejects with) a PlacementError of kind code.
 * @param {() => unknown} f
 * @param {ErrorCode} code
 * @param {string} name
 */
async function refuses(f, code, name) {
  await assert.rejects(
    async () => f(),
    (e) => e instanceof PlacementError && e.is(code),
    `${name}: want ${code}`,
  );
}

test('errors carry their kind as code, and TableRequired is also InvalidTable', async () => {
  const e = await build({}, [{ id: 'a' }, { id: 'a' }]).catch((x) => x);
  assert.ok(e instanceof PlacementError && e.code === 'DuplicateNodeId' && !e.is('InvalidNodeId'));
  assert.match(e.message, /^DuplicateNodeId: /);
  const t = await build({ algorithm: 'table' }, [{ id: 'a' }]).catch((x) => x);
  assert.ok(t.is('TableRequired') && t.is('InvalidTable'));
});

test('configs and nodes that 2.4 refuses', async () => {
  /** @type {[string, import('../src/placement/index.js').ConfigInput, import('../src/placement/index.js').NodeInput[], ErrorCode][]} */
  const cases = [
    ['empty id', {}, [{ id: '' }], 'EmptyNodeId'],
    ['leading dash', {}, [{ id: '-a' }], 'InvalidNodeId'],
    ['id of 129 bytes', {}, [{ id: 'x'.repeat(129) }], 'InvalidNodeId'],
    ['weight 0', {}, [{ id: 'a', weight: 0 }], 'WeightOutOfRange'],
    ['weight 1.5', {}, [{ id: 'a', weight: 1.5 }], 'WeightOutOfRange'],
    ['ramp 65537', {}, [{ id: 'a', ramp: 65537 }], 'RampOutOfRange'],
    ['control in key', {}, [{ id: 'a', hashKey: 'a\x7fb' }], 'InvalidHashKey'],
    ['lone surrogate in key', {}, [{ id: 'a', hashKey: 'a\ud800' }], 'InvalidHashKey'],
    ['bad zone', {}, [{ id: 'a', zone: 'z one' }], 'InvalidZone'],
    ['space in address', {}, [{ id: 'a', address: 'a b:1' }], 'InvalidAddress'],
    [
      'table_size 3 < 4',
      { algorithm: 'maglev', tableSize: 3 },
      [{ id: 'a' }, { id: 'b' }, { id: 'c' }, { id: 'd' }],
      'TableSizeOutOfRange',
    ],
    ['table_size 4', { algorithm: 'maglev', tableSize: 4 }, [], 'TableSizeNotPrime'],
    ['zone missing', { zoneAware: true }, [{ id: 'a' }], 'MissingZone'],
    ['point cap', { vnodesPerWeight: 10_000 }, [{ id: 'a', weight: 1000 }], 'TooManyPoints'],
    ['ketama ramp', { algorithm: 'ketama' }, [{ id: 'a', ramp: 5 }], 'RampNotSupported'],
    ['haproxy weight', { algorithm: 'haproxy' }, [{ id: 'a', weight: 257 }], 'WeightTooHighForProxy'],
    ['nginx no address', { algorithm: 'nginx' }, [{ id: 'a' }], 'MissingAddress'],
    ['nginx unix', { algorithm: 'nginx' }, [{ id: 'a', address: 'unix:80' }], 'AddressNotServer'],
    [
      'nginx shared',
      { algorithm: 'nginx' },
      [
        { id: 'a', address: 'h:1' },
        { id: 'b', address: 'h:1' },
      ],
      'DuplicateAddress',
    ],
    ['twemproxy port 01', { algorithm: 'twemproxy' }, [{ id: 'a', address: 'h:01' }], 'AddressNotServer'],
    ['twemproxy name', { algorithm: 'twemproxy' }, [{ id: 'a', address: 'h:1', hashKey: 'a#b' }], 'InvalidServerName'],
    [
      'twemproxy taken',
      { algorithm: 'twemproxy' },
      [
        { id: 'a', address: 'h:11211' },
        { id: 'b', address: 'x:1', hashKey: 'h' },
      ],
      'ServerNameTaken',
    ],
    ...envoyCases(),
    ...envoyMaglevCases(),
    ['ketama sha256', { algorithm: 'ketama', hash: 'sha256' }, [], 'HashNotSupported'],
    ['ring sdbm', { hash: 'sdbm' }, [], 'HashNotAccepted'],
    ['ring avalanche', { avalanche: true }, [], 'AvalancheNotSupported'],
    ['bad jump order', { algorithm: 'jump' }, [{ id: 'a' }], 'InvalidBucketOrder'],
  ];
  for (const [name, config, nodes, code] of cases) {
    const stored =
      name === 'bad jump order'
        ? {
            buckets: [
              { id: 'a', count: 1 },
              { id: null, count: 1 },
            ],
          }
        : {};
    await refuses(() => build(config, nodes, stored), code, name);
  }
  // @ts-expect-error: an unknown algorithm, as untyped callers may pass
  await refuses(() => build({ algorithm: 'chord' }, []), 'UnknownAlgorithm', 'unknown algorithm');
});

/**
 * envoy_ring_hash's refusals (5.10.4, 2.4 checks 1 and 3a), each the
 * first failure in 2.4's order.
 * @returns {[string, import('../src/placement/index.js').ConfigInput, import('../src/placement/index.js').NodeInput[], ErrorCode][]}
 */
function envoyCases() {
  const envoy = /** @type {const} */ ({ algorithm: 'envoy_ring_hash' });
  const at = (/** @type {string} */ address) => [{ id: 'a', address }];
  /** @type {[string, import('../src/placement/index.js').ConfigInput, import('../src/placement/index.js').NodeInput[], ErrorCode][]} */
  const cases = [
    ['envoy xxh3', { ...envoy, hash: 'xxh3' }, [], 'HashNotAccepted'],
    ['ring xxh64', { hash: 'xxh64' }, [], 'HashNotAccepted'],
    ['twemproxy xxh64', { algorithm: 'twemproxy', hash: 'xxh64' }, [], 'HashNotAccepted'],
    ['minimum 0', { ...envoy, minimumRingSize: 0 }, [], 'RingSizeOutOfRange'],
    ['maximum 2^23 + 1', { ...envoy, maximumRingSize: 2 ** 23 + 1 }, [], 'RingSizeOutOfRange'],
    ['minimum 1.5', { ...envoy, minimumRingSize: 1.5 }, [], 'RingSizeOutOfRange'],
    ['ring sizes checked under ring too', { minimumRingSize: 0 }, [], 'RingSizeOutOfRange'],
    [
      'a size out of range before inverted',
      { ...envoy, minimumRingSize: 5000, maximumRingSize: 0 },
      [],
      'RingSizeOutOfRange',
    ],
    ['inverted', { ...envoy, minimumRingSize: 4097 }, [], 'RingSizesInverted'],
    ['partitions before ring sizes', { ...envoy, partitions: 300, minimumRingSize: 0 }, [], 'PartitionsOutOfRange'],
    ['envoy no address', envoy, [{ id: 'a' }], 'MissingAddress'],
    ['missing before a bad address', envoy, [{ id: 'a', address: 'host:80' }, { id: 'b' }], 'MissingAddress'],
    ['a host name', envoy, at('cache-a:11211'), 'AddressNotServer'],
    ['no port', envoy, at('10.0.0.1'), 'AddressNotServer'],
    ['port 0', envoy, at('10.0.0.1:0'), 'AddressNotServer'],
    ['port 65536', envoy, at('10.0.0.1:65536'), 'AddressNotServer'],
    ['port 080', envoy, at('10.0.0.1:080'), 'AddressNotServer'],
    ['octet 010', envoy, at('10.0.0.010:80'), 'AddressNotServer'],
    ['IPv6 unbracketed', envoy, at('::1:80'), 'AddressNotServer'],
    ['IPv6 uppercase', envoy, at('[2001:DB8::1]:80'), 'AddressNotServer'],
    ['IPv6 not shortest', envoy, at('[2001:db8:0:0:0:0:0:1]:80'), 'AddressNotServer'],
    ['IPv6 one zero compressed', envoy, at('[1:2:3:4:5:6::8]:80'), 'AddressNotServer'],
    ['IPv6 the later zero run', envoy, at('[1:0:0:1::1:1]:80'), 'AddressNotServer'],
    ['IPv6 leading zeros', envoy, at('[2001:0db8::1]:80'), 'AddressNotServer'],
    ['IPv6 zone', envoy, at('[fe80::1%2]:80'), 'AddressNotServer'],
    ['IPv4-mapped in hex', envoy, at('[::ffff:a00:1]:80'), 'AddressNotServer'],
    [
      'a draining node is checked too',
      envoy,
      [
        { id: 'a', address: '10.0.0.1:80' },
        { id: 'b', address: 'cache-b:80', state: 'draining' },
      ],
      'AddressNotServer',
    ],
    [
      'one label twice',
      envoy,
      [
        { id: 'a', address: '10.0.0.1:80' },
        { id: 'b', address: '10.0.0.2:80', hashKey: 'a' },
      ],
      'EndpointKeyTaken',
    ],
    [
      'one address twice',
      envoy,
      [
        { id: 'a', address: '[2001:db8::1]:80' },
        { id: 'b', address: '[2001:db8::1]:80' },
      ],
      'DuplicateAddress',
    ],
    [
      'a label before an address',
      envoy,
      [
        { id: 'a', address: '10.0.0.1:80', hashKey: 'x' },
        { id: 'b', address: '10.0.0.1:80', hashKey: 'x' },
      ],
      'EndpointKeyTaken',
    ],
    [
      'a share below 2^-31',
      envoy,
      [
        { id: 'a', address: '10.0.0.1:80', ramp: 1 },
        { id: 'b', address: '10.0.0.2:80', weight: 1_000_000 },
      ],
      'WeightShareTooSmall',
    ],
  ];
  return cases;
}

/**
 * envoy_maglev's refusals (5.11: 5.10.4's checks, and 2.4 checks 1 and 6
 * on table_size), each the first failure in 2.4's order.
 * @returns {[string, import('../src/placement/index.js').ConfigInput, import('../src/placement/index.js').NodeInput[], ErrorCode][]}
 */
function envoyMaglevCases() {
  const em = /** @type {const} */ ({ algorithm: 'envoy_maglev' });
  const at = (/** @type {string} */ address) => [{ id: 'a', address }];
  /** @type {[string, import('../src/placement/index.js').ConfigInput, import('../src/placement/index.js').NodeInput[], ErrorCode][]} */
  const cases = [
    ['envoy_maglev xxh3', { ...em, hash: 'xxh3' }, [], 'HashNotAccepted'],
    ['envoy_maglev md5', { ...em, hash: 'md5' }, [], 'HashNotAccepted'],
    ['maglev xxh64', { algorithm: 'maglev', hash: 'xxh64' }, [], 'HashNotAccepted'],
    ['envoy_maglev table_size 4', { ...em, tableSize: 4 }, [], 'TableSizeNotPrime'],
    ['envoy_maglev table_size 65536', { ...em, tableSize: 65_536 }, [], 'TableSizeNotPrime'],
    ['envoy_maglev table_size 1', { ...em, tableSize: 1 }, [], 'TableSizeOutOfRange'],
    // Past Envoy's bound the range fails first: 5,000,017 is 11 × 454,547,
    // which maglev refuses as not prime; 5,000,077, the next prime, maglev takes.
    ['envoy_maglev table_size 5000017', { ...em, tableSize: 5_000_017 }, [], 'TableSizeOutOfRange'],
    ['maglev table_size 5000017', { algorithm: 'maglev', tableSize: 5_000_017 }, [], 'TableSizeNotPrime'],
    ['envoy_maglev table_size 5000077', { ...em, tableSize: 5_000_077 }, [], 'TableSizeOutOfRange'],
    ['envoy_maglev table_size 2^24 + 1', { ...em, tableSize: 2 ** 24 + 1 }, [], 'TableSizeOutOfRange'],
    ['envoy_maglev table_size 7.5', { ...em, tableSize: 7.5 }, [], 'TableSizeOutOfRange'],
    [
      'envoy_maglev table_size 2 < 3 nodes',
      { ...em, tableSize: 2 },
      [
        { id: 'a', address: '10.0.0.1:80' },
        { id: 'b', address: '10.0.0.2:80' },
        { id: 'c', address: '10.0.0.3:80' },
      ],
      'TableSizeOutOfRange',
    ],
    [
      'envoy_maglev replication before table_size',
      { ...em, tableSize: 4, replicationFactor: 0 },
      [],
      'ReplicationOutOfRange',
    ],
    ['envoy_maglev no address', em, [{ id: 'a' }], 'MissingAddress'],
    ['envoy_maglev a host name', em, at('cache-a:11211'), 'AddressNotServer'],
    ['envoy_maglev no port', em, at('10.0.0.1'), 'AddressNotServer'],
    ['envoy_maglev port 65536', em, at('10.0.0.1:65536'), 'AddressNotServer'],
    ['envoy_maglev IPv6 uppercase', em, at('[2001:DB8::1]:80'), 'AddressNotServer'],
    ['envoy_maglev IPv6 zone', em, at('[fe80::1%2]:80'), 'AddressNotServer'],
    [
      'envoy_maglev a draining node is checked too',
      em,
      [
        { id: 'a', address: '10.0.0.1:80' },
        { id: 'b', address: 'cache-b:80', state: 'draining' },
      ],
      'AddressNotServer',
    ],
    [
      'envoy_maglev one label twice',
      em,
      [
        { id: 'a', address: '10.0.0.1:80' },
        { id: 'b', address: '10.0.0.2:80', hashKey: 'a' },
      ],
      'EndpointKeyTaken',
    ],
    [
      'envoy_maglev one address twice',
      em,
      [
        { id: 'a', address: '[2001:db8::1]:80' },
        { id: 'b', address: '[2001:db8::1]:80' },
      ],
      'DuplicateAddress',
    ],
    [
      'envoy_maglev a label before an address',
      em,
      [
        { id: 'a', address: '10.0.0.1:80', hashKey: 'x' },
        { id: 'b', address: '10.0.0.1:80', hashKey: 'x' },
      ],
      'EndpointKeyTaken',
    ],
    [
      'envoy_maglev a share below 2^-31',
      em,
      [
        { id: 'a', address: '10.0.0.1:80', ramp: 1 },
        { id: 'b', address: '10.0.0.2:80', weight: 1_000_000 },
      ],
      'WeightShareTooSmall',
    ],
    [
      'envoy_maglev addresses before the table size',
      { ...em, tableSize: 2 },
      [
        { id: 'a', address: '10.0.0.1:80' },
        { id: 'b', address: '10.0.0.2:80' },
        { id: 'c', address: '10.0.0.2:80' },
      ],
      'DuplicateAddress',
    ],
  ];
  return cases;
}

test('envoy_maglev takes what the refusals leave', async () => {
  const em = /** @type {const} */ ({ algorithm: 'envoy_maglev' });
  // Canonical addresses of every form, a draining node without one, and
  // Envoy's largest table; maglev takes a table past it, and a table
  // size under envoy_maglev is not checked under another algorithm.
  const p = await build({ ...em, tableSize: 5_000_011 }, [
    { id: 'a', address: '10.0.0.1:1' },
    { id: 'b', address: '[::ffff:10.0.0.1]:65535' },
    { id: 'c', address: '[2001:db8::1:0:0:1]:80', ramp: 2 },
    { id: 'd', address: '[::]:80', weight: 3 },
    { id: 'f', state: 'draining' },
  ]);
  assert.equal(p.nodes().length, 4);
  assert.equal(p.hash, 'xxh64');
  assert.equal(p.maglevTable()?.length, 5_000_011);
  assert.equal((await build({ algorithm: 'maglev', tableSize: 5_000_077 }, [])).maglevTable()?.length, 0);
  await build({ algorithm: 'envoy_ring_hash', tableSize: 4 }, []);
  // The table size equal to the active nodes: one slot each.
  const two = await build({ ...em, tableSize: 2 }, [
    { id: 'a', address: '10.0.0.1:80', weight: 1_000_000 },
    { id: 'b', address: '10.0.0.2:80' },
  ]);
  assert.deepEqual([...(two.maglevTable() ?? [])].sort(), ['a', 'b']);
});

test('envoy_ring_hash takes what the refusals leave', async () => {
  const envoy = /** @type {const} */ ({ algorithm: 'envoy_ring_hash' });
  // Canonical addresses of every form, a draining node without one, ring
  // sizes at their bounds, and minimum above maximum under another algorithm.
  const p = await build({ ...envoy, minimumRingSize: 1, maximumRingSize: 2 ** 23 }, [
    { id: 'a', address: '10.0.0.1:1' },
    { id: 'b', address: '[::ffff:10.0.0.1]:65535' },
    { id: 'c', address: '[2001:db8::1:0:0:1]:80' },
    { id: 'd', address: '[::]:80', ramp: 2 },
    { id: 'e', address: '[1::1:0:0:1:0]:80', weight: 3 },
    { id: 'f', state: 'draining' },
  ]);
  assert.equal(p.nodes().length, 5);
  assert.equal(p.hash, 'xxh64');
  await build({ minimumRingSize: 8, maximumRingSize: 4 }, [{ id: 'a' }]);
  // A share of one part in 2^31 is enough to be an endpoint (2^31 − 1
  // parts and 1), though not for an entry: the scale is capped at the
  // maximum, 4,096, and a's running sum leaves b none, as in Envoy.
  const q = await build(envoy, [
    { id: 'a', address: '10.0.0.1:80', weight: 32_768, ramp: 65_535 },
    { id: 'b', address: '10.0.0.2:80', weight: 1, ramp: 1 },
  ]);
  const points = q.points() ?? [];
  assert.equal(points.length, 4096);
  assert.ok(points.every((pt) => pt.id === 'a'));
  assert.deepEqual(
    q.ownership().nodes.map((n) => n.units),
    [2n ** 64n, 0n],
  );
  assert.equal(q.owner('any key'), 'a');
});

test('JSON configs, nodes, buckets and snapshots that 2.4 refuses', async () => {
  /** @type {[string, () => unknown, ErrorCode][]} */
  const cases = [
    ['unknown hash first', () => parseConfig('{"hash": "crc64", "algorithm": "chord"}'), 'UnknownHash'],
    ['vnodes huge', () => parseConfig('{"vnodes_per_weight": 99999999999999999999999}'), 'VnodesOutOfRange'],
    ['ranges before hash', () => parseConfig('{"hash": "sdbm", "replication_factor": 0}'), 'ReplicationOutOfRange'],
    ['partitions 300', () => parseConfig({ partitions: 300 }), 'PartitionsOutOfRange'],
    ['quote in tag', () => parseConfig({ algorithm: 'twemproxy', hash_tag: '{"' }), 'InvalidHashTag'],
    ['tag outside twemproxy', () => parseConfig({ hash_tag: '{}' }), 'HashTagNotSupported'],
    ['ring size 0', () => parseConfig({ algorithm: 'envoy_ring_hash', maximum_ring_size: 0 }), 'RingSizeOutOfRange'],
    [
      'ring size huge',
      () => parseConfig('{"algorithm": "envoy_ring_hash", "minimum_ring_size": 99999999999999999999999}'),
      'RingSizeOutOfRange',
    ],
    [
      'ring sizes inverted',
      () => parseConfig({ algorithm: 'envoy_ring_hash', minimum_ring_size: 20, maximum_ring_size: 10 }),
      'RingSizesInverted',
    ],
    [
      'replication before ring sizes',
      () => parseConfig({ algorithm: 'envoy_ring_hash', minimum_ring_size: 0, replication_factor: 0 }),
      'ReplicationOutOfRange',
    ],
    ['ring size as text', () => parseConfig({ minimum_ring_size: '12' }), 'InvalidJson'],
    ['vnodes 1.5', () => parseConfig('{"vnodes_per_weight": 1.5}'), 'InvalidJson'],
    ['zone_aware 1', () => parseConfig('{"zone_aware": 1}'), 'InvalidJson'],
    ['not JSON', () => parseConfig('{'), 'InvalidJson'],
    ['not an object', () => parseConfig('[]'), 'InvalidJson'],
    ['no id', () => parseNode({ weight: 2 }), 'EmptyNodeId'],
    ['state', () => parseNode({ id: 'a', state: 'gone' }), 'InvalidState'],
    ['first bad field', () => parseNode({ id: 'a', ramp: 0, weight: 0 }), 'RampOutOfRange'],
    ['weight as text', () => parseNode({ id: 'a', weight: '2' }), 'InvalidJson'],
    ['first bad node', () => parseNodes([{ id: 'a' }, { id: 'b', weight: 0 }, { id: '' }]), 'WeightOutOfRange'],
    ['bucket empty id', () => parseBuckets(['']), 'InvalidBucketOrder'],
    ['bucket run of 0', () => parseBuckets([['a', 0]]), 'InvalidBucketOrder'],
    ['bucket number', () => parseBuckets([1]), 'InvalidBucketOrder'],
    ['no fingerprint', () => parseSnapshot({ config: {}, nodes: [] }), 'InvalidSnapshot'],
    [
      'upper fingerprint',
      () => parseSnapshot({ config: {}, nodes: [], fingerprint: 'A'.repeat(64) }),
      'InvalidSnapshot',
    ],
    [
      'bad moves',
      () => parseSnapshot({ config: {}, nodes: [], fingerprint: '0'.repeat(64), table_moves: 'not base64!' }),
      'InvalidTable',
    ],
    [
      'bad server ids',
      () => parseSnapshot({ config: {}, nodes: [], fingerprint: '0'.repeat(64), server_ids: [] }),
      'InvalidJson',
    ],
  ];
  for (const [name, f, code] of cases) await refuses(f, code, name);
  const runs = parseBuckets(['a', 'a', null, ['b', 3], [null, 2], 'c']);
  assert.deepEqual(runs, [
    { id: 'a', count: 2 },
    { id: null, count: 1 },
    { id: 'b', count: 3 },
    { id: null, count: 2 },
    { id: 'c', count: 1 },
  ]);
});

test('haproxy snapshots need ids that fit their nodes', async () => {
  const p = await build({ algorithm: 'haproxy' }, [{ id: 'a' }, { id: 'b' }]);
  const doc = (/** @type {Record<string, number>} */ ids, next = 3) => ({
    config: { algorithm: 'haproxy' },
    nodes: [{ id: 'a' }, { id: 'b' }],
    fingerprint: p.fingerprint,
    server_ids: { ids, next },
  });
  assert.equal((await parseSnapshot(doc({ a: 1, b: 2 })).placement()).fingerprint, p.fingerprint);
  for (const [name, d] of /** @type {const} */ ([
    ['missing', doc({ a: 1 })],
    ['stranger', doc({ a: 1, b: 2, c: 3 }, 4)],
    ['shared', doc({ a: 1, b: 1 })],
    ['zero', doc({ a: 0, b: 1 })],
    ['not below next', doc({ a: 1, b: 2 }, 2)],
  ])) {
    await refuses(() => parseSnapshot(d).placement(), 'InvalidServerIds', name);
  }
});

test('decode refuses a wrong fingerprint, and what no placement encodes', async () => {
  const p = await build({ algorithm: 'jump' }, [{ id: 'a' }, { id: 'b' }, { id: 'c', weight: 2 }]);
  const good = p.encode();
  const own = async (/** @type {Uint8Array} */ b) => decode(b, await fingerprint(b));
  await own(good);
  const wrong = await decode(good, '0'.repeat(64)).catch((e) => e);
  assert.ok(
    wrong instanceof FingerprintMismatchError && wrong.actual === p.fingerprint && wrong.is('FingerprintMismatch'),
  );
  /**
   * good with byte i set to v.
   * @param {number} i
   * @param {number} v
   * @returns {(b: Uint8Array) => Uint8Array}
   */
  const set = (i, v) => (b) => {
    b[i < 0 ? b.length + i : i] = v;
    return b;
  };
  /** @type {[string, (b: Uint8Array) => Uint8Array][]} */
  const changes = [
    ['magic', set(0, 0x58)],
    ['version', set(7, 2)],
    ['algorithm', set(8, 12)],
    ['envoy_ring_hash with xxh3', set(8, 10)],
    ['envoy_maglev with xxh3', set(8, 11)],
    ['hash', set(9, 99)],
    ['hash not accepted', set(9, 6)],
    ['zone_aware', set(10, 2)],
    ['flags', set(11, 2)],
    ['ramped but no ramp', set(11, 1)],
    ['replication 0', set(12, 0)],
    ['replication 65', set(12, 65)],
    ['ids out of order', set(21, 0x62)],
    ['bad id', set(21, 0x2d)],
    ['weight 0', set(23, 0)],
    ['a trailing byte', (b) => Uint8Array.from([...b, 0])],
    ['cut short', (b) => b.subarray(0, b.length - 1)],
    ['bucket past nodes', set(-4, 9)],
    ['wrong bucket count', set(-20, 3)],
    ['a trailing hole', (b) => b.fill(0xff, b.length - 4)],
  ];
  for (const [name, change] of changes) await refuses(() => own(change(good.slice())), 'InvalidEncoding', name);
});

test('cut or flipped encodings of the vectors are refused or canonical, never a crash', async () => {
  const dir = new URL('../../../tests/placement/vectors/', import.meta.url);
  const { parseConfig: config, parseNodes: nodes } = await import('../src/placement/index.js');
  for (const name of (await readdir(dir)).filter((f) => f.endsWith('.json') && !f.includes('nodes-1000'))) {
    const v = JSON.parse(await readFile(new URL(name, dir), 'utf8'));
    const stored = { buckets: v.buckets ? parseBuckets(v.buckets) : null, serverIds: v.server_ids, tableRows: v.table };
    const enc = (await build(config(v.config), nodes(v.nodes), stored)).encode();
    if (enc.length > 2048) continue;
    for (let n = 0; n < enc.length; n += 1 + (n >> 4)) {
      const cut = enc.slice(0, n);
      await refuses(async () => decode(cut, await fingerprint(cut)), 'InvalidEncoding', `${name} cut to ${n}`);
    }
    for (let i = 0; i < enc.length; i += 1 + (enc.length >> 5)) {
      const b = enc.slice();
      b[i] ^= 0x5a;
      try {
        // Some flips leave a valid encoding (a position in a body): then
        // it must be canonical.
        const p = await decode(b, await fingerprint(b));
        assert.deepEqual(p.encode(), b);
      } catch (e) {
        assert.ok(e instanceof PlacementError && e.code === 'InvalidEncoding', `${name} byte ${i}: ${e}`);
      }
    }
  }
});
