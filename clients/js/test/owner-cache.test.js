// OwnerCache answers as its placement does, remembers the last `entries`
// string keys (first in, first out) and never the others.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OwnerCache, build } from '../src/placement/index.js';

const NODES = ['a', 'b', 'c', 'd', 'e'].map((id, i) => ({ id, weight: i + 1 }));

/** A real placement whose owner() calls are counted. */
async function counted() {
  const placement = await build({ algorithm: 'ring' }, NODES);
  const seen = { calls: 0 };
  const owner = placement.owner.bind(placement);
  placement.owner = (key) => {
    seen.calls++;
    return owner(key);
  };
  return { placement, seen };
}

test('OwnerCache gives the placement’s answers', async () => {
  const placement = await build({ algorithm: 'ring' }, NODES);
  const cache = new OwnerCache(placement, 100);
  const keys = Array.from({ length: 1000 }, (_, i) => `user:${i % 300}`);
  for (const key of keys) assert.equal(cache.owner(key), placement.owner(key), key);
  const bytes = new TextEncoder().encode('user:7');
  assert.equal(cache.owner(bytes), placement.owner('user:7'));
  assert.equal(cache.placement, placement);
});

test('OwnerCache remembers the last entries string keys, first in first out', async () => {
  const { placement, seen } = await counted();
  const cache = new OwnerCache(placement, 3);
  for (const key of ['k1', 'k2', 'k3', 'k1', 'k2', 'k3']) cache.owner(key);
  assert.equal(seen.calls, 3);
  cache.owner('k4'); // evicts k1, the oldest
  assert.equal(seen.calls, 4);
  cache.owner('k2');
  cache.owner('k3');
  cache.owner('k4');
  assert.equal(seen.calls, 4);
  cache.owner('k1');
  assert.equal(seen.calls, 5);
});

test('OwnerCache computes bytes and long keys every time', async () => {
  const { placement, seen } = await counted();
  const cache = new OwnerCache(placement, 10);
  const bytes = new TextEncoder().encode('k');
  const long = 'x'.repeat(241);
  for (let i = 0; i < 3; i++) {
    cache.owner(bytes);
    cache.owner(long);
  }
  assert.equal(seen.calls, 6);
  cache.owner('x'.repeat(240));
  cache.owner('x'.repeat(240));
  assert.equal(seen.calls, 7);
});

test('OwnerCache stops remembering while it does not pay, and tries again', async () => {
  const { placement, seen } = await counted();
  // 4 entries: trials of 8 lookups, idle spells of 256.
  const cache = new OwnerCache(placement, 4);
  for (let i = 0; i < 8; i++) cache.owner(`k${i}`);
  assert.deepEqual([seen.calls, cache.active], [8, true]);
  // No hit in the trial: the next 256 lookups bypass the memo, even of a hot key.
  for (let i = 0; i < 256; i++) cache.owner('hot');
  assert.deepEqual([seen.calls, cache.active], [264, false]);
  // A new trial: 'hot' is computed once, then remembered.
  for (let i = 0; i < 8; i++) cache.owner('hot');
  assert.deepEqual([seen.calls, cache.active], [265, true]);
  // 7 hits of 8 pay: the memo stays in use, and keeps 'hot'.
  for (let i = 0; i < 100; i++) cache.owner('hot');
  assert.deepEqual([seen.calls, cache.active], [265, true]);
});

test('OwnerCache refuses a size that is not 1 to 2^24', async () => {
  const placement = await build({ algorithm: 'ring' }, NODES);
  for (const entries of [0, -1, 1.5, 2 ** 24 + 1, Number.NaN]) {
    assert.throws(() => new OwnerCache(placement, entries), RangeError, String(entries));
  }
  assert.doesNotThrow(() => new OwnerCache(placement, 2 ** 24));
});
