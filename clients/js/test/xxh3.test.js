// The core's own XXH3-64 for short inputs (src/placement/xxh3.wat, through
// hash64) against hash-wasm's, which the vectors pin to the Rust server's:
// every length from 0 to 240 (each of XXH3's short paths and all their
// branch points) and a little past, several seeded random inputs per
// length and inputs of one repeated byte (0x00 and 0xFF), where a carry
// or a sign slip would show. And the module is its text, assembled.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { createXXHash3 } from 'hash-wasm';
import { assembled } from '../scripts/assemble-xxh3.mjs';
import { hash64, loadHashes } from '../src/placement/hashes.js';
import { r64 } from '../src/placement/u64.js';

/**
 * xorshift32, so a failing input reproduces.
 * @param {number} seed
 */
function bytes(seed) {
  let s = seed >>> 0 || 1;
  /** @param {number} n */
  return (n) => {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      s ^= s << 13;
      s ^= s >>> 17;
      s ^= s << 5;
      s >>>= 0;
      out[i] = s & 0xff;
    }
    return out;
  };
}

test('XXH3-64 equals hash-wasm for every length up to 260', async () => {
  await loadHashes();
  const reference = await createXXHash3(0, 0);
  const random = bytes(0x5eed);
  let checked = 0;
  for (let len = 0; len <= 260; len++) {
    const inputs = [new Uint8Array(len), new Uint8Array(len).fill(0xff)];
    for (let i = 0; i < 8; i++) inputs.push(random(len));
    for (const input of inputs) {
      reference.init();
      reference.update(input);
      const want = reference.digest('hex');
      hash64('xxh3', input);
      const got = r64.hi.toString(16).padStart(8, '0') + r64.lo.toString(16).padStart(8, '0');
      assert.equal(got, want, `length ${len}, input ${Buffer.from(input).toString('hex')}`);
      checked++;
    }
  }
  assert.equal(checked, 261 * 10);
});

test('XXH3-64 of the empty input is XXH3_64bits("")', async () => {
  // An anchor that does not come from hash-wasm: xxHash's own value.
  await loadHashes();
  hash64('xxh3', new Uint8Array(0));
  assert.deepEqual([r64.hi, r64.lo], [0x2d068005, 0x38d394c2]);
});

test('xxh3-wasm.js is xxh3.wat assembled (npm run assemble)', async () => {
  const held = readFileSync(new URL('../src/placement/xxh3-wasm.js', import.meta.url), 'utf8');
  assert.equal(held, await assembled());
});
