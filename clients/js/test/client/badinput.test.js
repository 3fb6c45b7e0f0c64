// Bad input never reaches the lookups: a snapshot whose fingerprint is
// not its placement's, undecodable events and bodies, a stream that
// breaks the format, a wrong token. Each is a typed error, the placement
// held stays, and nothing becomes an unhandled rejection.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import {
  MalformedError,
  RingClient,
  SnapshotRefusedError,
  UnauthorizedError,
  WaitError,
} from '../../src/client/index.js';
import { FAST, fakeServer, KEYS, remove, Ringd, SKIP, upsert, waitVersion } from './ringd.js';

/** @type {unknown[]} */
const unhandled = [];
const onUnhandled = (/** @type {unknown} */ e) => unhandled.push(e);
process.on('unhandledRejection', onUnhandled);
after(() => {
  process.off('unhandledRejection', onUnhandled);
  assert.deepEqual(unhandled, []);
});

const DOCTORED = 'ab'.repeat(32);

/**
 * Genuine snapshots of ring r from a real ringd: node sets {a,b},
 * {a,b,c}, {a,c} and {c} at its versions 2 to 5, and its server.
 * @param {import("node:test").TestContext} t
 */
async function genuine(t) {
  const s = await Ringd.start(t);
  const api = s.api('r');
  await api.create({ algorithm: 'ring' });
  await api.change(upsert('a'), upsert('b'));
  await api.change(upsert('c'));
  await api.change(remove('b'));
  await api.change(remove('a'));
  /** @type {Record<number, any>} */
  const snaps = {};
  for (const v of [2, 3, 4, 5]) snaps[v] = await api.do('GET', `/snapshots/${v}`, undefined, 200);
  /**
   * Real version `real` renumbered as `as`, its fingerprint replaced if given.
   * @param {number} real @param {number} as @param {string} [fingerprint]
   */
  const json = (real, as, fingerprint) =>
    JSON.stringify({ ...snaps[real], version: as, fingerprint: fingerprint ?? snaps[real].fingerprint });
  return { api, json, fp: (/** @type {number} */ v) => /** @type {string} */ (snaps[v].fingerprint) };
}

/**
 * A fake ringd: connection i to the watch gets scripts[i] (the last
 * repeats), held open if it ends an event; GET …/snapshot answers
 * polls[i] likewise. It records each watch's Last-Event-ID.
 * @param {import("node:test").TestContext} t
 * @param {{ scripts?: (string | Uint8Array)[], polls?: string[] }} script
 */
async function fakeRingd(t, { scripts = [], polls = [] }) {
  /** @type {string[]} */
  const resumes = [];
  let pollCount = 0;
  const url = await fakeServer(t, (req, res) => {
    if (req.url === '/v1/rings/r/watch' && scripts.length > 0) {
      resumes.push(String(req.headers['last-event-id'] ?? ''));
      const body = scripts[Math.min(resumes.length, scripts.length) - 1];
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write(body);
      if (!Buffer.from(body).toString('latin1').endsWith('\n\n')) res.end();
      return;
    }
    if (req.url?.startsWith('/v1/rings/r/snapshot') && polls.length > 0) {
      const body = polls[Math.min(pollCount++, polls.length - 1)];
      return void res.writeHead(200, { 'Content-Type': 'application/json' }).end(body);
    }
    res
      .writeHead(404, { 'Content-Type': 'application/problem+json' })
      .end('{"type":"urn:ringd:problem:not-found","title":"Not found","status":404,"detail":"no route"}');
  });
  return { url, resumes };
}

/** @param {string} type @param {number | null} id @param {string} data */
const event = (type, id, data) => `event: ${type}\n${id === null ? '' : `id: ${id}\n`}data: ${data}\n\n`;

test('refuses doctored and malformed snapshots with typed errors and resumes after them', { skip: SKIP }, async (t) => {
  const g = await genuine(t);
  const first = Buffer.concat([
    Buffer.from(
      event('snapshot', 1, g.json(2, 1)) +
        `: a comment\r\nevent: snapshot\r\nid: 2\r\ndata: ${g.json(3, 2, DOCTORED)}\r\n\r\n` +
        event('snapshot', 3, '{"ring": "r", "version": ') +
        event('rollout', null, '{}') + // not about versions: ignored
        event('snapshot', 4, g.json(4, 4)) +
        'event: snapshot\ndata: ',
    ),
    Buffer.from([0xff, 0xfe, 0x0a, 0x0a]),
  ]);
  const fake = await fakeRingd(t, { scripts: [first, event('snapshot', 5, g.json(5, 5))] });
  const c = new RingClient(fake.url, 'r', { ...FAST, clientId: 'doctored', ack: false, watchMode: 'sse' });
  t.after(() => c.close());
  /** @type {import("../../src/client/index.js").RingEvent[]} */
  const events = [];
  for (const type of ['refused', 'disconnected']) {
    c.addEventListener(type, (e) => events.push(/** @type {import("../../src/client/index.js").RingEvent} */ (e)));
  }
  const st = await waitVersion(c, 5);
  assert.deepEqual([st.fingerprint, st.refused, st.applied, st.reconnects], [g.fp(5), 2, 3, 1]);
  assert.deepEqual(fake.resumes, ['', '4']);
  await c.close();
  assert.deepEqual(
    events.map((e) => [e.kind, e.version]),
    [
      ['refused', 2],
      ['refused', 3],
      ['disconnected', 0],
    ],
  );
  // Version 2: its placement does not hash to the stated fingerprint.
  const [v2, v3, broken] = events.map((e) => e.error);
  assert.ok(v2 instanceof SnapshotRefusedError && v2.version === 2 && v2.ring === 'r', String(v2));
  assert.ok(v2.cause instanceof Error && v2.cause.message.includes(DOCTORED), String(v2.cause));
  // Version 3: undecodable.
  assert.ok(v3 instanceof SnapshotRefusedError && v3.version === 3 && v3.cause instanceof MalformedError, String(v3));
  // The invalid UTF-8 broke the stream.
  assert.ok(broken instanceof MalformedError && broken.what === `${fake.url} watch stream`, String(broken));
});

test('keeps the placement held while refusing, on a stream and on long-polls', { skip: SKIP }, async (t) => {
  const g = await genuine(t);
  const owners = (await g.api.lookup(2, KEYS)).map((l) => l[0]);
  const fake = await fakeRingd(t, {
    scripts: [event('snapshot', 1, g.json(2, 1)) + event('snapshot', 2, g.json(5, 2, '0'.repeat(64)))],
    polls: [g.json(2, 1), '{not json', g.json(5, 2, '0'.repeat(64))],
  });
  for (const watchMode of /** @type {const} */ (['sse', 'long-poll'])) {
    const c = new RingClient(fake.url, 'r', { ...FAST, clientId: 'keeps', ack: false, watchMode });
    t.after(() => c.close());
    const st = await c.waitFor((s) => s.refused >= 2 || (watchMode === 'sse' && s.refused === 1), {
      signal: AbortSignal.timeout(10_000),
    });
    assert.deepEqual([st.version, st.fingerprint, c.current()?.fingerprint], [1, g.fp(2), g.fp(2)], watchMode);
    assert.ok(st.lastError instanceof SnapshotRefusedError, String(st.lastError));
    assert.deepEqual(
      KEYS.map((k) => c.owner(k)),
      owners,
      watchMode,
    );
    await c.close();
  }
});

test('a wrong token is an UnauthorizedError with the problem document', { skip: SKIP }, async (t) => {
  const s = await Ringd.start(t, ['--read-token', 'right-read', '--admin-token', 'right-admin']);
  await s.api('r', 'right-admin').create({});
  const c = new RingClient(s.url, 'r', { ...FAST, clientId: 'wrong-token', token: 'wrong' });
  t.after(() => c.close());
  await assert.rejects(c.ready({ signal: AbortSignal.timeout(2000) }), (e) => {
    assert.ok(e instanceof WaitError, String(e));
    assert.equal(/** @type {DOMException} */ (e.reason).name, 'TimeoutError');
    const last = e.lastError;
    assert.ok(last instanceof UnauthorizedError, String(last));
    assert.deepEqual([last.status, last.slug, last.url], [401, 'unauthorized', `${s.url}/v1/rings/r/watch`]);
    return true;
  });
  const st = c.status();
  assert.equal(st.version, 0);
  assert.ok(st.reconnects > 0);
  assert.equal(c.owner('k'), null);
  await c.close();
  // close() ends every wait with a WaitError saying so.
  await assert.rejects(
    c.ready(),
    (e) => e instanceof WaitError && e.reason instanceof Error && e.reason.name === 'ClosedError',
  );
  const good = new RingClient(s.url, 'r', { ...FAST, clientId: 'right-token', token: 'right-read' });
  t.after(() => good.close());
  await waitVersion(good, 1);
});
