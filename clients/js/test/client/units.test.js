// The parts of the client that need no ringd: the bound of bounded
// loads, the backoff, option checks and the failover of plain requests
// over fake servers.

import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { test } from 'node:test';
import { BoundedLoad } from '../../src/client/bounded.js';
import { Endpoints, parseUrls } from '../../src/client/endpoints.js';
import {
  ApiError,
  InvalidOptionError,
  RingNotFoundError,
  UnauthorizedError,
  UnreachableError,
} from '../../src/client/errors.js';
import { Backoff } from '../../src/client/timing.js';

test('the bound is the ceiling of factor times the average', () => {
  const b = new BoundedLoad(1.25);
  const one = new BoundedLoad(1);
  assert.equal(b.bound(99, 10), 13);
  assert.equal(b.bound(0, 4), 1);
  assert.equal(one.bound(7, 8), 1);
  assert.equal(b.bound(5, 0), 0);
  assert.equal(b.bound(2n ** 64n - 1n, 1), Infinity);
  for (const f of [0.99, -1, NaN, Infinity]) {
    assert.throws(() => new BoundedLoad(f), InvalidOptionError);
  }
});

test('a pick skips loaded nodes in preference order', () => {
  const order = ['c', 'a', 'f', 'b', 'e', 'd'];
  /** @type {number[]} */
  const asked = [];
  const target = {
    activeNodes: ['a', 'b', 'c', 'd', 'e', 'f'],
    /** @param {string | Uint8Array} _key @param {number} r */
    preferenceList(_key, r) {
      asked.push(r);
      return order.slice(0, r);
    },
  };
  const b = new BoundedLoad(1.25);
  assert.equal(
    b.pick(target, 'hot', () => 0),
    'c',
  );
  // 12 in flight, all on the first two: bound ceil(1.25 × 13 / 6) = 3.
  const busy = (/** @type {string} */ n) => (n === 'c' || n === 'a' ? 6 : 0);
  assert.equal(b.pick(target, 'hot', busy), 'f');
  // At factor 1, 30 in flight on the five before d: bound ceil(31 / 6)
  // = 6, which each of them has; the walk widens the list to all six.
  asked.length = 0;
  const all = (/** @type {string} */ n) => (n === 'd' ? 0 : 6);
  assert.equal(new BoundedLoad(1).pick(target, 'hot', all), 'd');
  assert.deepEqual(asked, [4, 6]);
  assert.equal(
    b.pick({ activeNodes: [], preferenceList: () => [] }, 'k', () => 0),
    null,
  );
});

test("the backoff doubles to its maximum, each wait in the step's upper half", () => {
  const low = new Backoff(100, 1000, () => 0);
  assert.deepEqual(
    [1, 2, 3, 4, 5].map(() => low.next()),
    [50, 100, 200, 400, 500],
  );
  low.reset();
  assert.equal(low.next(), 50);
  const high = new Backoff(100, 1000, () => 0.999);
  assert.equal(high.next(), 99.95);
});

test('server URLs are split, trimmed and checked', () => {
  assert.deepEqual(parseUrls(['http://a:1/, https://b:2', 'http://c']), ['http://a:1', 'https://b:2', 'http://c']);
  for (const bad of [[], [''], ['localhost:1'], ['http://'], ['ftp://a'], ['http://a b']]) {
    assert.throws(() => parseUrls(bad), InvalidOptionError, JSON.stringify(bad));
  }
});

/**
 * A fake server answering every request with handler; closed after the test.
 * @param {import("node:test").TestContext} t
 * @param {import("node:http").RequestListener} handler
 */
async function fake(t, handler) {
  const server = createServer(handler);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  t.after(() => server.close());
  const addr = /** @type {import("node:net").AddressInfo} */ (server.address());
  return `http://127.0.0.1:${addr.port}`;
}

/** A loopback URL nothing listens on. */
async function deadUrl() {
  const s = createServer();
  await new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve(undefined)));
  const port = /** @type {import("node:net").AddressInfo} */ (s.address()).port;
  await new Promise((resolve) => s.close(() => resolve(undefined)));
  return `http://127.0.0.1:${port}`;
}

test('requests fail over past dead servers and 503s, and stay on the one that answered', async (t) => {
  let busyHits = 0;
  const busy = await fake(t, (_req, res) => {
    busyHits++;
    res.writeHead(503).end('busy');
  });
  /** @type {string[]} */
  const auth = [];
  const good = await fake(t, (req, res) => {
    auth.push(req.headers.authorization ?? '');
    res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"ok":true}');
  });
  const eps = new Endpoints([await deadUrl(), busy, good], { token: 'tok', requestTimeout: 2000 });
  const signal = new AbortController().signal;
  const a = await eps.call('GET', '/x', { signal });
  assert.equal(a.server, good);
  assert.equal(new TextDecoder().decode(a.body), '{"ok":true}');
  assert.equal(busyHits, 1);
  // The next request starts at the server that answered.
  await eps.call('POST', '/y', { signal, body: '{}' });
  assert.equal(busyHits, 1);
  assert.deepEqual(auth, ['Bearer tok', 'Bearer tok']);
  eps.demote(good);
  assert.equal(eps.first(), eps.urls[0]);
});

test('an error answer is a typed error carrying the problem document', async (t) => {
  const url = await fake(t, (req, res) => {
    const problem =
      req.url === '/401'
        ? { type: 'urn:ringd:problem:unauthorized', title: 'Unauthorized', status: 401, detail: 'send the read token' }
        : {
            type: 'urn:ringd:problem:ring-not-found',
            title: 'Not found',
            status: 404,
            detail: 'no ring r',
            field: 'ring',
          };
    res.writeHead(problem.status, { 'Content-Type': 'application/problem+json' }).end(JSON.stringify(problem));
  });
  const eps = new Endpoints([url], { requestTimeout: 2000 });
  const signal = new AbortController().signal;
  await assert.rejects(eps.call('GET', '/401', { signal }), (e) => {
    assert.ok(e instanceof UnauthorizedError && e instanceof ApiError);
    assert.deepEqual(
      [e.status, e.slug, e.title, e.detail, e.field, e.url],
      [401, 'unauthorized', 'Unauthorized', 'send the read token', undefined, `${url}/401`],
    );
    return true;
  });
  await assert.rejects(eps.call('GET', '/r', { signal }), (e) => {
    assert.ok(e instanceof RingNotFoundError);
    assert.deepEqual([e.status, e.type, e.field], [404, 'urn:ringd:problem:ring-not-found', 'ring']);
    return true;
  });
});

test('no server answering is an UnreachableError naming them', async () => {
  const dead = await deadUrl();
  const eps = new Endpoints([dead], { requestTimeout: 2000 });
  await assert.rejects(eps.call('GET', '/', { signal: new AbortController().signal }), (e) => {
    assert.ok(e instanceof UnreachableError);
    assert.deepEqual(e.urls, [dead]);
    return true;
  });
});

test('a request past its time limit is an UnreachableError caused by a TimeoutError', async (t) => {
  const url = await fake(t, () => {}); // never answers
  const eps = new Endpoints([url], { requestTimeout: 100 });
  await assert.rejects(eps.call('GET', '/', { signal: new AbortController().signal }), (e) => {
    assert.ok(e instanceof UnreachableError);
    assert.equal(/** @type {DOMException} */ (e.cause).name, 'TimeoutError');
    return true;
  });
  // The caller's own abort is passed on as is.
  const caller = new AbortController();
  caller.abort(new Error('mine'));
  await assert.rejects(eps.call('GET', '/', { signal: caller.signal }), { message: 'mine' });
});
