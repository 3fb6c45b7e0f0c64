// Changes made through the API while the console is open show up without
// a reload, within a second: on the ring page (version and node table)
// and on the rings page (the ring's version and node count).

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  NODE_ROW, launchBrowser, login, nodeRows, openRing, seedRing, shownVersion, startRingd,
  waitForVersion, withConsole,
} from './support.mjs';

const LIVE = 1000; // ms from the API's answer to the page showing it

let server;
let browser;

before(async () => {
  server = await startRingd();
  await seedRing(server.api, 'live', 'ring');
  await seedRing(server.api, 'live-table', 'table');
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

test('an API change reaches the open ring page within a second', async (t) => {
  const ring = 'live';
  await withConsole(t, browser, server, async ({ page }) => {
    await openRing(page, server, ring);
    const base = (await server.api.ring(ring)).version;
    assert.equal(await shownVersion(page), base);
    assert.equal(await page.locator(`${NODE_ROW}[data-node="live-new"]`).count(), 0);

    const node = { id: 'live-new', address: '10.8.0.1:11211', zone: 'zone-a', weight: 3 };
    const result = await server.api.change(ring, [{ op: 'upsert', node }], { reason: 'from outside' });
    const answered = Date.now();
    assert.equal(result.version, base + 1);
    await waitForVersion(page, base + 1, LIVE);
    await page.locator(`${NODE_ROW}[data-node="live-new"]`).waitFor({ timeout: Math.max(1, LIVE - (Date.now() - answered)) });
    t.diagnostic(`shown ${Date.now() - answered} ms after the API answered`);

    // The table follows the new version's ownership exactly.
    const ownership = await server.api.ownership(ring);
    assert.equal(ownership.version, base + 1);
    await page.waitForFunction(
      ({ row, want }) => [...document.querySelectorAll(row)]
        .filter((r) => r.dataset.state === 'active').length === want,
      { row: NODE_ROW, want: ownership.nodes.length },
    );
    const active = (await nodeRows(page)).filter((r) => r.state === 'active');
    assert.deepEqual(
      Object.fromEntries(active.map((r) => [r.id, r.share])),
      Object.fromEntries(ownership.nodes.map((n) => [n.id, n.share])),
    );
  });
});

test('a node removed through the API leaves the open table ring page within a second', async (t) => {
  const ring = 'live-table';
  await withConsole(t, browser, server, async ({ page }) => {
    await openRing(page, server, ring);
    const base = (await server.api.ring(ring)).version;
    const gone = 'live-table-2';
    await page.locator(`${NODE_ROW}[data-node="${gone}"]`).waitFor();

    const result = await server.api.change(ring, [{ op: 'remove', id: gone }], { reason: 'decommission' });
    assert.equal(result.version, base + 1);
    await waitForVersion(page, base + 1, LIVE);
    await page.locator(`${NODE_ROW}[data-node="${gone}"]`).waitFor({ state: 'detached', timeout: LIVE });
    const { nodes } = await server.api.nodes(ring);
    assert.deepEqual((await nodeRows(page)).map((r) => r.id).sort(), nodes.map((n) => n.id).sort());
  });
});

test('the rings page follows every ring without a reload', async (t) => {
  await withConsole(t, browser, server, async ({ page }) => {
    await login(page, server);
    const row = page.locator('[data-testid=rings-table] tbody tr[data-ring="live"]');
    await row.waitFor();
    const before = await server.api.ring('live');
    const result = await server.api.change('live', [
      { op: 'upsert', node: { id: 'live-rings-page', zone: 'zone-c' } },
    ], { reason: 'seen on the rings page' });
    assert.equal(result.version, before.version + 1);
    await page.waitForFunction(
      ({ version, nodes }) => {
        const tr = document.querySelector('[data-testid=rings-table] tbody tr[data-ring="live"]');
        return tr?.querySelector('[data-col=version]')?.textContent.trim() === version &&
          tr?.querySelector('[data-col=nodes]')?.textContent.trim() === nodes;
      },
      { version: String(result.version), nodes: String(before.nodes + 1) },
      { timeout: LIVE },
    ).catch(async (e) => {
      const text = await row.textContent();
      throw new Error(`the rings page did not show version ${result.version} within ${LIVE} ms (row: ${JSON.stringify(text)}): ${e.message}`);
    });
  });
});
