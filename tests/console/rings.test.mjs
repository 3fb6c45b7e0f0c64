// The rings page lists every ring as the API does, and each algorithm's
// ring page draws its own kind of picture, from an encoding checked
// against its fingerprint, with a legend and a node table showing the
// exact shares of GET …/ownership.

import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';
import {
  ALGORITHMS, PICTURE_KIND, REPO, legendShares, login, launchBrowser, nodeRows, openRing, screenshot,
  seedAlgorithms, startRingd, withConsole,
} from './support.mjs';

let server;
let browser;
let names;

before(async () => {
  server = await startRingd();
  names = await seedAlgorithms(server.api);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

test('the rings page lists every ring with its algorithm, version and node count', async (t) => {
  await withConsole(t, browser, server, async ({ page }) => {
    await login(page, server);
    const rows = page.locator('[data-testid=rings-table] tbody tr[data-ring]');
    await rows.first().waitFor();
    const shown = await rows.evaluateAll((trs) => trs.map((tr) => ({
      ring: tr.dataset.ring,
      algorithm: tr.querySelector('[data-col=algorithm]')?.textContent.trim(),
      version: tr.querySelector('[data-col=version]')?.textContent.trim(),
      nodes: tr.querySelector('[data-col=nodes]')?.textContent.trim(),
    })));
    const { rings } = await server.api.rings();
    assert.deepEqual(rings.map((r) => r.ring).sort(), [...names].sort());
    assert.deepEqual(shown, rings.map((r) => ({
      ring: r.ring,
      algorithm: r.config.algorithm,
      version: String(r.version),
      nodes: String(r.nodes),
    })));
  });
});

for (const algorithm of ALGORITHMS) {
  test(`the ${algorithm} ring page draws the ${PICTURE_KIND[algorithm]} picture and every node's exact share`, async (t) => {
    const ring = `cache-${algorithm}`;
    await withConsole(t, browser, server, async ({ page }) => {
      await openRing(page, server, ring);
      assert.equal(await page.locator('[data-testid=picture]').getAttribute('data-kind'), PICTURE_KIND[algorithm]);

      const [{ nodes }, ownership] = await Promise.all([server.api.nodes(ring), server.api.ownership(ring)]);
      const byId = (a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
      const rows = (await nodeRows(page)).sort(byId);
      // Every node the ring has with its state (five active, one draining);
      // the active ones with their exact share of the keyspace.
      assert.deepEqual(
        rows.map(({ id, state }) => ({ id, state })),
        nodes.map(({ id, state }) => ({ id, state })).sort(byId),
      );
      assert.equal(rows.filter((r) => r.state === 'active').length, 5);
      assert.equal(rows.length, 6);
      const active = rows.filter((r) => r.state === 'active');
      assert.deepEqual(
        Object.fromEntries(active.map((r) => [r.id, r.share])),
        Object.fromEntries(ownership.nodes.map((n) => [n.id, n.share])),
      );
      // The picture's shares, computed in the page by the package's
      // ownershipOf from the encoding it drew, are the server's bit for bit.
      assert.equal(await page.locator('[data-testid=picture-check]').getAttribute('data-state'), 'verified');
      assert.deepEqual(await legendShares(page), Object.fromEntries(ownership.nodes.map((n) => [n.id, n.share])));

      if (algorithm === 'ring' && process.env.RINGD_BLESS === '1') {
        const file = path.join(REPO, 'docs/img/console.png');
        await screenshot(page, 'console', file);
        t.diagnostic(`wrote ${file}`);
      }
    });
  });
}
