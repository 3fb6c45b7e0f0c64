// History and clients: the timeline lists every version newest first, the
// diff between any two picked versions moves what GET …/diff says, and the
// clients table shows each client's version with the divergent one flagged.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { launchBrowser, openRing, seedRing, startRingd, withConsole } from './support.mjs';

let server;
let browser;

before(async () => {
  server = await startRingd();
  const { api } = server;
  // hist: v1 created, v2 five nodes, v3 one draining, then three changes.
  await seedRing(api, 'hist', 'ring');
  await api.change('hist', [{ op: 'upsert', node: { id: 'hist-1', address: '10.0.0.1:11211', zone: 'zone-b', weight: 5 } }], { reason: 'heavier' });
  await api.change('hist', [{ op: 'remove', id: 'hist-3' }], { reason: 'retire hist-3' });
  await api.change('hist', [
    { op: 'upsert', node: { id: 'hist-7', address: '10.0.0.7:11211', zone: 'zone-a', weight: 2 } },
    { op: 'upsert', node: { id: 'hist-8', address: '10.0.0.8:11211', zone: 'zone-c', weight: 1 } },
  ], { reason: 'two more' });
  // acks: v1–v3 as seeded, v4 one more node.
  await seedRing(api, 'acks', 'maglev');
  await api.change('acks', [{ op: 'upsert', node: { id: 'acks-9', zone: 'zone-a' } }], { reason: 'grow' });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

/** Picks `from` and `to` in the diff pickers; resolves to the moved fraction shown. */
async function pickDiff(page, from, to) {
  await page.locator('[data-testid=diff-from]').selectOption(String(from));
  await page.locator('[data-testid=diff-to]').selectOption(String(to));
  // The diff panel marks which pair it shows once that pair has loaded.
  await page.locator(`[data-testid=diff][data-loaded="${from}-${to}"]`).waitFor();
  return Number(await page.locator('[data-testid=diff-moved]').getAttribute('data-value'));
}

/** The transfer matrix's non-empty cells as `{"from → to": fraction}` ("" for a node new or gone). */
async function matrixCells(page) {
  return page.locator('table[data-testid=transfer-matrix] tbody tr').evaluateAll((trs) => Object.fromEntries(
    trs.flatMap((tr) => [...tr.querySelectorAll('td[data-to]')]
      .filter((td) => Number(td.dataset.value) !== 0)
      .map((td) => [`${tr.dataset.from} → ${td.dataset.to}`, Number(td.dataset.value)])),
  ));
}

test('the history lists every version newest first and diffs any two', async (t) => {
  const ring = 'hist';
  const { entries } = await server.api.history(ring);
  assert.deepEqual(entries.map((e) => e.version), [1, 2, 3, 4, 5, 6]);
  await withConsole(t, browser, server, async ({ page }) => {
    await openRing(page, server, ring);
    const items = page.locator('[data-testid=history] li[data-version]');
    await items.first().waitFor();
    const versions = await items.evaluateAll((lis) => lis.map((li) => Number(li.dataset.version)));
    assert.deepEqual(versions, entries.map((e) => e.version).reverse());

    for (const [from, to] of [[2, 5], [3, 6], [4, 5]]) {
      const { diff } = await server.api.diff(ring, from, to);
      assert.equal(await pickDiff(page, from, to), diff.moved_fraction, `moved ${from} → ${to}`);
      await page.locator('table[data-testid=transfer-matrix]').waitFor({ state: 'visible' });
      assert.deepEqual(
        await matrixCells(page),
        Object.fromEntries(diff.transfers.map((x) => [`${x.from ?? ''} → ${x.to ?? ''}`, x.fraction])),
        `transfers ${from} → ${to}`,
      );
    }
  });
});

test('the clients table shows every client, the divergent one flagged', async (t) => {
  const ring = 'acks';
  const { api } = server;
  const { entries } = await api.history(ring);
  const fingerprint = Object.fromEntries(entries.map((e) => [e.version, e.fingerprint]));
  const latest = entries.at(-1).version;
  assert.equal(latest, 4);
  // web-old computed another placement for version 2 (divergent); web-lag
  // is one version behind with the right fingerprint (lagging only);
  // web-new is on the latest.
  await api.ack(ring, 'web-old', 2, 'f'.repeat(64));
  await api.ack(ring, 'web-lag', 3, fingerprint[3]);
  await api.ack(ring, 'web-new', latest, fingerprint[latest]);
  // A proxy whose agent could not load version 4: its message is markup
  // that must show as text.
  const error = 'nginx: [emerg] <img src=x onerror="window.pwned=1"> in ringd.conf:3\nnginx: configuration file test failed';
  await api.ack(ring, 'nginx-1', 3, fingerprint[3], { kind: 'proxy', failure: { version: 4, error } });
  const { clients } = await api.clients(ring);
  assert.deepEqual(
    clients.map((c) => [c.client_id, c.version, c.lag, c.divergent, c.kind]),
    [['nginx-1', 3, 1, false, 'proxy'], ['web-lag', 3, 1, false, 'library'], ['web-new', 4, 0, false, 'library'], ['web-old', 2, 2, true, 'library']],
  );

  await withConsole(t, browser, server, async ({ page }) => {
    await openRing(page, server, ring);
    const rows = page.locator('[data-testid=clients-table] tr[data-client]');
    await rows.first().waitFor();
    const shown = await rows.evaluateAll((trs) => trs.map((tr) => ({
      client: tr.dataset.client,
      version: tr.querySelector('[data-col=version]')?.textContent.trim(),
      lag: tr.querySelector('[data-col=lag]')?.textContent.trim(),
      divergent: tr.dataset.divergent,
      kind: tr.querySelector('[data-col=kind]')?.textContent.trim(),
      failure: tr.querySelector('[data-testid=client-failure] pre')?.textContent ?? null,
    })));
    assert.deepEqual(shown, clients.map((c) => ({
      client: c.client_id,
      version: String(c.version),
      lag: String(c.lag),
      divergent: String(c.divergent),
      kind: c.kind,
      failure: c.failure ? c.failure.error : null,
    })));
    assert.equal(shown[0].failure, error);
    assert.equal(await page.locator('[data-testid=clients-table] img').count(), 0);
    assert.equal(await page.evaluate(() => window.pwned), undefined);
  });
});
