// Losing servers: a restart, a dead first URL, a proxy shut down, a proxy
// that refuses event streams (long-polls), one that answers 503 while
// versions are committed; and acks as GET …/clients shows them.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError, RingClient } from '../../src/client/index.js';
import { assertRoutesLikeServer, deadUrl, FAST, proxy, Ringd, SKIP, upsert, waitUntil, waitVersion } from './ringd.js';

/**
 * Versions of every "applied" event of c.
 * @param {RingClient} c
 */
function appliedVersions(c) {
  /** @type {number[]} */
  const seen = [];
  c.addEventListener('applied', (e) =>
    seen.push(/** @type {import("../../src/client/index.js").RingEvent} */ (e).version),
  );
  return seen;
}

test('resumes after the server is killed and restarted', { skip: SKIP }, async (t) => {
  const s = await Ringd.start(t);
  const api = s.api('r');
  await api.create({});
  await api.change(upsert('a'), upsert('b'));
  const c = new RingClient(s.url, 'r', { ...FAST, clientId: 'restart' });
  t.after(() => c.close());
  await waitVersion(c, 2);
  await s.restart();
  await api.change(upsert('c'));
  const st = await waitVersion(c, 3);
  assert.ok(st.reconnects > 0, `reconnects ${st.reconnects}`);
  assert.deepEqual([st.applied, st.refused, st.transport], [2, 0, 'sse']);
  await assertRoutesLikeServer(api, c, 3, 2);
});

test('skips a dead first URL and fails over to the second when the first goes', { skip: SKIP }, async (t) => {
  const s = await Ringd.start(t);
  const api = s.api('r');
  await api.create({});
  await api.change(upsert('a'));
  const p1 = await proxy(t, s);
  const p2 = await proxy(t, s);
  const c = new RingClient([`${await deadUrl()},${p1.url}`, p2.url], 'r', { ...FAST, clientId: 'failover' });
  t.after(() => c.close());
  assert.equal((await waitVersion(c, 2)).server, p1.url);
  await p1.close();
  await waitUntil('the stream on the second URL', () => c.status().server === p2.url);
  await api.change(upsert('b'));
  const st = await waitVersion(c, 3);
  assert.deepEqual([st.server, st.transport], [p2.url, 'sse']);
  assert.ok(st.reconnects > 0);
  await assertRoutesLikeServer(api, c, 3, 2);
});

test('long-polls when streams are refused with 406, and sees every version', { skip: SKIP }, async (t) => {
  const s = await Ringd.start(t);
  const api = s.api('r');
  await api.create({});
  const p = await proxy(t, s);
  p.refuseStreams = true;
  const c = new RingClient(p.url, 'r', { ...FAST, clientId: 'poller' });
  t.after(() => c.close());
  const seen = appliedVersions(c);
  let st = await waitVersion(c, 1);
  assert.deepEqual([st.transport, p.watches], ['long-poll', 1]);
  await api.change(upsert('a'));
  await waitVersion(c, 2);
  // Three versions while a long-poll waits: however they are answered
  // (the newest, with the ones between fetched), each is applied.
  await api.change(upsert('b'));
  await api.change(upsert('c'));
  await api.change(upsert('d', 2));
  st = await waitVersion(c, 5);
  await assertRoutesLikeServer(api, c, 5, 4);
  await c.close();
  assert.deepEqual(seen, [1, 2, 3, 4, 5]);
  assert.deepEqual([st.applied, st.refused, p.watches], [5, 0, 1]);
});

test('long-poll-only fills the gap of versions committed while the proxy answered 503', { skip: SKIP }, async (t) => {
  const s = await Ringd.start(t);
  const api = s.api('r');
  await api.create({});
  await api.change(upsert('a'));
  const p = await proxy(t, s);
  const c = new RingClient(p.url, 'r', { ...FAST, clientId: 'gaps', watchMode: 'long-poll', longPollWait: 100 });
  t.after(() => c.close());
  const seen = appliedVersions(c);
  await waitVersion(c, 2);
  p.down = true;
  await waitUntil('the client to meet the 503', () => c.status().reconnects > 0);
  for (const id of ['b', 'c', 'd']) await api.change(upsert(id));
  p.down = false;
  const st = await waitVersion(c, 5);
  assert.deepEqual([st.transport, st.applied, p.watches, p.fetches], ['long-poll', 4, 0, 2]);
  await assertRoutesLikeServer(api, c, 5, 4);
  await c.close();
  assert.deepEqual(seen, [2, 3, 4, 5]);
  assert.ok(st.lastError instanceof ApiError && st.lastError.status === 503, String(st.lastError));
});

test("acks are visible on the server, with the client's id, kind and fingerprint", { skip: SKIP }, async (t) => {
  const s = await Ringd.start(t);
  const api = s.api('r');
  await api.create({});
  await api.change(upsert('a'), upsert('b'));
  const c = new RingClient(s.url, 'r', { ...FAST, clientId: 'web-3', kind: 'proxy' });
  t.after(() => c.close());
  for (const v of [2, 3]) {
    if (v === 3) await api.change(upsert('c'));
    const st = await c.waitFor((x) => x.acked === v, { signal: AbortSignal.timeout(10_000) });
    const list = await api.do('GET', '/clients', undefined, 200);
    assert.equal(list.fingerprint, st.fingerprint);
    assert.equal(list.clients.length, 1);
    const got = list.clients[0];
    assert.deepEqual(
      [got.client_id, got.version, got.fingerprint, got.lag, got.divergent, got.kind],
      ['web-3', v, st.fingerprint, 0, false, 'proxy'],
    );
  }
});

test('re-acks every ack interval while nothing changes', { skip: SKIP }, async (t) => {
  const s = await Ringd.start(t);
  const api = s.api('r');
  await api.create({});
  const c = new RingClient(s.url, 'r', { ...FAST, clientId: 'reacks', ackInterval: 100 });
  t.after(() => c.close());
  const st = await c.waitFor((x) => x.acks >= 4, { signal: AbortSignal.timeout(10_000) });
  assert.deepEqual([st.version, st.acked, st.ackFailures, st.applied], [1, 1, 0, 1]);
});

test('keeps routing on a deleted ring until it is created again, which arrives as a reset', {
  skip: SKIP,
}, async (t) => {
  const s = await Ringd.start(t);
  const api = s.api('r');
  await api.create({});
  await api.change(upsert('a'));
  await api.change(upsert('b'));
  const c = new RingClient(s.url, 'r', { ...FAST, clientId: 'deleted' });
  t.after(() => c.close());
  /** @type {[string, number, boolean][]} */
  const events = [];
  for (const type of ['deleted', 'applied']) {
    c.addEventListener(type, (e) => {
      const ev = /** @type {import("../../src/client/index.js").RingEvent} */ (e);
      events.push([ev.kind, ev.version, ev.reset]);
    });
  }
  const fp3 = (await waitVersion(c, 3)).fingerprint;
  const owner = c.owner('k');
  events.length = 0;
  await api.do('DELETE', '', undefined, 204);
  await waitUntil('the client to see the deletion', () => c.status().deleted);
  assert.deepEqual([c.status().version, c.status().fingerprint, c.owner('k')], [3, fp3, owner]);
  // Created again: a new history, one node.
  await api.create({});
  await api.change(upsert('z'));
  await waitUntil('the new ring', () => c.status().version === 2 && !c.status().deleted);
  assert.deepEqual([c.owner('k'), c.status().refused], ['z', 0]);
  assert.deepEqual(events[0], ['deleted', 3, false]);
  // The new ring's first version the client saw replaced its history.
  assert.equal(events[1][2], true);
  assert.deepEqual(events[events.length - 1], ['applied', 2, false]);
});
