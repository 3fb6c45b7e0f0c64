// Owner lookups of ringd's JavaScript placement core against the npm
// consistent-hashing packages, in one run; prints Markdown tables.
//
//   node bench/run.mjs [--rounds 3] [--samples 5] [--sample-ms 20]
//     [--warmup-ms 300] [--nodes 10,100,1000] [--keys 1024,16384]
//     [--impls a,b,…] [--no-heap] [--json FILE]
//
// Each round starts one process per implementation (lookup-child.mjs), in
// an order rotated by one each round, so that every implementation gets a
// fresh JIT and the machine's noise falls on all of them alike. A figure
// is the median of all samples over the rounds (rounds × samples); the
// spread is the lowest and highest of the rounds' own medians. Heap growth
// is measured once, in a separate process per implementation with a
// 64 MiB young generation (no collection within a chunk of lookups), so
// that timing runs under Node's default flags.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { IMPLS } from './impls.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

/** The npm packages at their defaults: what ringd is measured against. */
const LIBRARIES = ['hashring', 'consistent-hash', 'consistent-hashing'];
/** ringd's algorithms the target is about, plain and with an owner cache. */
const TARGETED = ['ringd-ring', 'ringd-table', 'ringd-ring-cached', 'ringd-table-cached'];
/**
 * The configuration the target is judged on: one configuration for every
 * row, ring and table with an owner cache the size of hashring's (its
 * default), when they were run; else plain.
 */
const JUDGED = [
  ['ringd-ring-cached', 'ringd-ring'],
  ['ringd-table-cached', 'ringd-table'],
];

const args = process.argv.slice(2);
/**
 * @param {string} flag
 * @param {string} fallback
 */
const arg = (flag, fallback) => {
  const i = args.indexOf(flag);
  return i >= 0 ? args[i + 1] : fallback;
};
const list = (/** @type {string} */ s) => s.split(',').filter(Boolean);
const rounds = Number(arg('--rounds', '3'));
const settings = {
  nodes: list(arg('--nodes', '10,100,1000')).map(Number),
  keySets: list(arg('--keys', '1024,16384')).map(Number),
  samples: Number(arg('--samples', '5')),
  sampleMs: Number(arg('--sample-ms', '20')),
  warmupMs: Number(arg('--warmup-ms', '300')),
};
const impls = list(arg('--impls', Object.keys(IMPLS).join(',')));
for (const k of settings.keySets) if (k & (k - 1)) throw new Error(`key sets must be powers of two, not ${k}`);
for (const i of impls) if (!IMPLS[i]) throw new Error(`unknown implementation ${i}`);

/**
 * @param {string} impl
 * @param {string[]} flags
 * @param {object} opts
 * @returns {any[]}
 */
function child(impl, flags, opts) {
  const out = execFileSync(
    process.execPath,
    [...flags, path.join(here, 'lookup-child.mjs'), impl, JSON.stringify(opts)],
    {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 1 << 26,
    },
  );
  return JSON.parse(out).results;
}

const started = Date.now();
const load0 = os.loadavg();
/**
 * @type {Map<string, { samples: number[], roundMedians: number[], owners: number, checked: number, buildMs: number[],
 *   heapBytes?: number | null, agreed?: number | null }>}
 */
const cells = new Map();
const cellKey = (/** @type {string} */ impl, /** @type {number} */ n, /** @type {number} */ k) => `${impl}/${n}/${k}`;

for (let r = 0; r < rounds; r++) {
  const order = impls.map((_, i) => impls[(i + r) % impls.length]);
  for (const impl of order) {
    process.stderr.write(`round ${r + 1}/${rounds}: ${impl}\n`);
    for (const res of child(impl, [], settings)) {
      const key = cellKey(impl, res.nodes, res.keys);
      const cell = cells.get(key) ?? {
        samples: [],
        roundMedians: [],
        owners: res.owners,
        checked: res.checked,
        buildMs: [],
      };
      cell.samples.push(...res.samples);
      cell.roundMedians.push(median(res.samples));
      cell.buildMs.push(res.buildMs);
      cells.set(key, cell);
    }
  }
}
if (!args.includes('--no-heap')) {
  for (const impl of impls) {
    process.stderr.write(`heap: ${impl}\n`);
    const flags = ['--expose-gc', '--min-semi-space-size=64', '--max-semi-space-size=64'];
    for (const res of child(impl, flags, { ...settings, heap: true })) {
      const cell = cells.get(cellKey(impl, res.nodes, res.keys));
      if (cell) {
        cell.heapBytes = res.heapBytes;
        cell.agreed = res.agreed;
      }
    }
  }
}
const load1 = os.loadavg();

/**
 * @param {number[]} xs
 * @returns {number}
 */
function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** @param {number} x */
function ns(x) {
  if (x >= 1e6) return `${(x / 1e6).toLocaleString('en-US', { maximumFractionDigits: 1 })} ms`;
  if (x >= 1e4) return `${(x / 1e3).toLocaleString('en-US', { maximumFractionDigits: 1 })} µs`;
  return x.toLocaleString('en-US', { maximumFractionDigits: x < 100 ? 1 : 0 });
}
const int = (/** @type {number} */ x) => x.toLocaleString('en-US');
const cell = (/** @type {string} */ impl, /** @type {number} */ n, /** @type {number} */ k) =>
  cells.get(cellKey(impl, n, k));
const med = (/** @type {string} */ impl, /** @type {number} */ n, /** @type {number} */ k) => {
  const c = cell(impl, n, k);
  return c ? median(c.samples) : Number.NaN;
};

const lines = [];
const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
lines.push(
  `Node ${process.version}, ${os.cpus().length} × ${cpu}, ${os.type()} ${os.release()}; ` +
    `${rounds} rounds × ${settings.samples} samples of ~${settings.sampleMs} ms; ` +
    `load average ${load0[0].toFixed(2)} before, ${load1[0].toFixed(2)} after; ` +
    `${((Date.now() - started) / 1000).toFixed(0)} s.`,
  '',
);
for (const k of settings.keySets) {
  lines.push(`### ${int(k)} keys, cycled: median ns per owner lookup (lowest–highest round median)`, '');
  lines.push(`| nodes | ${impls.map((i) => IMPLS[i].label).join(' | ')} |`);
  lines.push(`|---:|${impls.map(() => '---:').join('|')}|`);
  for (const n of settings.nodes) {
    const row = impls.map((i) => {
      const c = cell(i, n, k);
      if (!c) return '—';
      return `${ns(median(c.samples))} (${ns(Math.min(...c.roundMedians))}–${ns(Math.max(...c.roundMedians))})`;
    });
    lines.push(`| ${int(n)} | ${row.join(' | ')} |`);
  }
  lines.push('');
}

const libs = LIBRARIES.filter((l) => impls.includes(l));
const targeted = TARGETED.filter((t) => impls.includes(t));
if (libs.length && targeted.length) {
  lines.push('### Target: ringd `ring` and `table` faster than every package', '');
  lines.push(
    "Ratio = the fastest package's median ÷ ringd's (above 1: ringd is faster). Met: ring and table with an owner cache (when run) are faster.",
    '',
  );
  lines.push(`| keys | nodes | fastest package | ${targeted.map((t) => `${IMPLS[t].label}`).join(' | ')} | met |`);
  lines.push(`|---:|---:|---|${targeted.map(() => '---:').join('|')}|---|`);
  for (const k of settings.keySets) {
    for (const n of settings.nodes) {
      const best = libs.map((l) => ({ l, t: med(l, n, k) })).sort((a, b) => a.t - b.t)[0];
      const ratios = targeted.map((t) => best.t / med(t, n, k));
      const judged = JUDGED.map((alts) => alts.find((a) => targeted.includes(a))).filter((a) => a !== undefined);
      const met = judged.every((t) => best.t / med(t, n, k) > 1) ? 'yes' : 'no';
      lines.push(
        `| ${int(k)} | ${int(n)} | ${IMPLS[best.l].label}, ${ns(best.t)} | ${ratios.map((x) => `${x.toFixed(2)}×`).join(' | ')} | ${met} |`,
      );
    }
  }
  lines.push('');
}

if ([...cells.values()].some((c) => c.heapBytes != null)) {
  lines.push('### Heap growth, bytes per lookup (median of 9 chunks, after a full collection)', '');
  lines.push(`| keys | nodes | ${impls.map((i) => IMPLS[i].label).join(' | ')} |`);
  lines.push(`|---:|---:|${impls.map(() => '---:').join('|')}|`);
  for (const k of settings.keySets) {
    for (const n of settings.nodes) {
      const row = impls.map((i) => {
        const b = cell(i, n, k)?.heapBytes;
        return b == null ? '—' : int(Math.max(0, Math.round(b)));
      });
      lines.push(`| ${int(k)} | ${int(n)} | ${row.join(' | ')} |`);
    }
  }
  lines.push('');
}

lines.push(
  '### Checks: nodes owning a key / keys checked (every owner one of the nodes); keys placed alike by a second instance; build ms (median)',
  '',
);
lines.push(`| nodes | ${impls.map((i) => IMPLS[i].label).join(' | ')} |`);
lines.push(`|---:|${impls.map(() => '---').join('|')}|`);
for (const n of settings.nodes) {
  const row = impls.map((i) => {
    const c = cell(i, n, settings.keySets[0]);
    if (!c) return '—';
    const agreed = c.agreed == null ? '' : ` ${int(c.agreed)};`;
    return `${int(c.owners)} / ${int(c.checked)};${agreed} ${ns(median(c.buildMs))}`;
  });
  lines.push(`| ${int(n)} | ${row.join(' | ')} |`);
}
lines.push('');

process.stdout.write(`${lines.join('\n')}\n`);
const json = arg('--json', '');
if (json) {
  fs.writeFileSync(json, `${JSON.stringify({ settings, rounds, impls, cells: Object.fromEntries(cells) }, null, 1)}\n`);
}
