// Every file in tests/placement/vectors, read in place, through the
// placement core in Node.js: the placement vectors (spec 12), the shared
// twemproxy hashes and the results published by the original
// implementations. A file no check recognises fails the test, so a new
// vector file cannot be skipped silently.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { expectedOf } from './vector-expect.js';
import { VECTORS, vectorFiles } from './vector-files.js';
import { kindOf, runVector } from './vector-runner.js';

const files = await vectorFiles();

test('the vector files are all there', () => {
  // 85 placement vectors, the twemproxy hashes and three reference files
  // when this was written; more may come, none may be left unchecked.
  assert.ok(files.length >= 89, `found ${files.length} vector files`);
  for (const rel of files) assert.notEqual(kindOf(rel), null, `${rel}: not a vector file this test recognises`);
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
