// Lookups in the console answer what GET …/lookup answers: the owner and
// the replicas, in order, for every key.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { launchBrowser, openRing, seedRing, startRingd, withConsole } from './support.mjs';

const KEYS = 20;
let server;
let browser;

before(async () => {
  server = await startRingd();
  await seedRing(server.api, 'lookup', 'ring');
  await seedRing(server.api, 'lookup-table', 'table');
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

/**
 * `count` keys with the API's answers, chosen so that no two keys in a row
 * have the same owner: each answer must replace the one before on the page.
 */
async function distinctKeys(ring, count) {
  const picked = [];
  for (let i = 0; picked.length < count && i < 1000; i++) {
    const key = [`user:${i}`, `session/${i * 7919}`, `k${i} é ✓`][i % 3];
    const answer = await server.api.lookup(ring, key);
    if (picked.length === 0 || picked.at(-1).answer.owner !== answer.owner) picked.push({ key, answer });
  }
  assert.equal(picked.length, count);
  return picked;
}

for (const ring of ['lookup', 'lookup-table']) {
  test(`${KEYS} lookups on ${ring} give GET …/lookup's owner and replicas`, async (t) => {
    const keys = await distinctKeys(ring, KEYS);
    await withConsole(t, browser, server, async ({ page }) => {
      await openRing(page, server, ring);
      const input = page.locator('form[data-testid=lookup] input[name=key]');
      for (const { key, answer } of keys) {
        await input.fill(key);
        await input.press('Enter');
        // The owner differs from the previous key's: wait for it to change.
        await page.waitForFunction(
          (want) => document.querySelector('[data-testid=lookup-owner]')?.textContent.trim() === want,
          answer.owner, { timeout: 3000 },
        ).catch(() => {});
        const shown = {
          owner: (await page.locator('[data-testid=lookup-owner]').textContent())?.trim(),
          replicas: (await page.locator('[data-testid=lookup-replicas]').textContent())?.trim(),
        };
        assert.deepEqual(shown, { owner: answer.owner, replicas: answer.replicas.join(', ') }, `key ${JSON.stringify(key)}`);
      }
      assert.equal(keys.every(({ answer }) => answer.replicas.length === 3), true);
    });
  });
}
