// The change editor: a node added through it is previewed with the same
// movement as the API's own dry run, then applied as exactly one version;
// a preview whose ring has changed since is refused, and only the other
// change lands.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  NODE_ROW, launchBrowser, openRing, seedRing, shownVersion, startRingd, waitForVersion, withConsole,
} from './support.mjs';

let server;
let browser;

before(async () => {
  server = await startRingd();
  await seedRing(server.api, 'edit', 'ring');
  await seedRing(server.api, 'stale', 'rendezvous');
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

/** Fills the editor with an `add` of `node` and clicks preview; resolves to the shown moved fraction. */
async function previewAdd(page, node, reason) {
  const editor = page.locator('form[data-testid=editor]');
  await editor.locator('select[name=op]').selectOption('add');
  await editor.locator('[name=node]').fill(node.id);
  await editor.locator('[name=address]').fill(node.address);
  await editor.locator('[name=zone]').fill(node.zone);
  await editor.locator('[name=weight]').fill(String(node.weight));
  await editor.locator('[name=reason]').fill(reason);
  await page.locator('[data-testid=preview]').click();
  const moved = page.locator('[data-testid=preview-moved]');
  await moved.waitFor();
  return Number(await moved.getAttribute('data-value'));
}

test('a node added in the editor moves what the dry run says and lands as one version', async (t) => {
  const ring = 'edit';
  const node = { id: 'edit-new', address: '10.9.0.7:11211', zone: 'zone-b', weight: 2 };
  const reason = 'add capacity from the console';
  await withConsole(t, browser, server, async ({ page }) => {
    await openRing(page, server, ring);
    const base = (await server.api.ring(ring)).version;
    assert.equal(await shownVersion(page), base);

    const previewed = await previewAdd(page, node, reason);
    const dry = await server.api.change(ring, [{ op: 'upsert', node }], {
      reason, expected_version: base, dry_run: true,
    });
    assert.equal(dry.dry_run, true);
    assert.equal(previewed.toFixed(4), dry.diff.moved_fraction.toFixed(4));
    assert.equal((await server.api.ring(ring)).version, base, 'the preview committed nothing');

    await page.locator('[data-testid=apply]').click();
    const status = page.locator('[data-testid=editor-status]');
    await page.waitForFunction(
      (want) => document.querySelector('[data-testid=editor-status]')?.textContent.trim() === want,
      `Applied: version ${base + 1}`,
    ).catch(async () => {
      assert.equal((await status.textContent())?.trim(), `Applied: version ${base + 1}`);
    });
    await waitForVersion(page, base + 1);

    const after = await server.api.ring(ring);
    assert.equal(after.version, base + 1);
    const { nodes } = await server.api.nodes(ring);
    const added = nodes.find((n) => n.id === node.id);
    assert.deepEqual(
      { id: added?.id, address: added?.address, zone: added?.zone, weight: added?.weight, state: added?.state },
      { ...node, state: 'active' },
    );
    const { entries } = await server.api.history(ring);
    const last = entries.at(-1);
    assert.equal(last.version, base + 1);
    assert.equal(last.reason, reason);
    assert.deepEqual(last.ops.map((op) => [op.op, op.node?.id]), [['upsert', node.id]]);
    await page.locator(`${NODE_ROW}[data-node="${node.id}"]`).waitFor();
  });
});

test('applying a preview after the ring changed is refused and changes nothing', async (t) => {
  const ring = 'stale';
  const mine = { id: 'stale-mine', address: '10.9.1.1:11211', zone: 'zone-a', weight: 1 };
  const theirs = { id: 'stale-theirs', address: '10.9.1.2:11211', zone: 'zone-c', weight: 1 };
  // The refused apply is a 412, which Chromium logs as a failed load.
  await withConsole(t, browser, server, async ({ page }) => {
    await openRing(page, server, ring);
    const base = (await server.api.ring(ring)).version;
    await previewAdd(page, mine, 'a change that comes too late');

    const other = await server.api.change(ring, [{ op: 'upsert', node: theirs }], { reason: 'meanwhile' });
    assert.equal(other.version, base + 1);
    await waitForVersion(page, base + 1);

    await page.locator('[data-testid=apply]').click();
    const error = page.locator('[data-testid=editor-error]');
    await error.waitFor({ state: 'visible' });
    const text = await error.textContent();
    assert.match(text, /changed/);
    assert.match(text, /version/);

    const ringNow = await server.api.ring(ring);
    assert.equal(ringNow.version, base + 1, 'only the API change landed');
    const ids = (await server.api.nodes(ring)).nodes.map((n) => n.id);
    assert.equal(ids.includes(theirs.id), true);
    assert.equal(ids.includes(mine.id), false);
    const { entries } = await server.api.history(ring);
    assert.deepEqual(entries.at(-1).ops.map((op) => op.node?.id), [theirs.id]);
    assert.equal(await shownVersion(page), base + 1);
  }, { allowConsole: [/status of 412\b/] });
});
