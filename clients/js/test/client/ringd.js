// Test helpers: a real `ringd serve` on a loopback port with a SQLite
// store (or another, such as etcd), its REST API called as an operator
// would, and a proxy in front of it that a test can take down or make
// refuse event streams.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** The ringd binary: RINGD_BIN, else target/release/ringd of the repository. */
export const RINGD_BIN =
  process.env.RINGD_BIN ?? fileURLToPath(new URL('../../../../target/release/ringd', import.meta.url));

/** false, or why the live tests are skipped. */
export const SKIP = existsSync(RINGD_BIN)
  ? false
  : `no ringd binary at ${RINGD_BIN}: build it with \`cargo build --release\`, or set RINGD_BIN`;

/** Short waits, so failures and fallbacks happen within a test's time. */
export const FAST = { backoffMin: 20, backoffMax: 200, longPollWait: 2000 };

/** The child gets none of the test's RINGD_* or proxy variables. */
function childEnv() {
  return Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('RINGD_') && !k.toLowerCase().includes('proxy')),
  );
}

/** A real ringd, killed when the test ends; restart keeps its port and data. */
export class Ringd {
  url = '';
  /** @type {import("node:child_process").ChildProcess | null} */
  #child = null;
  #dir;
  #args;
  #store;

  /** The server's process id, while it runs. */
  get pid() {
    const pid = this.#child?.pid;
    assert.ok(pid !== undefined, 'ringd is not running');
    return pid;
  }

  /**
   * @param {import("node:test").TestContext} t
   * @param {string[]} [args] extra `serve` arguments
   */
  static async start(t, args = []) {
    return Ringd.startOn(t, '', args);
  }

  /**
   * start with the store URL (`--store`) given; '' is a SQLite file in
   * the server's temporary directory.
   * @param {import("node:test").TestContext} t
   * @param {string} store
   * @param {string[]} [args] extra `serve` arguments
   */
  static async startOn(t, store, args = []) {
    const r = new Ringd(args, store);
    t.after(async () => {
      await r.kill();
      r.cleanup();
    });
    await r.#spawn('127.0.0.1:0');
    return r;
  }

  /**
   * @param {string[]} args
   * @param {string} [store] the `--store` URL; '' (the default) is SQLite
   */
  constructor(args, store = '') {
    this.#dir = mkdtempSync(join(tmpdir(), 'ringd-js-'));
    this.#args = args;
    this.#store = store;
  }

  /** @param {string} listen */
  async #spawn(listen) {
    const store = this.#store || `sqlite://${join(this.#dir, 'ringd.db')}`;
    const child = spawn(RINGD_BIN, ['serve', '--listen', listen, '--store', store, ...this.#args], {
      env: childEnv(),
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    this.#child = child;
    const lines = createInterface({ input: /** @type {import("node:stream").Readable} */ (child.stdout) });
    this.url = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('ringd printed no URL within 30 s')), 30_000);
      child.once('exit', (code) => reject(new Error(`ringd exited with ${code}`)));
      lines.on('line', (line) => {
        if (line.startsWith('ringd listening on ')) {
          clearTimeout(timer);
          resolve(line.slice('ringd listening on '.length).trim());
        }
      });
    });
  }

  /** Kills it at once (SIGKILL: no goodbye to the streams). */
  async kill() {
    const child = this.#child;
    this.#child = null;
    if (child === null || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  /** Kills it and starts it again on the same port and data. */
  async restart() {
    await this.kill();
    await this.#spawn(this.url.replace(/^http:\/\//, ''));
  }

  /** Removes the data directory (after the last kill). */
  cleanup() {
    rmSync(this.#dir, { recursive: true, force: true });
  }

  /**
   * @param {string} ring
   * @param {string} [token]
   */
  api(ring, token) {
    return new Api(this, ring, token);
  }
}

/** One ring's REST API; a status other than the one wanted fails the test. */
export class Api {
  /**
   * @param {{ url: string }} server
   * @param {string} ring
   * @param {string} [token]
   */
  constructor(server, ring, token) {
    this.server = server;
    this.ring = ring;
    this.token = token;
  }

  /**
   * @param {string} method
   * @param {string} path under /v1/rings/{ring}
   * @param {unknown} body
   * @param {number} want
   * @returns {Promise<any>}
   */
  async do(method, path, body, want) {
    /** @type {Record<string, string>} */
    // Connection: close, so the test's own requests leave no connection
    // in the pool for the client under test to reuse, nor one open on
    // the server for a test counting its sockets.
    const headers = { 'Content-Type': 'application/json', Connection: 'close' };
    if (this.token !== undefined) headers.Authorization = `Bearer ${this.token}`;
    const res = await fetch(`${this.server.url}/v1/rings/${this.ring}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    assert.equal(res.status, want, `${method} ${path}: ${text}`);
    return text === '' ? undefined : JSON.parse(text);
  }

  /** @param {object} config @returns {Promise<number>} */
  async create(config) {
    return (await this.do('PUT', '', config, 201)).version;
  }

  /** @param {...object} ops @returns {Promise<number>} */
  async change(...ops) {
    return (await this.do('POST', '/changes', { ops }, 200)).version;
  }

  /**
   * The server's preference list of each key at version v (POST …/lookup).
   * @param {number} v
   * @param {string[]} keys
   * @param {number} [replicas]
   * @returns {Promise<string[][]>}
   */
  async lookup(v, keys, replicas = 1) {
    const out = await this.do('POST', '/lookup', { keys, version: v, replicas }, 200);
    assert.equal(out.version, v);
    return out.results.map((/** @type {{ replicas: string[] }} */ r) => r.replicas);
  }
}

/**
 * @param {string} id
 * @param {number} [weight]
 */
export const upsert = (id, weight = 1) => ({ op: 'upsert', node: { id, weight } });
/** @param {string} id */
export const remove = (id) => ({ op: 'remove', id });

/**
 * A reverse proxy in front of target, closed when the test ends: `down`
 * answers 503 to everything, `refuseStreams` answers every watch with 406
 * as a proxy that does not pass event streams would.
 * @param {import("node:test").TestContext} t
 * @param {{ url: string }} target
 */
export async function proxy(t, target) {
  const state = { down: false, refuseStreams: false, watches: 0, fetches: 0, url: '', close: async () => {} };
  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    if (state.down) return void res.writeHead(503).end('down');
    if (path.includes('/snapshots/')) state.fetches++;
    if (path.split('?')[0].endsWith('/watch')) {
      state.watches++;
      if (state.refuseStreams) return void res.writeHead(406).end('no event streams here');
    }
    const upstream = new URL(path, target.url);
    const out = request(upstream, { method: req.method, headers: req.headers }, (back) => {
      res.writeHead(back.statusCode ?? 502, back.headers);
      back.pipe(res);
    });
    out.on('error', () => res.destroy());
    req.pipe(out);
    res.on('close', () => out.destroy());
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  state.url = `http://127.0.0.1:${/** @type {import("node:net").AddressInfo} */ (server.address()).port}`;
  state.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  t.after(() => state.close());
  return state;
}

/** 40 keys every check places on the client and on the server. */
export const KEYS = Array.from({ length: 40 }, (_, i) => `user:${i}`);

/**
 * Checks that the client routes every key of KEYS as the server looks
 * it up at v, and its handoff against version `before`.
 * @param {Api} api
 * @param {import("../../src/client/client.js").RingClient} c
 * @param {number} v
 * @param {number} before
 */
export async function assertRoutesLikeServer(api, c, v, before) {
  const now = (await api.lookup(v, KEYS)).map((l) => l[0] ?? null);
  const then = before > 0 ? (await api.lookup(before, KEYS)).map((l) => l[0] ?? null) : KEYS.map(() => null);
  KEYS.forEach((k, i) => {
    assert.equal(c.owner(k), now[i], `v${v}: owner of ${k}`);
    const h = c.handoff(k);
    assert.deepEqual(
      h,
      {
        ownerNow: now[i],
        ownerBefore: then[i],
        version: v,
        versionBefore: before,
        moved: then[i] !== null && then[i] !== now[i],
      },
      `v${v}: handoff of ${k}`,
    );
  });
  const lists = await api.lookup(v, KEYS.slice(0, 10), 3);
  for (const [i, k] of KEYS.slice(0, 10).entries()) {
    assert.deepEqual(c.preferenceList(k, 3), lists[i], `v${v}: list of ${k}`);
  }
}

/**
 * Polls cond every 10 ms until it holds; fails after ms.
 * @param {string} what
 * @param {() => boolean | Promise<boolean>} cond
 * @param {number} [ms]
 */
export async function waitUntil(what, cond, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) assert.fail(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Waits until c routes on exactly v, failing after 20 s.
 * @param {import("../../src/client/client.js").RingClient} c
 * @param {number} v
 */
export async function waitVersion(c, v) {
  const st = await c.waitForVersion(v, { signal: AbortSignal.timeout(20_000) });
  assert.equal(st.version, v, `routes on ${st.version}, want ${v}`);
  return st;
}

/**
 * A fake server on a loopback port answering every request with handler,
 * closed (its connections too) when the test ends; resolves with its URL.
 * @param {import("node:test").TestContext} t
 * @param {import("node:http").RequestListener} handler
 */
export async function fakeServer(t, handler) {
  const server = createServer(handler);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  t.after(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  );
  return `http://127.0.0.1:${/** @type {import("node:net").AddressInfo} */ (server.address()).port}`;
}

/** A loopback URL nothing listens on. */
export async function deadUrl() {
  const s = createServer();
  await new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve(undefined)));
  const port = /** @type {import("node:net").AddressInfo} */ (s.address()).port;
  await new Promise((resolve) => s.close(() => resolve(undefined)));
  return `http://127.0.0.1:${port}`;
}
