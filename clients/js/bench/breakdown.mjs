// Where a ringd lookup's time goes: the parts of `Placement.owner` timed
// apart, on the same keys (a diagnostic for the write-up; it reaches into
// the core's internal modules and changes nothing).
//
//   node --expose-gc bench/breakdown.mjs [--nodes 1000] [--keys 16384] [--algorithm ring]
//
// (--expose-gc adds each part's heap growth per call: the median of 9
// chunks of 1,024 calls, after a full collection.)
//
// - owner: `p.owner(key)`, all of it
// - keyBytes: the key's UTF-8 (TextEncoder.encodeInto) into the memory of
//   the core's XXH3 module (xxh3.wat), where keys up to 80 characters go
// - key hash: keyBytes, then section 4's key hash (one call into that
//   module for inputs up to 240 bytes)
// - lookup only: the placement's own search on the key hashes computed
//   beforehand (what is left when hashing is free)

import { build } from '../src/placement/index.js';
import { KeyHasher, keyBytes } from '../src/placement/key-hash.js';
import { r64 } from '../src/placement/u64.js';
import { roundRobinTable } from './impls.mjs';
import { makeKeys, nodeNames } from './keys.mjs';

const args = process.argv.slice(2);
const arg = (/** @type {string} */ f, /** @type {string} */ d) => (args.includes(f) ? args[args.indexOf(f) + 1] : d);
const n = Number(arg('--nodes', '1000'));
const k = Number(arg('--keys', '16384'));
const algorithm = /** @type {'ring' | 'table'} */ (arg('--algorithm', 'ring'));

const names = nodeNames(n);
const p = await build(
  { algorithm },
  names.map((id) => ({ id })),
  algorithm === 'table' ? { tableRows: roundRobinTable(names, 65_536, 3) } : {},
);
const keys = makeKeys(k);
const mask = k - 1;
const hasher = new KeyHasher(algorithm, 'xxh3', false, null);
const his = new Uint32Array(k);
const los = new Uint32Array(k);
keys.forEach((key, i) => {
  hasher.sum(keyBytes(key));
  his[i] = r64.hi;
  los[i] = r64.lo;
});
// @ts-expect-error: the placement's private lookup structure
const lookup = p.lookup;

const parts = {
  owner(/** @type {number} */ count) {
    let acc = 0;
    for (let i = 0; i < count; i++) acc += /** @type {string} */ (p.owner(keys[i & mask])).length;
    return acc;
  },
  keyBytes(/** @type {number} */ count) {
    let acc = 0;
    for (let i = 0; i < count; i++) acc += keyBytes(keys[i & mask]).length;
    return acc;
  },
  'key hash'(/** @type {number} */ count) {
    let acc = 0;
    for (let i = 0; i < count; i++) {
      hasher.sum(keyBytes(keys[i & mask]));
      acc += r64.lo & 1;
    }
    return acc;
  },
  'lookup only'(/** @type {number} */ count) {
    let acc = 0;
    for (let i = 0; i < count; i++) acc += lookup.ownerIndex(his[i & mask], los[i & mask]);
    return acc;
  },
};

let sink = 0;
const count = 200_000;
/** @type {Record<string, number[]>} */
const times = {};
for (let round = 0; round < 12; round++) {
  for (const [name, f] of Object.entries(parts)) {
    const t0 = process.hrtime.bigint();
    sink += f(count);
    const dt = Number(process.hrtime.bigint() - t0) / count;
    if (round < 2) continue; // two rounds of warm-up
    times[name] ??= [];
    times[name].push(dt);
  }
}
/**
 * Heap growth per call of f, or null without --expose-gc.
 * @param {(count: number) => number} f
 */
function heapPerCall(f) {
  const gc = /** @type {(() => void) | undefined} */ (globalThis.gc);
  if (!gc) return null;
  const growth = [];
  for (let c = 0; c < 9; c++) {
    gc();
    const h0 = process.memoryUsage().heapUsed;
    sink += f(1024);
    growth.push((process.memoryUsage().heapUsed - h0) / 1024);
  }
  growth.sort((a, b) => a - b);
  return growth[4];
}

console.log(`${algorithm}, ${n} nodes, ${k} keys: median ns per call of 10 rounds × ${count} (sink ${sink > 0})`);
console.log('');
console.log('| part | ns | heap bytes per call |');
console.log('|---|---:|---:|');
for (const [name, ts] of Object.entries(times)) {
  ts.sort((a, b) => a - b);
  const bytes = heapPerCall(parts[/** @type {keyof typeof parts} */ (name)]);
  console.log(
    `| ${name} | ${((ts[4] + ts[5]) / 2).toFixed(1)} | ${bytes === null ? '—' : Math.max(0, Math.round(bytes))} |`,
  );
}
