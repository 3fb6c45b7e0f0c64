// The console imports the encoding, ownership and fingerprint modules as
// they are, without a bundler, so a bare specifier (an npm package) cannot
// resolve there. This test follows their import graph and fails if any
// module they reach, directly or not, imports anything but a relative path.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { importGraph, isRelative, specifiers } from './imports.js';

const PLACEMENT = new URL('../src/placement/', import.meta.url);
const CONSOLE_MODULES = ['encoding.js', 'ownership.js', 'fingerprint.js'];

/**
 * @param {URL} entry
 * @returns {Promise<Map<string, string[]>>}
 */
const graph = (entry) => importGraph([entry]);

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
      const bare = imports.filter((s) => !isRelative(s));
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
