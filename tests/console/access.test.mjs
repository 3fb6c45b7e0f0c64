// Tokens: without one the console asks for it; the read token gives a
// read-only console without the change editor, the admin token a
// read-write one with it. GET /v1/access, which the console asks, answers
// exactly what each token may do.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  ADMIN_TOKEN, READ_TOKEN, consoleUrl, launchBrowser, openRing, seedRing, startRingd, withConsole,
} from './support.mjs';

let server;
let browser;

before(async () => {
  server = await startRingd();
  await seedRing(server.api, 'guarded', 'maglev');
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

test('GET /v1/access tells what each token may do', async () => {
  const required = { read_token_required: true, admin_token_required: true };
  const cases = [
    [undefined, { token: 'none', read: false, write: false, ...required }],
    [READ_TOKEN, { token: 'read', read: true, write: false, ...required }],
    [ADMIN_TOKEN, { token: 'admin', read: true, write: true, ...required }],
    ['not-a-token', { token: 'invalid', read: false, write: false, ...required }],
  ];
  for (const [token, want] of cases) {
    const res = await fetch(`${server.url}/v1/access`, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
    assert.equal(res.status, 200, `token ${token}`);
    assert.deepEqual(await res.json(), want, `token ${token}`);
  }
});

test('without a token the console opens the token dialog', async (t) => {
  await withConsole(t, browser, server, async ({ page }) => {
    await page.goto(consoleUrl(server));
    await page.locator('#token-dialog input[name=token]').waitFor({ state: 'visible' });
    assert.equal(await page.locator('#token-dialog').isVisible(), true);
    assert.equal(await page.locator('[data-testid=token-save]').isVisible(), true);
    assert.equal(await page.locator('[data-testid=rings-table] tbody tr[data-ring]').count(), 0);
  });
});

test('the read token gives a read-only console without the editor', async (t) => {
  await withConsole(t, browser, server, async ({ page }) => {
    await openRing(page, server, 'guarded', READ_TOKEN);
    assert.equal((await page.locator('[data-testid=mode]').textContent()).trim(), 'read-only');
    assert.equal(await page.locator('form[data-testid=editor]').count(), 0);
    // Reads work: the page shows the ring's version and nodes.
    assert.equal(await page.locator('[data-testid=nodes-table] tbody tr[data-node]').count(), 6);
  });
});

test('the admin token gives a read-write console with the editor', async (t) => {
  await withConsole(t, browser, server, async ({ page }) => {
    await openRing(page, server, 'guarded', ADMIN_TOKEN);
    assert.equal((await page.locator('[data-testid=mode]').textContent()).trim(), 'read-write');
    assert.equal(await page.locator('form[data-testid=editor]').count(), 1);
    assert.equal(await page.locator('form[data-testid=editor]').isVisible(), true);
  });
});

test('a wrong token is refused and the dialog stays open', async (t) => {
  await withConsole(t, browser, server, async ({ page }) => {
    await page.goto(consoleUrl(server));
    const input = page.locator('#token-dialog input[name=token]');
    await input.waitFor({ state: 'visible' });
    await input.fill('not-a-token');
    await page.locator('[data-testid=token-save]').click();
    await page.locator('#token-dialog [role=alert]').waitFor({ state: 'visible' });
    assert.equal(await input.isVisible(), true);
    assert.equal(await page.locator('[data-testid=rings-table] tbody tr[data-ring]').count(), 0);
    assert.equal(await page.locator('form[data-testid=editor]').count(), 0);
  });
});
