// Every file in tests/placement/vectors, read in place, through the
// placement core in Node.js: the placement vectors (spec 12), the shared
// twemproxy hashes and the results published by the original
// implementations. A file no check recognises fails the test, so a new
// vector file cannot be skipped silently.

import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { expectedOf } from './vector-expect.js';
import { kindOf, runVector } from './vector-runner.js';

export const VECTORS = fileURLToPath(new URL('../../../tests/placement/vectors/', import.meta.url));

/**
 * Every file under the vectors directory, as paths relative to it.
 * @returns {Promise<string[]>}
 */
export async function vectorFiles() {
  const entries = await readdir(VECTORS, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) =>
      relative(VECTORS, join(e.parentPath ?? e.path, e.name))
        .split(sep)
        .join('/'),
    )
    .sort();
}

const files = await vectorFiles();

test('the vector files are all there', () => {
  // 83 placement vectors, the twemproxy hashes and three reference files
  // when this was written; more may come, none may be left unchecked.
  assert.ok(files.length >= 87, `found ${files.length} vector files`);
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
