// The console draws with the JavaScript package's modules (@ringd/client,
// served by ringd under /ui/lib/): it loads them from there, its picture's
// shares equal GET …/ownership for the proxies' circles and envoy_maglev's
// grid, which the other tests do not seed, a doctored encoding is not
// drawn and the page says why, and without Web Crypto the picture is drawn
// unchecked and says so.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  launchBrowser, legendShares, nodeRows, openRing, seedRing, startRingd, withConsole,
} from './support.mjs';

/** The algorithms the other tests do not seed, and the picture each draws. */
const PROXIES = {
  nginx: 'circle', haproxy: 'circle', twemproxy: 'circle', envoy_ring_hash: 'circle', envoy_maglev: 'grid',
};
let server;
let browser;

before(async () => {
  server = await startRingd();
  for (const algorithm of Object.keys(PROXIES)) await seedRing(server.api, `proxy-${algorithm}`, algorithm);
  await seedRing(server.api, 'plain', 'ring');
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

const checkState = (page) => page.locator('[data-testid=picture-check]').getAttribute('data-state');
const serverShares = async (ring) =>
  Object.fromEntries((await server.api.ownership(ring)).nodes.map((n) => [n.id, n.share]));
const tableShares = async (page) =>
  Object.fromEntries((await nodeRows(page)).filter((r) => r.state === 'active').map((r) => [r.id, r.share]));

for (const [algorithm, kind] of Object.entries(PROXIES)) {
  test(`the ${algorithm} ${kind}'s shares come from the package and equal the server's`, async (t) => {
    const ring = `proxy-${algorithm}`;
    await withConsole(t, browser, server, async ({ page }) => {
      const modules = [];
      page.on('request', (r) => modules.push(new URL(r.url()).pathname));
      await openRing(page, server, ring);
      for (const m of ['encoding', 'ownership', 'fingerprint']) {
        assert.ok(modules.includes(`/ui/lib/placement/${m}.js`), `the page loads the package's ${m}.js: ${modules}`);
      }
      assert.equal(await page.locator('[data-testid=picture]').getAttribute('data-kind'), kind);
      assert.equal(await checkState(page), 'verified');
      // A grid is the table, slot by slot: the default table_size's.
      if (kind === 'grid') assert.match(await page.locator('[data-testid=picture]').textContent(), /65,537 table slots/);
      const want = await serverShares(ring);
      assert.equal(Object.keys(want).length, 5);
      assert.deepEqual(await legendShares(page), want);
      assert.deepEqual(await tableShares(page), want);
      // The ownership came from the encoding, not from the server.
      assert.ok(!modules.some((p) => p.endsWith('/ownership')), 'no GET …/ownership');
    });
  });
}

test('an encoding that does not match its fingerprint is not drawn, and the page says so', async (t) => {
  await withConsole(t, browser, server, async ({ page }) => {
    // Something between ringd and the browser flips one bit of the body.
    await page.route('**/v1/rings/plain/snapshots/*/table', async (route) => {
      const response = await route.fetch();
      const body = await response.body();
      body[body.length - 1] ^= 1;
      await route.fulfill({ response, body });
    });
    await openRing(page, server, 'plain');
    const check = page.locator('[data-testid=picture-check]');
    assert.equal(await check.getAttribute('data-state'), 'mismatch');
    assert.equal(await check.getAttribute('role'), 'alert');
    const { fingerprint } = await server.api.ring('plain');
    assert.match(await check.textContent(), /does not match its fingerprint/);
    assert.ok((await check.textContent()).includes(fingerprint.slice(0, 16)));
    assert.equal(await page.locator('[data-testid=picture] canvas').isHidden(), true);
    // The node table still has every share: the server's.
    assert.deepEqual(await tableShares(page), await serverShares('plain'));
  });
});

test('without Web Crypto the picture is drawn unchecked, and the page says so', async (t) => {
  await withConsole(t, browser, server, async ({ page }) => {
    // What a plain-HTTP page on another host than 127.0.0.1 or localhost gets.
    await page.addInitScript(() => {
      Object.defineProperty(Crypto.prototype, 'subtle', { get: () => undefined, configurable: true });
    });
    await openRing(page, server, 'plain');
    const check = page.locator('[data-testid=picture-check]');
    assert.equal(await check.getAttribute('data-state'), 'unchecked');
    assert.match(await check.textContent(), /without checking .* fingerprint.*secure context/);
    assert.equal(await page.locator('[data-testid=picture] canvas').isVisible(), true);
    assert.deepEqual(await legendShares(page), await serverShares('plain'));
  });
});
