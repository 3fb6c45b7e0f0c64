// One implementation's lookups, in a process of its own; run.mjs starts
// it and reads the one JSON line it prints. Arguments: the
// implementation's name, then a JSON object of settings (see run.mjs).
//
// For each node count and key set: build, check that every key has a real
// node as owner, warm up (the JIT optimizes the loop), calibrate a sample
// to about `sampleMs`, then either time `samples` samples (ns per lookup
// each) or, with `heap` (run under --expose-gc), measure the heap growth
// per lookup instead; the heap run also builds a second instance over the
// same nodes and counts the checked keys on which both agree (placement
// that is a function of the node set agrees on all of them).

import { IMPLS } from './impls.mjs';
import { makeKeys, nodeNames } from './keys.mjs';

const [name, json] = process.argv.slice(2);
const impl = IMPLS[name];
if (!impl) throw new Error(`unknown implementation ${name}`);
/** @type {{ nodes: number[], keySets: number[], samples: number, sampleMs: number, warmupMs: number, heap?: boolean }} */
const opts = JSON.parse(json);

/** Keeps the loops' results alive. */
export let sink = 0;

const now = () => Number(process.hrtime.bigint());

/**
 * Every key's owner is one of the nodes; returns how many nodes own a key.
 * @param {any} inst
 * @param {string[]} names
 * @param {string[]} keys
 */
function check(inst, names, keys) {
  const known = new Set(names);
  const owners = new Set();
  for (const key of keys) {
    const o = impl.owner(inst, key);
    if (typeof o !== 'string' || !known.has(o)) {
      throw new Error(`${name} over ${names.length} nodes: key ${JSON.stringify(key)} placed on ${String(o)}`);
    }
    owners.add(o);
  }
  return owners.size;
}

/**
 * @param {any} inst
 * @param {string[]} keys
 */
function time(inst, keys, samplesWanted) {
  const mask = keys.length - 1;
  let pos = 0;
  let acc = 0;
  // Warm-up, growing the batch until it takes a tenth of a sample.
  let count = 16;
  let nsPer = 0;
  const warmEnd = now() + opts.warmupMs * 1e6;
  for (;;) {
    const t0 = now();
    acc += impl.loop(inst, keys, mask, pos, count);
    const dt = now() - t0;
    pos = (pos + count) & mask;
    nsPer = dt / count;
    if (now() >= warmEnd) break;
    if (dt < opts.sampleMs * 1e5) count *= 2;
  }
  count = Math.max(1, Math.round((opts.sampleMs * 1e6) / nsPer));
  const samples = [];
  for (let s = 0; s < samplesWanted; s++) {
    const t0 = now();
    acc += impl.loop(inst, keys, mask, pos, count);
    samples.push((now() - t0) / count);
    pos = (pos + count) & mask;
  }
  sink += acc;
  return { samples, count };
}

/**
 * Heap growth per lookup: the median over 9 chunks of the change in used
 * heap across a chunk, after a full collection (a chunk during which the
 * young generation was collected comes out low; the median drops it).
 * @param {any} inst
 * @param {string[]} keys
 * @param {number} count lookups per timed sample
 */
function heap(inst, keys, count) {
  const gc = /** @type {(() => void) | undefined} */ (globalThis.gc);
  if (!gc) return null;
  const mask = keys.length - 1;
  const chunk = Math.max(1, Math.min(1024, Math.floor(count / 4)));
  const growth = [];
  let acc = 0;
  for (let c = 0; c < 9; c++) {
    gc();
    const h0 = process.memoryUsage().heapUsed;
    acc += impl.loop(inst, keys, mask, c * chunk, chunk);
    growth.push((process.memoryUsage().heapUsed - h0) / chunk);
  }
  sink += acc;
  growth.sort((a, b) => a - b);
  return growth[4];
}

/**
 * How many of `keys` two instances place on the same node.
 * @param {any} a
 * @param {any} b
 * @param {string[]} keys
 */
function agreement(a, b, keys) {
  let same = 0;
  for (const key of keys) if (impl.owner(a, key) === impl.owner(b, key)) same++;
  return same;
}

const results = [];
const allKeys = makeKeys(Math.max(...opts.keySets));
for (const n of opts.nodes) {
  const names = nodeNames(n);
  const t0 = now();
  const inst = await impl.make(names);
  const buildMs = (now() - t0) / 1e6;
  const checked = allKeys.slice(0, impl.checkKeys ?? allKeys.length);
  const owners = check(inst, names, checked);
  const agreed = opts.heap ? agreement(inst, await impl.make(names), checked) : null;
  for (const k of opts.keySets) {
    const keys = allKeys.slice(0, k);
    if (opts.heap) {
      const { count } = time(inst, keys, 1);
      results.push({ impl: name, nodes: n, keys: k, heapBytes: heap(inst, keys, count), agreed });
    } else {
      const { samples, count } = time(inst, keys, opts.samples);
      results.push({ impl: name, nodes: n, keys: k, samples, count, owners, checked: checked.length, buildMs });
    }
  }
}
process.stdout.write(`${JSON.stringify({ results, sink: sink > 0 })}\n`);
