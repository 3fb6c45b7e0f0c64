// The same placement code, against the same vectors, in headless Chromium
// (Debian's, driven by playwright-core as the console's tests drive it).
// A loopback HTTP server started here serves clients/js/src, the ESM
// builds of the npm packages the key hashes need (named in an import map,
// as the console would, without a bundler) and the vector files; the page
// runs each file through test/vector-runner.js and hands back what it
// computed, which is checked here, in Node.js, against the file.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { importGraph, resolveBare } from './imports.js';
import { expectedOf } from './vector-expect.js';
import { VECTORS, vectorFiles } from './vector-files.js';

const ROOT = new URL('../', import.meta.url); // clients/js/
const NODE_MODULES = new URL('node_modules/', ROOT);
const VECTORS_URL = new URL(`file://${VECTORS}`);
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const TYPES = { '.js': 'text/javascript', '.json': 'application/json', '.html': 'text/html' };

/**
 * The import map: every bare specifier the placement modules reach,
 * directly or through the packages, to the file a browser should load.
 * @returns {Promise<Record<string, string>>}
 */
async function importMap() {
  /** @type {Record<string, string>} */
  const imports = {};
  await importGraph([new URL('src/placement/index.js', ROOT)], async (specifier) => {
    const url = await resolveBare(NODE_MODULES, specifier);
    imports[specifier] = `/node_modules/${url.href.slice(NODE_MODULES.href.length)}`;
    return url;
  });
  return imports;
}

/**
 * The file a request path names, or null outside the served trees.
 * @param {string} path
 * @returns {URL | null}
 */
function fileFor(path) {
  if (path.includes('..')) return null;
  for (const [prefix, base] of /** @type {const} */ ([
    ['/src/', new URL('src/', ROOT)],
    ['/test/', new URL('test/', ROOT)],
    ['/node_modules/', NODE_MODULES],
    ['/vectors/', VECTORS_URL],
  ])) {
    if (path.startsWith(prefix)) return new URL(path.slice(prefix.length), base);
  }
  return null;
}

/** @type {import('node:http').Server} */
let server;
/** @type {import('playwright-core').Browser | undefined} */
let browser;
/** @type {import('playwright-core').Page} */
let page;
const problems = /** @type {string[]} */ ([]);
const skip = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (set CHROMIUM, or apt-get install chromium)`;

before(async () => {
  if (skip) return;
  const page_ = `<!doctype html><meta charset="utf-8"><title>placement vectors</title>
<script type="importmap">${JSON.stringify({ imports: await importMap() })}</script>
<script type="module">
  import { runVector } from '/test/vector-runner.js';
  window.runVectorFile = async (rel) => runVector(rel, await (await fetch('/vectors/' + rel)).json());
  window.ready = true;
</script>`;
  server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    try {
      if (path === '/favicon.ico') {
        res.writeHead(204).end();
        return;
      }
      if (path === '/') {
        res.writeHead(200, { 'content-type': 'text/html' }).end(page_);
        return;
      }
      const file = fileFor(path);
      if (file === null) throw new Error('outside');
      const type =
        TYPES[/** @type {keyof typeof TYPES} */ (path.slice(path.lastIndexOf('.')))] ?? 'application/octet-stream';
      res.writeHead(200, { 'content-type': type }).end(await readFile(file));
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(null)));
  const address = /** @type {import('node:net').AddressInfo} */ (server.address());
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  page = await browser.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('request', (r) => {
    if (!r.url().startsWith(`http://127.0.0.1:${address.port}/`)) problems.push(`a request to ${r.url()}`);
  });
  await page.goto(`http://127.0.0.1:${address.port}/`);
  await page.waitForFunction(() => /** @type {any} */ (window).ready === true, null, { timeout: 30_000 });
});

after(async () => {
  await browser?.close();
  server?.close();
});

const files = await vectorFiles();

for (const rel of files) {
  test(`chromium: ${rel}`, { skip, timeout: 120_000 }, async () => {
    const file = JSON.parse(await readFile(fileURLToPath(new URL(rel, VECTORS_URL)), 'utf8'));
    const expected = expectedOf(rel, file);
    /** @type {Record<string, unknown>} */
    const actual = await page.evaluate((r) => /** @type {any} */ (window).runVectorFile(r), rel);
    for (const [field, want] of Object.entries(expected)) {
      assert.deepStrictEqual(actual[field], want, `${rel}: ${field}`);
    }
    assert.deepEqual(problems.splice(0), [], 'the page logged errors or left the server');
  });
}
