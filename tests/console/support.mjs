// What every console test shares: a live `ringd serve` on a temporary
// SQLite store with an admin and a read token, its HTTP API, the seeded
// rings, a headless Chromium, and the checks every test ends with (every
// request went to ringd, no console error, a screenshot).
//
// The binary is $RINGD_BIN, else target/release/ringd. $RINGD_CONSOLE_DIR,
// when set, is passed as --console-dir (the console served from disk while
// it is being written); CI leaves it unset, so the embedded console is the
// one tested.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const ADMIN_TOKEN = 'console-admin-5b1e';
export const READ_TOKEN = 'console-read-9c2d';
export const SCREENSHOTS = path.join(REPO, 'target/console-screenshots');

/** How long a UI element gets to appear or change (the live-update test uses less). */
export const UI_TIMEOUT = 5000;

// ---------------------------------------------------------------- server

// Variables that would change what `ringd serve` does; the child gets none.
const SCRUBBED = /^(RINGD_|HTTPS?_PROXY$|ALL_PROXY$|NO_PROXY$)/i;

/** Starts `ringd serve` on a free loopback port; resolves once it prints its URL. */
export async function startRingd({ args = [] } = {}) {
  const bin = process.env.RINGD_BIN || path.join(REPO, 'target/release/ringd');
  const dir = await mkdtemp(path.join(tmpdir(), 'ringd-console-'));
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !SCRUBBED.test(k)));
  const consoleDir = process.env.RINGD_CONSOLE_DIR ? ['--console-dir', process.env.RINGD_CONSOLE_DIR] : [];
  const child = spawn(bin, [
    'serve', '--listen', '127.0.0.1:0', '--store', `sqlite://${dir}/ringd.db`,
    '--admin-token', ADMIN_TOKEN, '--read-token', READ_TOKEN, ...consoleDir, ...args,
  ], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const logPath = path.join(dir, 'ringd.log');
  child.stderr.pipe(createWriteStream(logPath));
  const lines = createInterface({ input: child.stdout });
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${bin} printed no URL within 30 s`)), 30_000);
    child.once('error', (e) => { clearTimeout(timer); reject(new Error(`cannot start ${bin}: ${e.message}`)); });
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`${bin} exited with ${code} before printing its URL`)); });
    lines.once('line', (line) => {
      clearTimeout(timer);
      const m = /^ringd listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(line);
      m ? resolve(m[1]) : reject(new Error(`unexpected first line: ${JSON.stringify(line)}`));
    });
  }).catch(async (e) => {
    child.kill('SIGKILL');
    const log = await readFile(logPath, 'utf8').catch(() => '');
    throw new Error(`${e.message}\nits log:\n${log}`);
  });
  lines.on('line', () => {}); // keep draining stdout
  return {
    url,
    api: new Api(url, ADMIN_TOKEN),
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The HTTP API with a bearer token; every method throws on an unexpected status. */
export class Api {
  constructor(base, token) { this.base = base; this.token = token; }

  async request(method, route, body, { expect = [200, 201], headers = {} } = {}) {
    const res = await fetch(this.base + route, {
      method,
      headers: {
        authorization: `Bearer ${this.token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!expect.includes(res.status)) {
      throw new Error(`${method} ${route}: ${res.status} ${text.slice(0, 500)}`);
    }
    return text ? JSON.parse(text) : null;
  }

  get(route) { return this.request('GET', route); }
  rings() { return this.get('/v1/rings'); }
  ring(name) { return this.get(`/v1/rings/${name}`); }
  nodes(name) { return this.get(`/v1/rings/${name}/nodes`); }
  ownership(name) { return this.get(`/v1/rings/${name}/ownership`); }
  history(name) { return this.get(`/v1/rings/${name}/history`); }
  diff(name, from, to) { return this.get(`/v1/rings/${name}/diff?from=${from}&to=${to}`); }
  lookup(name, key) { return this.get(`/v1/rings/${name}/lookup?key=${encodeURIComponent(key)}`); }
  clients(name) { return this.get(`/v1/rings/${name}/clients`); }
  createRing(name, config) { return this.request('PUT', `/v1/rings/${name}`, config); }
  /** POST …/changes with `ops` and the other body fields in `extra` (reason, dry_run, …). */
  change(name, ops, extra = {}) {
    return this.request('POST', `/v1/rings/${name}/changes`, { ops, reason: 'console test', ...extra });
  }
  ack(name, client, version, fingerprint, extra = {}) {
    return this.request('POST', `/v1/rings/${name}/clients/${client}/ack`, { version, fingerprint, ...extra });
  }
}

// ------------------------------------------------------------------ rings

export const ALGORITHMS = ['ring', 'ketama', 'maglev', 'jump', 'rendezvous', 'table'];
/** What `[data-testid=picture]`'s data-kind is for each algorithm. */
export const PICTURE_KIND = {
  ring: 'circle', ketama: 'circle', maglev: 'grid', table: 'grid', jump: 'bar', rendezvous: 'shares',
};
const CONFIG = { ketama: { hash: 'md5' }, table: { partitions: 1024 } };
const ZONES = ['zone-a', 'zone-b', 'zone-c'];

/** `count` node records `${prefix}-1`…, spread over three zones, weights 1–3, with addresses. */
export function makeNodes(prefix, count, { from = 1 } = {}) {
  return Array.from({ length: count }, (_, i) => {
    const n = from + i;
    return {
      id: `${prefix}-${n}`,
      address: `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}:11211`,
      zone: ZONES[n % ZONES.length],
      weight: 1 + (n % 3),
    };
  });
}

/**
 * Creates ring `name` and gives it `active` active nodes in one change,
 * plus one draining node in a second change when `draining` (so the
 * ring's node count and its active nodes differ).
 */
export async function seedRing(api, name, algorithm, { active = 5, draining = true, prefix = name } = {}) {
  await api.createRing(name, { algorithm, ...CONFIG[algorithm] });
  const nodes = makeNodes(prefix, active);
  await api.change(name, nodes.map((node) => ({ op: 'upsert', node })), { reason: 'seed' });
  if (draining) {
    const [node] = makeNodes(prefix, 1, { from: active + 1 });
    await api.change(name, [{ op: 'upsert', node: { ...node, state: 'draining' } }], { reason: 'drain one' });
  }
  return api.ring(name);
}

/** One 5-node ring per algorithm, named `cache-<algorithm>`; returns the names. */
export async function seedAlgorithms(api) {
  const names = [];
  for (const algorithm of ALGORITHMS) {
    const name = `cache-${algorithm}`;
    await seedRing(api, name, algorithm);
    names.push(name);
  }
  return names;
}

// ---------------------------------------------------------------- browser

export function launchBrowser() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  });
}

/** The console's address for a hash route: `#/` (the rings) or `#/rings/NAME`. */
export function consoleUrl(server, route = '/') { return `${server.url}/ui/#${route}`; }
export function ringRoute(name) { return `/rings/${encodeURIComponent(name)}`; }

/**
 * Runs `body({ page, context })` in a fresh browser context. Every request
 * the context makes must go to the server's origin, and the page must log
 * no console error and throw no uncaught error, except console errors
 * matching one of `allowConsole` (a request the test expects to be refused).
 * `colorScheme` is what the system prefers (`light` or `dark`).
 * A screenshot named after the test is saved whatever happens.
 */
export async function withConsole(t, browser, server, body, { allowConsole = [], viewport = { width: 1400, height: 1000 }, colorScheme = 'light' } = {}) {
  const context = await browser.newContext({ viewport, colorScheme });
  context.setDefaultTimeout(UI_TIMEOUT);
  const page = await context.newPage();
  const requests = [];
  const problems = [];
  context.on('request', (r) => requests.push(r.url()));
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    const text = `${m.text()} (${m.location().url || 'no location'})`;
    if (!allowConsole.some((re) => re.test(text))) problems.push(`console error: ${text}`);
  });
  page.on('pageerror', (e) => problems.push(`uncaught: ${e.stack || e.message}`));
  try {
    await body({ page, context });
    const foreign = requests.filter((u) => !u.startsWith(`${server.url}/`));
    assert.deepEqual(foreign, [], `requests that left ${server.url}`);
    assert.deepEqual(problems, [], 'console errors or uncaught exceptions');
  } catch (e) {
    if (problems.length) t.diagnostic(`page problems:\n  ${problems.join('\n  ')}`);
    throw e;
  } finally {
    await screenshot(page, t.name).catch((e) => t.diagnostic(`no screenshot: ${e.message}`));
    await context.close();
  }
}

export async function screenshot(page, name, file) {
  await mkdir(SCREENSHOTS, { recursive: true });
  const target = file || path.join(SCREENSHOTS, `${name.replace(/[^A-Za-z0-9._-]+/g, '-').slice(0, 120)}.png`);
  await page.screenshot({ path: target });
  return target;
}

/** Opens the console, enters `token` in the token dialog and waits for the mode it grants. */
export async function login(page, server, token = ADMIN_TOKEN, route = '/') {
  await page.goto(consoleUrl(server, route));
  const input = page.locator('#token-dialog input[name=token]');
  await input.waitFor({ state: 'visible' });
  await input.fill(token);
  await page.locator('[data-testid=token-save]').click();
  await page.locator('#token-dialog input[name=token]').waitFor({ state: 'hidden' });
  const mode = token === ADMIN_TOKEN ? 'read-write' : 'read-only';
  await page.waitForFunction(
    (m) => document.querySelector('[data-testid=mode]')?.textContent.trim() === m, mode,
    { timeout: UI_TIMEOUT },
  );
}

/** Logs in with the admin token and opens ring `name`'s page, waiting until it has rendered. */
export async function openRing(page, server, name, token = ADMIN_TOKEN) {
  await login(page, server, token, ringRoute(name));
  await page.locator('[data-testid=ring-page][data-rendered]').waitFor();
}

// ------------------------------------------------------------------ reads

export const NODE_ROW = '[data-testid=nodes-table] tbody tr[data-node]';

/**
 * The node table, row by row in page order: `{id, state, share}`, the share
 * being the data-value of the row's share cell (absent for a node that is
 * not active).
 */
export async function nodeRows(page) {
  return page.locator(NODE_ROW).evaluateAll((rows) => rows.map((r) => {
    const share = r.querySelector('[data-col=share]')?.dataset.value;
    return { id: r.dataset.node, state: r.dataset.state, share: share === undefined ? null : Number(share) };
  }));
}

/** The picture's legend: node id → the exact share its data-share holds. */
export async function legendShares(page) {
  return Object.fromEntries(await page.locator('[data-testid=picture] .legend li[data-node]').evaluateAll(
    (lis) => lis.map((li) => [li.dataset.node, Number(li.dataset.share)]),
  ));
}

/** The version `[data-testid=ring-version]` shows: the one integer in its text. */
export async function shownVersion(page) {
  return versionIn(await page.locator('[data-testid=ring-version]').textContent());
}

export function versionIn(text) {
  const numbers = (text ?? '').match(/\d+/g) ?? [];
  assert.equal(numbers.length, 1, `one version number in ${JSON.stringify(text)}`);
  return Number(numbers[0]);
}

/** Waits (at most `timeout` ms) until the page shows version `version`. */
export async function waitForVersion(page, version, timeout = UI_TIMEOUT) {
  await page.waitForFunction((v) => {
    const t = document.querySelector('[data-testid=ring-version]')?.textContent ?? '';
    const n = t.match(/\d+/g);
    return n !== null && n.length === 1 && Number(n[0]) === v;
  }, version, { timeout }).catch(async (e) => {
    const now = await page.locator('[data-testid=ring-version]').textContent().catch(() => null);
    throw new Error(`ring-version did not reach ${version} within ${timeout} ms (shows ${JSON.stringify(now)}): ${e.message}`);
  });
}
