// The parts of the client that need no ringd: the bound of bounded
// loads, the backoff and its Retry-After rule, option checks and the
// failover of plain requests over fake servers.

import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { test } from 'node:test';
import { BoundedLoad } from '../../src/client/bounded.js';
import { Endpoints, parseRetryAfter, parseUrls } from '../../src/client/endpoints.js';
import {
  ApiError,
  InvalidOptionError,
  RingNotFoundError,
  UnauthorizedError,
  UnreachableError,
} from '../../src/client/errors.js';
import { Backoff, retryAfterWait } from '../../src/client/timing.js';

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

test('after a Retry-After the wait is max(next, min(Retry-After, max) + jitter), at exact values', () => {
  // The largest jitter Backoff draws: 1000 × the largest Math.random().
  const justUnder = 1000 * (1 - 2 ** -53);
  assert.ok(justUnder < 1000);
  /** @type {[next: number, retryAfter: number, max: number, jitter: number, want: number][]} */
  const cases = [
    // What the server asked, plus the jitter, at both its ends.
    [50, 3000, 10_000, 0, 3000],
    [50, 3000, 10_000, justUnder, 3000 + justUnder],
    [50, 1000, 10_000, 250, 1250],
    // Cut to the backoff's maximum, the jitter still added.
    [50, 3_600_000, 10_000, 0, 10_000],
    [50, 3_600_000, 10_000, justUnder, 10_000 + justUnder],
    [50, 10_000, 10_000, 0, 10_000],
    [50, Number(2n ** 64n - 1n) * 1000, 10_000, justUnder, 10_000 + justUnder],
    [100, 5000, 200, 300, 500],
    // The backoff's own wait wins when it is the longer one.
    [6000, 1000, 10_000, justUnder, 6000],
    [6000, 5000, 10_000, 999, 6000],
    [6000, 5500, 10_000, 600, 6100],
    // Retry-After: 0 still waits the jitter.
    [10, 0, 10_000, 400, 400],
    [10, 0, 10_000, 0, 10],
  ];
  for (const [next, retryAfter, max, jitter, want] of cases) {
    assert.equal(retryAfterWait(next, retryAfter, max, jitter), want, JSON.stringify([next, retryAfter, max, jitter]));
  }
});

test('a refusal with Retry-After waits within the exact bounds and advances the backoff', () => {
  // Fixed draws: the backoff's wait and the jitter come from random().
  const fixed = new Backoff(100, 10_000, () => 0.5);
  assert.equal(fixed.afterRefusal(3000), 3500); // max(75, 3000 + 500)
  assert.equal(fixed.afterRefusal(3_600_000), 10_500); // max(150, 10,000 + 500)
  assert.equal(fixed.step, 400);
  const slow = new Backoff(8000, 64_000, () => 0);
  assert.equal(slow.afterRefusal(1000), 4000); // the backoff's 4,000 over 1,000 + 0
  assert.equal(slow.afterRefusal(1000), 8000);
  // Real draws.
  for (let i = 0; i < 2000; i++) {
    const b = new Backoff(100, 10_000);
    let w = b.afterRefusal(3000);
    assert.ok(w >= 3000 && w < 4000, `Retry-After 3 s: waited ${w}, want [3000, 4000)`);
    w = b.afterRefusal(3_600_000);
    assert.ok(w >= 10_000 && w < 11_000, `Retry-After 1 h: waited ${w}, want [10000, 11000)`);
    w = b.afterRefusal(0);
    assert.ok(w >= 200 && w < 1000, `Retry-After 0: waited ${w}, want [200, 1000)`);
    // Three refusals advanced the step 100 → 200 → 400 → 800 ms.
    assert.equal(b.step, 800);
    b.reset();
    assert.equal(b.step, 100);
  }
  for (let i = 0; i < 200; i++) {
    // The backoff wins when longer: steps of 8 and 16 s wait [4, 8) and
    // [8, 16) s, above the ask of 1 s plus up to 1 s.
    const b = new Backoff(8000, 64_000);
    let w = b.afterRefusal(1000);
    assert.ok(w >= 4000 && w < 8000, `waited ${w}, want [4000, 8000)`);
    w = b.afterRefusal(1000);
    assert.ok(w >= 8000 && w < 16_000, `waited ${w}, want [8000, 16000)`);
  }
});

test('Retry-After is read in delta-seconds only', () => {
  /** @type {[string | null, number | undefined][]} */
  const cases = [
    ['1', 1000],
    ['10', 10_000],
    [' 7 ', 7000],
    ['\t7', 7000],
    ['0', 0],
    ['007', 7000],
    ['3600', 3_600_000],
    ['18446744073709551615', Number(2n ** 64n - 1n) * 1000], // 2^64 - 1 s: the longest wait
    ['18446744073709551616', undefined], // past it: garbage rather than a wait
    [null, undefined],
    ['', undefined],
    ['   ', undefined],
    ['-1', undefined],
    ['+5', undefined],
    ['1.5', undefined],
    ['5s', undefined],
    ['1 2', undefined],
    ['1e3', undefined],
    ['Wed, 21 Oct 2015 07:28:00 GMT', undefined],
    ['soon', undefined],
  ];
  for (const [header, want] of cases) assert.equal(parseRetryAfter(header), want, JSON.stringify(header));
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

test("an error answer carries its Retry-After, and a 503's other servers are tried first", async (t) => {
  /** @type {string[]} */
  const hits = [];
  const full = await fake(t, (req, res) => {
    hits.push(`full ${req.url}`);
    const problem = { type: 'urn:ringd:problem:at-capacity', title: 'At capacity', status: 503, detail: 'full' };
    res.writeHead(503, { 'Content-Type': 'application/problem+json', 'Retry-After': '7' }).end(JSON.stringify(problem));
  });
  const other = await fake(t, (req, res) => {
    hits.push(`other ${req.url}`);
    if (req.url === '/date') {
      res.writeHead(429, { 'Retry-After': 'Wed, 21 Oct 2015 07:28:00 GMT' }).end('slow down');
    } else if (req.url === '/429') {
      res.writeHead(429, { 'Retry-After': '3' }).end('slow down');
    } else {
      res.writeHead(503, { 'Retry-After': '2' }).end('busy');
    }
  });
  const signal = new AbortController().signal;
  const eps = new Endpoints([full, other], { requestTimeout: 2000 });
  // Both refuse: the error is the last one tried, with its Retry-After.
  await assert.rejects(eps.call('GET', '/w', { signal }), (e) => {
    assert.ok(e instanceof ApiError);
    assert.deepEqual([e.status, e.url, e.retryAfter], [503, `${other}/w`, 2000]);
    return true;
  });
  assert.deepEqual(hits.splice(0), ['full /w', 'other /w']);
  const alone = new Endpoints([full], { requestTimeout: 2000 });
  await assert.rejects(alone.call('GET', '/w', { signal }), (e) => {
    assert.ok(e instanceof ApiError);
    assert.deepEqual([e.status, e.slug, e.retryAfter], [503, 'at-capacity', 7000]);
    return true;
  });
  hits.length = 0;
  // A 429 is the request's own answer: not tried elsewhere.
  const first = new Endpoints([other, full], { requestTimeout: 2000 });
  await assert.rejects(first.call('GET', '/429', { signal }), (e) => {
    assert.ok(e instanceof ApiError);
    assert.deepEqual([e.status, e.retryAfter], [429, 3000]);
    return true;
  });
  await assert.rejects(first.call('GET', '/date', { signal }), (e) => {
    assert.ok(e instanceof ApiError);
    assert.deepEqual([e.status, e.retryAfter], [429, undefined]);
    return true;
  });
  assert.deepEqual(hits, ['other /429', 'other /date']);
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
