// A server at capacity: a ringd at --max-watchers refuses a watch or a
// waiting long-poll with 503 at-capacity and a Retry-After of 1 to 10 s.
// The client tries its other URLs first, then waits what the server asked
// (retryAfterWait) before the next attempt, and follows once a slot is
// free. Against a fake server: 503 and 429 with Retry-After hold the next
// attempt back, on a stream and on long-polls; an HTTP-date or garbage
// does not.

import assert from 'node:assert/strict';
import { request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import { ApiError, RingClient } from '../../src/client/index.js';
import { fakeServer, Ringd, SKIP, upsert, waitUntil } from './ringd.js';

/**
 * The value of an unlabelled sample in ringd's /metrics.
 * @param {{ url: string }} s
 * @param {string} name
 */
async function metric(s, name) {
  const text = await (await fetch(`${s.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  assert.ok(line !== undefined, `no ${name} in /metrics`);
  return Number(line.slice(name.length + 1));
}

/**
 * Opens the ring's watch stream as a raw HTTP request and resolves once
 * the server answered it with an event stream; destroy() closes it.
 * @param {import("node:test").TestContext} t
 * @param {string} url the watch URL
 * @returns {Promise<{ destroy: () => void }>}
 */
function holdWatch(t, url) {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { Accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) {
        reject(new Error(`the held watch was answered ${res.statusCode}`));
        res.resume();
        return;
      }
      res.resume(); // its events are not needed: it only holds the slot
      res.on('error', () => {});
      resolve({ destroy: () => req.destroy() });
    });
    req.on('error', (e) => reject(e));
    req.end();
    t.after(() => req.destroy());
  });
}

/** @param {number} ms */
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test('at --max-watchers 1 the client waits out Retry-After, then follows once the slot is free', {
  skip: SKIP,
  timeout: 120_000,
}, async (t) => {
  const s = await Ringd.start(t, ['--max-watchers', '1']);
  const api = s.api('r');
  await api.create({});
  const v = await api.change(upsert('a'));
  const held = await holdWatch(t, `${s.url}/v1/rings/r/watch`);
  await waitUntil('the held watch admitted', async () => (await metric(s, 'ringd_watchers')) === 1);
  assert.equal(await metric(s, 'ringd_watchers_refused_total'), 0);
  // The library's default backoff (100 ms doubling to 10 s): a shorter
  // maximum would cut the Retry-After.
  const c = new RingClient(s.url, 'r', { clientId: 'capacity' });
  t.after(() => c.close());
  // The refusal happened after the last poll that still saw 0 was sent:
  // the client's next attempt comes at least Retry-After (≥ 1 s) after
  // that. Without Retry-After it would come within the backoff's first
  // steps (50-100 ms, then 100-200 ms, …), several times in 900 ms.
  const polling = performance.now();
  let sentBefore = polling;
  for (;;) {
    const sent = performance.now();
    const refused = await metric(s, 'ringd_watchers_refused_total');
    if (refused >= 1) {
      assert.equal(refused, 1, 'refused more than once before the first poll saw a refusal');
      break;
    }
    sentBefore = sent;
    assert.ok(sent - polling < 20_000, 'no refusal within 20 s');
    await sleep(5);
  }
  await sleep(Math.max(0, sentBefore + 900 - performance.now()));
  assert.equal(await metric(s, 'ringd_watchers_refused_total'), 1, 'the client came back before its Retry-After');
  const st = c.status();
  assert.equal(st.version, 0);
  assert.ok(st.lastError instanceof ApiError, `last error ${st.lastError}`);
  assert.deepEqual([st.lastError.status, st.lastError.slug], [503, 'at-capacity']);
  const ra = st.lastError.retryAfter ?? 0;
  assert.ok(Number.isInteger(ra / 1000) && ra >= 1000 && ra <= 10_000, `Retry-After ${ra} ms, want 1-10 s`);
  assert.ok(st.reconnects >= 1);
  // Free the slot: the client follows within its Retry-After (at most
  // 10 s, plus up to 1 s), or a second one if it came back before the
  // server saw the held stream close.
  held.destroy();
  const got = await c.waitForVersion(v, { signal: AbortSignal.timeout(30_000) });
  assert.deepEqual([got.version, got.transport, got.server], [v, 'sse', s.url]);
  assert.equal(await metric(s, 'ringd_watchers'), 1);
});

test('a full first URL sends the client to the second at once, not after its Retry-After', {
  skip: SKIP,
  timeout: 60_000,
}, async (t) => {
  const s = await Ringd.start(t);
  const api = s.api('r');
  await api.create({});
  const v = await api.change(upsert('a'));
  /** @type {string[]} */
  const hits = [];
  // What a ringd at capacity answers to everything, with the longest
  // Retry-After it draws.
  const fullUrl = await fakeServer(t, (req, res) => {
    hits.push(`${req.method} ${req.url}`);
    const problem = { type: 'urn:ringd:problem:at-capacity', title: 'At capacity', status: 503, detail: 'full' };
    res
      .writeHead(503, { 'Content-Type': 'application/problem+json', 'Retry-After': '10' })
      .end(JSON.stringify(problem));
  });
  const start = performance.now();
  const c = new RingClient([fullUrl, s.url], 'r', { clientId: 'full-first' });
  t.after(() => c.close());
  const st = await c.waitForVersion(v, { signal: AbortSignal.timeout(30_000) });
  const took = performance.now() - start;
  assert.ok(took < 8000, `followed after ${Math.round(took)} ms: it waited the first URL's Retry-After of 10 s`);
  assert.deepEqual([st.server, st.transport, st.reconnects], [s.url, 'sse', 0]);
  assert.deepEqual(hits, ['GET /v1/rings/r/watch']);
});

/** @type {[mode: "sse" | "long-poll", status: number, retryAfter: string, honoured: boolean][]} */
const REFUSALS = [
  ['sse', 503, '1', true],
  ['long-poll', 503, '1', true],
  ['sse', 429, '1', true],
  ['long-poll', 429, '1', true],
  ['sse', 503, 'Wed, 21 Oct 2015 07:28:00 GMT', false],
  ['long-poll', 429, 'soon', false],
];

for (const [mode, status, retryAfter, honoured] of REFUSALS) {
  const what = honoured ? 'waits at least its 1 s' : 'is ignored';
  test(`a ${status} with Retry-After "${retryAfter}" to a ${mode} ${what}`, async (t) => {
    /** @type {number[]} */
    const at = [];
    const path = mode === 'sse' ? '/v1/rings/r/watch' : '/v1/rings/r/snapshot';
    const serverUrl = await fakeServer(t, (req, res) => {
      if (req.url?.split('?')[0] === path) at.push(performance.now());
      res
        .writeHead(status, { 'Content-Type': 'application/problem+json', 'Retry-After': retryAfter })
        .end(`{"type":"urn:ringd:problem:at-capacity","title":"At capacity","status":${status},"detail":"full"}`);
    });
    // The default backoff: 100 ms doubling to 10 s, so its first waits
    // are 50-100 and 100-200 ms.
    const c = new RingClient(serverUrl, 'r', { watchMode: mode, ack: false });
    t.after(() => c.close());
    await waitUntil('two attempts', () => at.length >= 2, 15_000);
    await c.close();
    const gap = at[1] - at[0];
    const st = c.status();
    assert.ok(st.lastError instanceof ApiError);
    assert.equal(st.lastError.status, status);
    if (honoured) {
      assert.equal(st.lastError.retryAfter, 1000);
      // max(50-100 ms, 1 s + [0, 1 s)): at least 1 s, below 2 s but for
      // a loaded machine's delays.
      assert.ok(gap >= 1000 && gap < 5000, `the second attempt came ${Math.round(gap)} ms after the first`);
    } else {
      assert.equal(st.lastError.retryAfter, undefined);
      assert.ok(gap < 900, `the second attempt came ${Math.round(gap)} ms after the first, want the backoff's`);
    }
  });
}
