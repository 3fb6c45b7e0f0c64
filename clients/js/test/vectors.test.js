// Every file in tests/placement/vectors, read in place, through the
// placement core in Node.js: the placement vectors (spec 12), the shared
// twemproxy hashes and the results published by the original
// implementations. A file no check recognises fails the test, so a new
// vector file cannot be skipped silently.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { ALGORITHMS } from '../src/placement/index.js';
import { expectedOf } from './vector-expect.js';
import { VECTORS, vectorFiles } from './vector-files.js';
import { kindOf, runVector } from './vector-runner.js';

const files = await vectorFiles();

test('the vector files are all there', () => {
  // 106 placement vectors, the twemproxy hashes and three reference files
  // when this was written; more may come, none may be left unchecked.
  assert.ok(files.length >= 110, `found ${files.length} vector files`);
  for (const rel of files) assert.notEqual(kindOf(rel), null, `${rel}: not a vector file this test recognises`);
  // Every algorithm has its files, envoy_ring_hash these eleven and
  // envoy_maglev these ten (spec 12).
  for (const algorithm of ALGORITHMS) {
    assert.ok(
      files.some((f) => f.startsWith(`${algorithm}-`)),
      `no vector file for ${algorithm}`,
    );
  }
  const envoy = files.filter((f) => f.startsWith('envoy_ring_hash-'));
  assert.deepEqual(
    envoy,
    [
      'colliding',
      'forty',
      'hash-keys',
      'no-active',
      'nodes-1000',
      'ramped',
      'single',
      'six-hosts',
      'two-hosts',
      'weighted',
      'zoned',
    ].map((shape) => `envoy_ring_hash-${shape}.json`),
  );
  assert.deepEqual(
    files.filter((f) => f.startsWith('envoy_maglev-')),
    [
      'colliding',
      'five-and-one',
      'forty',
      'no-active',
      'nodes-1000',
      'ramped',
      'single',
      'six-hosts',
      'weighted',
      'zoned',
    ].map((shape) => `envoy_maglev-${shape}.json`),
  );
});

for (const rel of files) {
  test(rel, async () => {
    const file = JSON.parse(await readFile(join(VECTORS, rel), 'utf8'));
    const expected = expectedOf(rel, file);
    const actual = await runVector(rel, file);
    for (const [field, want] of Object.entries(expected)) {
      assert.deepStrictEqual(actual[field], want, `${rel}: ${field}`);
    }
  });
}
