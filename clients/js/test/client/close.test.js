// close() ends a client promptly while its event stream is open, also
// after garbage collections: on Node.js 20 a fetch can stop hearing its
// abort signal after one (nodejs/node#55428), and a pending read of the
// stream then waited for the server's next keep-alive, 15 s later.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { RingClient } from '../../src/client/index.js';
import { FAST, Ringd, SKIP, upsert, waitVersion } from './ringd.js';

setFlagsFromString('--expose-gc');
const gc = /** @type {() => void} */ (runInNewContext('gc'));

test('close() returns well before the next keep-alive after fetches and collections', { skip: SKIP }, async (t) => {
  const s = await Ringd.start(t);
  const api = s.api('r');
  await api.create({ algorithm: 'ring' });
  const v = await api.change(upsert('a'), upsert('b'));
  const keys = Array.from({ length: 10_000 }, (_, i) => `k${i}`);
  for (let i = 0; i < 3; i++) {
    const c = new RingClient([s.url], 'r', { ...FAST, clientId: `close-${i}`, ack: false, watchMode: 'sse' });
    await waitVersion(c, v);
    assert.equal(c.status().transport, 'sse');
    // What brought it on: large responses read elsewhere, then collections.
    for (let j = 0; j < 3; j++) {
      await api.lookup(v, keys);
      gc();
    }
    const started = performance.now();
    await c.close();
    const took = performance.now() - started;
    // The keep-alive comes every 15 s; an abort that reaches the stream
    // ends it in milliseconds.
    assert.ok(took < 5_000, `close() took ${Math.round(took)} ms`);
  }
});
