// Where the shared vector files are, read in place: the Rust tests and the
// Go and Python clients read the same files.

import { readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** tests/placement/vectors, from clients/js/test. */
export const VECTORS = fileURLToPath(new URL('../../../tests/placement/vectors/', import.meta.url));

/**
 * Every file under the vectors directory, as sorted paths relative to it.
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
