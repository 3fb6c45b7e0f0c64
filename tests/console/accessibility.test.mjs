// The console without a mouse and without full colour vision: the lookup
// and the change editor work from the keyboard alone, the node colours
// stay apart under simulated protan, deutan and tritan vision and are
// named in the node table, and the theme follows the system's.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  NODE_ROW, launchBrowser, openRing, seedRing, startRingd, waitForVersion, withConsole,
} from './support.mjs';

let server;
let browser;

before(async () => {
  server = await startRingd();
  await seedRing(server.api, 'keys', 'ring');
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

/** Presses Tab until the focused element matches `selector` (at most 200 times). */
async function tabTo(page, selector) {
  for (let i = 0; i < 200; i++) {
    if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) return;
    await page.keyboard.press('Tab');
  }
  assert.fail(`Tab never reached ${selector}`);
}

test('the lookup and the change editor work from the keyboard alone', async (t) => {
  const ring = 'keys';
  await withConsole(t, browser, server, async ({ page }) => {
    await openRing(page, server, ring);
    const base = (await server.api.ring(ring)).version;

    await tabTo(page, 'form[data-testid=lookup] input[name=key]');
    await page.keyboard.type('user:42');
    await page.keyboard.press('Enter');
    const want = await server.api.lookup(ring, 'user:42');
    await page.waitForFunction(
      (o) => document.querySelector('[data-testid=lookup-owner]')?.textContent.trim() === o, want.owner,
    );
    assert.equal((await page.locator('[data-testid=lookup-replicas]').textContent()).trim(),
      want.replicas.join(', '));

    // Add a node: every field reached by Tab, the preview and the apply
    // pressed with the keyboard.
    await tabTo(page, 'form[data-testid=editor] select[name=op]');
    assert.equal(await page.locator('form[data-testid=editor] select[name=op]').inputValue(), 'add');
    for (const [name, text] of [['node', 'kb-1'], ['weight', '2'], ['reason', 'from the keyboard']]) {
      await tabTo(page, `form[data-testid=editor] [name=${name}]`);
      await page.keyboard.press('ControlOrMeta+A');
      await page.keyboard.type(text);
    }
    await tabTo(page, '[data-testid=preview]');
    await page.keyboard.press('Enter');
    const moved = page.locator('[data-testid=preview-moved]');
    await moved.waitFor();
    const dry = await server.api.change(ring, [{ op: 'upsert', node: { id: 'kb-1', weight: 2 } }], {
      dry_run: true, expected_version: base,
    });
    assert.equal(Number(await moved.getAttribute('data-value')).toFixed(4), dry.diff.moved_fraction.toFixed(4));
    await tabTo(page, '[data-testid=apply]');
    await page.keyboard.press('Space');
    await waitForVersion(page, base + 1);
    const { nodes } = await server.api.nodes(ring);
    assert.deepEqual(nodes.filter((n) => n.id === 'kb-1').map((n) => [n.id, n.weight, n.state]),
      [['kb-1', 2, 'active']]);
  });
});

// Machado, Oliveira and Fernandes (2009), severity 1, on linear RGB.
const DEFICIENCIES = {
  protanopia: [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
  deuteranopia: [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
  tritanopia: [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]],
  none: [[1, 0, 0], [0, 1, 0], [0, 0, 1]],
};
/** CIE76 colour difference that two swatches side by side must keep. */
const MIN_DELTA_E = 12;

const linear = (c) => (c / 255 <= 0.04045 ? c / 255 / 12.92 : ((c / 255 + 0.055) / 1.055) ** 2.4);
function lab(rgbLinear) {
  const [r, g, b] = rgbLinear.map((x) => Math.min(1, Math.max(0, x)));
  const xyz = [0.4124 * r + 0.3576 * g + 0.1805 * b, 0.2126 * r + 0.7152 * g + 0.0722 * b,
    0.0193 * r + 0.1192 * g + 0.9505 * b];
  const f = (v) => (v > 216 / 24389 ? Math.cbrt(v) : (24389 / 27 * v + 16) / 116);
  const [fx, fy, fz] = [f(xyz[0] / 0.95047), f(xyz[1]), f(xyz[2] / 1.08883)];
  return [116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)];
}
const seen = (m, rgb) => lab(m.map((row) => row.reduce((s, k, j) => s + k * linear(rgb[j]), 0)));

test('the first eight node colours stay apart under colour-vision deficiencies and are named', async (t) => {
  await withConsole(t, browser, server, async ({ page }) => {
    await openRing(page, server, 'keys');
    // The palette the page itself uses, from the module it loaded.
    const palette = await page.evaluate(async () => (await import('/ui/colours.js')).PALETTE.slice(0, 8));
    assert.deepEqual(palette.map((c) => c.name), ['orange', 'sky blue', 'bluish green', 'yellow',
      'blue', 'vermillion', 'reddish purple', 'grey']);
    for (const [deficiency, m] of Object.entries(DEFICIENCIES)) {
      for (let i = 0; i < palette.length; i++) {
        for (let j = i + 1; j < palette.length; j++) {
          const d = Math.hypot(...seen(m, palette[i].rgb).map((v, k) => v - seen(m, palette[j].rgb)[k]));
          assert.ok(d >= MIN_DELTA_E,
            `${palette[i].name} and ${palette[j].name} are ${d.toFixed(1)} apart under ${deficiency}`);
        }
      }
    }
    // The table names each node's colour, in id order, as the legend does.
    const rows = await page.locator(NODE_ROW).evaluateAll((trs) => trs.map((r) => [
      r.dataset.node, r.querySelector('[data-col=colour]').textContent.trim()]));
    const ids = rows.map(([id]) => id).sort();
    assert.deepEqual(rows.map(([id, name]) => [id, name]),
      ids.map((id, i) => [id, palette[i].name]));
  });
});

test('the theme follows the system: dark on dark, light on light', async (t) => {
  const luminance = (page) => page.evaluate(() => {
    const [r, g, b] = getComputedStyle(document.body).backgroundColor.match(/\d+/g).map(Number);
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
  });
  for (const [scheme, check] of [['dark', (l) => l < 0.2], ['light', (l) => l > 0.8]]) {
    await withConsole(t, browser, server, async ({ page }) => {
      await openRing(page, server, 'keys');
      const l = await luminance(page);
      assert.ok(check(l), `${scheme}: background luminance ${l.toFixed(2)}`);
    }, { colorScheme: scheme });
  }
});
