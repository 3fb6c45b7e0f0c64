// The console imports the encoding, ownership and fingerprint modules as
// they are, without a bundler, so a bare specifier (an npm package) cannot
// resolve there. This test follows their import graph and fails if any
// module they reach, directly or not, imports anything but a relative path.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';

const PLACEMENT = new URL('../src/placement/', import.meta.url);
const CONSOLE_MODULES = ['encoding.js', 'ownership.js', 'fingerprint.js'];

/**
 * The specifiers a module imports or re-exports, statically or not.
 * Comments are dropped first, so JSDoc's import('…') types do not count.
 * @param {string} source
 * @returns {string[]}
 */
export function specifiers(source) {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
  const found = [];
  const patterns = [
    /\bimport\s+(?:[\w*{}\s,$]+\s+from\s+)?['"]([^'"]+)['"]/g,
    /\bexport\s+(?:\*(?:\s+as\s+\w+)?|\{[^}]*\})\s+from\s+['"]([^'"]+)['"]/g,
    /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
  ];
  for (const re of patterns) for (const m of code.matchAll(re)) found.push(m[1]);
  return found;
}

/**
 * Every module reachable from `entry` and, for each, what it imports.
 * @param {URL} entry
 * @returns {Promise<Map<string, string[]>>}
 */
async function graph(entry) {
  /** @type {Map<string, string[]>} */
  const seen = new Map();
  const queue = [entry];
  while (queue.length > 0) {
    const url = /** @type {URL} */ (queue.pop());
    if (seen.has(url.href)) continue;
    const imports = specifiers(await readFile(url, 'utf8'));
    seen.set(url.href, imports);
    for (const s of imports) if (s.startsWith('./') || s.startsWith('../')) queue.push(new URL(s, url));
  }
  return seen;
}

test('the parser finds every form of import', () => {
  const source = `
    import a from 'pkg-a';
    import { b, c as d } from "./b.js";
    import * as e from 'pkg-e';
    import 'pkg-side-effect';
    export { f } from './f.js';
    export * from 'pkg-g';
    const h = await import('pkg-h');
    /** @typedef {import('pkg-in-a-comment').T} T */
    // import x from 'pkg-in-a-line-comment';
  `;
  assert.deepEqual(specifiers(source).sort(), [
    './b.js',
    './f.js',
    'pkg-a',
    'pkg-e',
    'pkg-g',
    'pkg-h',
    'pkg-side-effect',
  ]);
});

for (const name of CONSOLE_MODULES) {
  test(`${name} reaches no npm package`, async () => {
    const modules = await graph(new URL(name, PLACEMENT));
    for (const [url, imports] of modules) {
      const bare = imports.filter((s) => !s.startsWith('./') && !s.startsWith('../'));
      assert.deepEqual(
        bare,
        [],
        `${url.slice(PLACEMENT.href.length)}, reached from ${name}, imports ${bare.join(', ')}`,
      );
    }
  });
}

test('the key hashes do reach npm packages (the graph is followed)', async () => {
  const modules = await graph(new URL('placement.js', PLACEMENT));
  const all = [...modules.values()].flat();
  assert.ok(all.includes('hash-wasm') && all.includes('@multiformats/murmur3'));
});
