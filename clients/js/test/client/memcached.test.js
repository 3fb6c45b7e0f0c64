// memjs, the Node.js memcached client, routed by a RingClient over real
// memcacheds: 20,000 keys written through it are each found on the
// memcached of the node ringd names as the key's owner and on no other,
// at the first version and after each change, without rebuilding the
// memjs client (the Go client's memcacheselector live test, in Node.js).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { connect } from 'node:net';
import { test } from 'node:test';
import { RingClient } from '../../src/client/index.js';
import { freePort, onPath } from './host.js';
import { FAST, Ringd, remove, SKIP, waitVersion } from './ringd.js';

/** @typedef {import("./ringd.js").Api} Api */

// memjs 1.3.2 is CommonJS without types. Only what the test uses, as its
// lib/memjs/memjs.js and server.js define it (@types/memjs declares
// getServer as returning a string; the code returns an index).
/** @typedef {{ host: string, port: number }} MemjsServer */
/**
 * @typedef {object} MemjsClient
 * @property {MemjsServer[]} servers
 * @property {(key: string) => number} getServer the index in servers of key's memcached
 * @property {(key: string, value: string, options: { expires?: number }) => Promise<boolean>} set
 * @property {(key: string) => Promise<{ value: Buffer | null }>} get
 * @property {() => void} close
 */
/** @typedef {{ Client: { create(servers: string, options: object): MemjsClient } }} Memjs */
const memjs = /** @type {Memjs} */ (createRequire(import.meta.url)('memjs'));

const N_KEYS = 20_000;
/** POST …/lookup takes at most this many keys (MAX_LOOKUP_KEYS). */
const LOOKUP_BATCH = 10_000;

/** memcached on PATH, or null. */
const MEMCACHED = onPath('memcached');

const SKIP_MC = SKIP || (MEMCACHED === null ? 'memcached is not on PATH (Debian: apt-get install memcached)' : false);

/** @param {number} port @returns {Promise<boolean>} */
function accepts(port) {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/**
 * Starts memcached on a free loopback port (TCP only) and kills it when
 * the test ends. Another port is tried when it exits first: something may
 * have taken the port between the probe and the start.
 * @param {import("node:test").TestContext} t
 * @returns {Promise<number>} its port
 */
async function startMemcached(t) {
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const args = ['-l', '127.0.0.1', '-p', String(port), '-U', '0', '-m', '64'];
    // As root, memcached refuses to start unless told whom to run as.
    if (process.getuid?.() === 0) args.push('-u', 'root');
    const child = spawn(/** @type {string} */ (MEMCACHED), args, { stdio: 'ignore' });
    let gone = false;
    const exited = new Promise((resolve) => {
      child.once('exit', resolve);
      child.once('error', resolve);
    }).then(() => {
      gone = true;
    });
    const deadline = Date.now() + 10_000;
    while (!gone && Date.now() < deadline) {
      if (await accepts(port)) {
        t.after(async () => {
          child.kill('SIGKILL');
          await exited;
        });
        return port;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    child.kill('SIGKILL');
    await exited;
  }
  return assert.fail('memcached did not listen after three tries');
}

/**
 * What the memcached on port holds of keys (key → value), read over its
 * own text protocol with pipelined multi-gets: no memjs and no routing
 * between the check and the server.
 * @param {number} port
 * @param {string[]} keys
 * @returns {Promise<Map<string, string>>}
 */
function holds(port, keys) {
  return new Promise((resolve, reject) => {
    const found = new Map();
    const per = 100;
    const gets = Math.ceil(keys.length / per);
    let ends = 0;
    let buf = '';
    const sock = connect(port, '127.0.0.1');
    sock.setEncoding('latin1');
    sock.setTimeout(20_000, () => sock.destroy(new Error(`memcached on ${port}: no answer for 20 s`)));
    sock.on('error', reject);
    sock.on('data', (chunk) => {
      buf += chunk;
      let pos = 0;
      for (;;) {
        const eol = buf.indexOf('\r\n', pos);
        if (eol < 0) break;
        const line = buf.slice(pos, eol);
        if (line === 'END') {
          pos = eol + 2;
          if (++ends === gets) {
            sock.end();
            resolve(found);
          }
          continue;
        }
        const m = /^VALUE (\S+) \d+ (\d+)$/.exec(line);
        if (m === null) return void sock.destroy(new Error(`memcached on ${port} answered ${JSON.stringify(line)}`));
        const n = Number(m[2]);
        // The value and its CRLF have not all arrived yet.
        if (buf.length < eol + 2 + n + 2) break;
        found.set(m[1], buf.slice(eol + 2, eol + 2 + n));
        pos = eol + 2 + n + 2;
      }
      buf = buf.slice(pos);
    });
    let req = '';
    for (let i = 0; i < keys.length; i += per) req += `get ${keys.slice(i, i + per).join(' ')}\r\n`;
    sock.write(req);
  });
}

/**
 * memjs's server selection, from a RingClient: the index in servers of
 * the memcached of key's owner in the version c routes on now. Each call
 * reads c's current version, so a new version is routed on as soon as c
 * swaps it in; the node → server table is rebuilt once per version. A key
 * whose owner has no memcached here throws (memjs rejects the request)
 * rather than going to some other server.
 * @param {RingClient} c
 * @param {readonly MemjsServer[]} servers
 * @returns {(key: string) => number}
 */
function ringdSelection(c, servers) {
  const byAddress = new Map(servers.map((s, i) => [`${s.host}:${s.port}`, i]));
  /** @type {import("../../src/client/index.js").RingView | null} */
  let view = null;
  /** @type {Map<string, number>} */
  let byNode = new Map();
  return (key) => {
    const now = c.current();
    if (now === null) throw new Error(`no ring version yet to route ${key}`);
    if (now !== view) {
      byNode = new Map();
      for (const n of now.snapshot.nodes) {
        const i = byAddress.get(n.address ?? '');
        if (i !== undefined) byNode.set(n.id, i);
      }
      view = now;
    }
    const owner = now.owner(key);
    const i = owner === null ? undefined : byNode.get(owner);
    if (i === undefined) throw new Error(`v${now.version}: ${key} is owned by ${owner}, which has no memcached here`);
    return i;
  };
}

/**
 * Runs f on every item, n at a time.
 * @template T
 * @param {T[]} items @param {number} n @param {(item: T) => Promise<void>} f
 */
async function eachLimit(items, n, f) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await f(items[next++]);
  };
  await Promise.all(Array.from({ length: n }, worker));
}

/**
 * The server's owner of each key at version v (POST …/lookup, in batches).
 * @param {Api} api @param {number} v @param {string[]} keys
 * @returns {Promise<(string | null)[]>}
 */
async function owners(api, v, keys) {
  const out = [];
  for (let i = 0; i < keys.length; i += LOOKUP_BATCH) {
    for (const list of await api.lookup(v, keys.slice(i, i + LOOKUP_BATCH))) out.push(list[0] ?? null);
  }
  return out;
}

test('memjs routed by a RingClient puts each of 20,000 keys on the memcached ringd names', {
  skip: SKIP_MC,
}, async (t) => {
  // Node mc-i of the ring is the memcached at ports[i], memjs's servers[i].
  /** @type {number[]} */
  const ports = [];
  for (let i = 0; i < 4; i++) ports.push(await startMemcached(t));
  const ids = ports.map((_, i) => `mc-${i}`);
  const addrs = ports.map((p) => `127.0.0.1:${p}`);
  /** @param {number} i @param {number} weight */
  const node = (i, weight) => ({ op: 'upsert', node: { id: ids[i], weight, address: addrs[i] } });

  const s = await Ringd.start(t);
  const api = s.api('cache');
  // ketama over MD5, as libmemcached places; the Go test's ring too.
  await api.create({ algorithm: 'ketama', hash: 'md5' });
  const c = new RingClient([s.url], 'cache', { ...FAST, clientId: 'memjs-test' });
  t.after(() => c.close());

  // One memjs client over every memcached, built once: a ring change must
  // reach it through the selection alone. memjs's own hash (hashCode(key)
  // % servers) is replaced by the hook memjs 1.3.2 documents for it,
  // Client#getServer (the keyToServerHashFunction option is only in
  // memjs's unreleased TypeScript rewrite). memjs asks getServer only with
  // two servers or more. failover stays off (memjs's default): with it
  // on, memjs sends a failed server's keys to the next server in its
  // list, which is not where the ring puts them.
  const mc = memjs.Client.create(addrs.join(','), { timeout: 5 });
  t.after(() => mc.close());
  assert.deepEqual(
    mc.servers.map((sv) => `${sv.host}:${sv.port}`),
    addrs,
  );
  mc.getServer = ringdSelection(c, mc.servers);

  const steps = [
    { what: 'mc-0 at weight 1, mc-1 at 2, mc-2 at 3, mc-3 outside', ops: [node(0, 1), node(1, 2), node(2, 3)] },
    { what: 'mc-3 added at weight 2', ops: [node(3, 2)] },
    { what: 'mc-0 re-weighted to 4, mc-2 removed', ops: [node(0, 4), remove('mc-2')] },
  ];
  /** @type {{ v: number, keys: string[], owner: (string | null)[] } | null} */
  let prev = null;
  for (const step of steps) {
    const v = await api.change(...step.ops);
    await waitVersion(c, v);
    const keys = Array.from({ length: N_KEYS }, (_, i) => `v${v}:user:${i}`);
    const owner = await owners(api, v, keys);
    // The client places every key as the server does at v.
    assert.deepEqual(
      keys.filter((k, i) => c.owner(k) !== owner[i]),
      [],
      `v${v}: keys the client places elsewhere`,
    );

    // memjs now reads the previous version's keys from their owner at v:
    // exactly those the change did not move are found.
    if (prev !== null) {
      /** @type {{ v: number, keys: string[], owner: (string | null)[] }} */
      const was = prev;
      const now = await owners(api, v, was.keys);
      const unmoved = was.keys.filter((_, i) => now[i] === was.owner[i]).length;
      assert.ok(unmoved < N_KEYS, `v${v}: the change moved no key of v${was.v}`);
      let hits = 0;
      await eachLimit(was.keys, 64, async (k) => {
        const { value } = await mc.get(k);
        if (value !== null) {
          assert.equal(value.toString(), k);
          hits++;
        }
      });
      assert.equal(hits, unmoved, `v${v}: keys of v${was.v} memjs still finds`);
    }

    await eachLimit(keys, 64, async (k) => {
      assert.equal(await mc.set(k, k, {}), true, `set ${k}`);
    });

    /** @type {Map<string, string>} key → the node whose memcached holds it */
    const where = new Map();
    for (const [i, port] of ports.entries()) {
      for (const [k, value] of await holds(port, keys)) {
        assert.equal(where.get(k), undefined, `v${v}: ${k} is on ${where.get(k)} and on ${ids[i]}`);
        assert.equal(value, k, `v${v}: ${k} on ${ids[i]}`);
        where.set(k, ids[i]);
      }
    }
    const misplaced = keys.filter((k, i) => where.get(k) !== owner[i]);
    assert.deepEqual(misplaced.slice(0, 5), [], `v${v}: ${misplaced.length} keys not on their owner's memcached`);

    // Per memcached: what it holds equals what the ring gives its node
    // (0 for one outside the ring), and together every key once.
    /** @type {Record<string, number>} */
    const want = Object.fromEntries(ids.map((id) => [id, 0]));
    /** @type {Record<string, number>} */
    const got = { ...want };
    for (const o of owner) want[o ?? 'none'] = (want[o ?? 'none'] ?? 0) + 1;
    for (const id of where.values()) got[id]++;
    assert.deepEqual(got, want, `v${v}: keys per memcached`);
    assert.equal(where.size, N_KEYS);
    assert.equal(
      Object.values(got).reduce((a, b) => a + b, 0),
      N_KEYS,
    );
    t.diagnostic(`v${v}, ${step.what}: ${JSON.stringify(got)}`);
    prev = { v, keys, owner };
  }
});
