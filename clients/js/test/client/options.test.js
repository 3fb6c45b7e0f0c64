// RingClient refuses malformed settings at once, with InvalidOptionError,
// and answers nothing before its first version.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidOptionError, RingClient, WaitError } from '../../src/client/index.js';

test('malformed settings are refused with InvalidOptionError', () => {
  /** @type {[string, string | string[], string, import("../../src/client/client.js").RingClientOptions][]} */
  const cases = [
    ['no URL', [], 'r', {}],
    ['no scheme', 'localhost:1', 'r', {}],
    ['bad ring', 'http://a', 'Bad Ring', {}],
    ['bad client id', 'http://a', 'r', { clientId: 'no spaces' }],
    ['long wait', 'http://a', 'r', { longPollWait: 300_001 }],
    ['backoff', 'http://a', 'r', { backoffMin: 1000, backoffMax: 1 }],
    ['zero idle', 'http://a', 'r', { idleTimeout: 0 }],
    ['negative owner cache', 'http://a', 'r', { ownerCache: -1 }],
    ['fractional owner cache', 'http://a', 'r', { ownerCache: 2.5 }],
    // @ts-expect-error: a kind the types refuse, as plain JavaScript may pass
    ['kind', 'http://a', 'r', { kind: 'other' }],
    // @ts-expect-error: likewise a watch mode
    ['mode', 'http://a', 'r', { watchMode: 'poll' }],
  ];
  for (const [name, urls, ring, options] of cases) {
    assert.throws(() => new RingClient(urls, ring, options), InvalidOptionError, name);
  }
});

test('before its first version a client answers nothing, and a wait ends on its signal', async () => {
  // Port 9 (discard) on loopback: nothing answers there.
  const c = new RingClient('http://127.0.0.1:9', 'r', { clientId: 'idle', ack: false, backoffMin: 50, backoffMax: 50 });
  try {
    assert.equal(c.owner('k'), null);
    assert.deepEqual(c.preferenceList('k', 3), []);
    assert.deepEqual(c.handoff('k'), { ownerNow: null, ownerBefore: null, version: 0, versionBefore: 0, moved: false });
    assert.equal(c.current(), null);
    const reason = new Error('gave up');
    const giveUp = new AbortController();
    setTimeout(() => giveUp.abort(reason), 200);
    await assert.rejects(c.ready({ signal: giveUp.signal }), (e) => {
      assert.ok(e instanceof WaitError);
      assert.equal(e.reason, reason);
      assert.equal(e.lastError?.name, 'UnreachableError');
      return true;
    });
  } finally {
    await c.close();
  }
  assert.equal(c.status().transport, 'connecting');
});
