// Size of the placement core bundled for a browser with esbuild (ESM,
// minified), with and without its npm dependencies, and of the
// dependency-free modules the console loads alone; prints a Markdown
// table. Nothing is written to disk.
//
//   node bench/size.mjs

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import * as esbuild from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const placement = path.join(root, 'src/placement');
const DEPS = ['hash-wasm', '@multiformats/murmur3'];

/**
 * Bundles `contents` (an ESM module resolved from src/placement) for the
 * browser.
 * @param {string} contents
 * @param {{ minify: boolean, external?: string[] }} o
 */
async function bundle(contents, o) {
  const r = await esbuild.build({
    stdin: { contents, resolveDir: placement, sourcefile: 'entry.js', loader: 'js' },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: o.minify,
    external: o.external ?? [],
    metafile: true,
    write: false,
    logLevel: 'silent',
    absWorkingDir: root,
  });
  const out = r.outputFiles[0].contents;
  const inputs = Object.values(r.metafile.outputs)[0].inputs;
  return { out, inputs };
}

const gzip = (/** @type {Uint8Array} */ b) => zlib.gzipSync(b, { level: 9 }).length;
const brotli = (/** @type {Uint8Array} */ b) =>
  zlib.brotliCompressSync(b, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }).length;

/**
 * Every size of one entry: the source files it pulls in (bytes on disk),
 * the bundle as is, minified, and minified then gzipped (level 9) and
 * brotli-compressed (quality 11).
 * @param {string} name
 * @param {string} contents
 * @param {string[]} [external]
 */
async function sizes(name, contents, external) {
  const plain = await bundle(contents, { minify: false, external });
  const min = await bundle(contents, { minify: true, external });
  const files = Object.keys(plain.inputs).filter((f) => fs.existsSync(path.resolve(root, f)));
  const source = files.reduce((s, f) => s + fs.statSync(path.resolve(root, f)).size, 0);
  const fromDeps = files.filter((f) => f.includes('node_modules'));
  return {
    name,
    files: files.length,
    deps: fromDeps.length,
    source,
    bundle: plain.out.length,
    min: min.out.length,
    gzip: gzip(min.out),
    brotli: brotli(min.out),
    min_out: min.out,
    min_inputs: min.inputs,
  };
}

const all = await sizes('`index.js`, with its npm dependencies', `export * from './index.js';`);
const core = await sizes('`index.js`, npm dependencies left out (external)', `export * from './index.js';`, DEPS);
const consoleMods = await sizes(
  '`encoding.js` + `ownership.js` + `fingerprint.js`',
  `export * from './encoding.js'; export * from './ownership.js'; export * from './fingerprint.js';`,
);
const singles = [];
for (const m of ['encoding.js', 'ownership.js', 'fingerprint.js']) {
  singles.push(await sizes(`\`${m}\` alone`, `export * from './${m}';`));
}
for (const s of [consoleMods, ...singles]) {
  if (s.deps > 0) throw new Error(`${s.name} pulls in npm packages`);
}

// The dependencies' share of the minified bundle, as esbuild's metafile
// counts it, and the WebAssembly hash-wasm embeds as base64 strings.
/** @type {Record<string, number>} */
const share = {};
for (const [f, v] of Object.entries(all.min_inputs)) {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(f);
  const pkg = m ? m[1] : 'ringd placement core';
  share[pkg] = (share[pkg] ?? 0) + v.bytesInOutput;
}
const text = new TextDecoder().decode(all.min_out);
const base64 = [...text.matchAll(/"([A-Za-z0-9+/]{1000,}={0,2})"/g)].map((m) => m[1]);
const wasm = new TextEncoder().encode(base64.join(''));

const kib = (/** @type {number} */ b) => `${(b / 1024).toFixed(1)} KiB`;
const lines = [
  `esbuild ${esbuild.version}: bundle, format esm, platform browser, target es2022; gzip level 9, brotli quality 11.`,
  '',
  '| entry | files | sources | bundle | minified | min + gzip | min + brotli |',
  '|---|---:|---:|---:|---:|---:|---:|',
];
for (const s of [all, core, consoleMods, ...singles]) {
  lines.push(
    `| ${s.name} | ${s.files} | ${kib(s.source)} | ${kib(s.bundle)} | ${kib(s.min)} | ${kib(s.gzip)} | ${kib(s.brotli)} |`,
  );
}
lines.push('', 'Shares of the minified bundle with dependencies (esbuild metafile, bytes in output):', '');
lines.push('| part | minified | share |', '|---|---:|---:|');
for (const [pkg, b] of Object.entries(share).sort((a, b) => b[1] - a[1])) {
  lines.push(`| ${pkg} | ${kib(b)} | ${((100 * b) / all.min).toFixed(1)}% |`);
}
lines.push(
  `| of which hash-wasm's WebAssembly as base64 (${base64.length} strings) | ${kib(wasm.length)} | ${((100 * wasm.length) / all.min).toFixed(1)}% |`,
  '',
  `Those base64 strings alone: ${kib(gzip(wasm))} gzipped, ${kib(brotli(wasm))} brotli; the WebAssembly they decode to: ${kib(base64.reduce((s, b) => s + Buffer.from(b, 'base64').length, 0))}.`,
);
process.stdout.write(`${lines.join('\n')}\n`);
