// Reading ES module imports, for the import-graph test and for the import
// map the browser test gives Chromium.

import { readFile } from 'node:fs/promises';

/**
 * The specifiers a module imports or re-exports, statically or not.
 * Comments are dropped first, so JSDoc's import('…') types do not count.
 * @param {string} source
 * @returns {string[]}
 */
export function specifiers(source) {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
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
 * @param {string} s
 * @returns {boolean}
 */
export function isRelative(s) {
  return s.startsWith('./') || s.startsWith('../');
}

/**
 * Every module reachable from `entries` and what each imports; bare
 * specifiers are followed through `resolve` when it is given.
 * @param {URL[]} entries
 * @param {(specifier: string) => Promise<URL>} [resolve]
 * @returns {Promise<Map<string, string[]>>}
 */
export async function importGraph(entries, resolve) {
  /** @type {Map<string, string[]>} */
  const seen = new Map();
  const queue = [...entries];
  while (queue.length > 0) {
    const url = /** @type {URL} */ (queue.pop());
    if (seen.has(url.href)) continue;
    const imports = specifiers(await readFile(url, 'utf8'));
    seen.set(url.href, imports);
    for (const s of imports) {
      if (isRelative(s)) queue.push(new URL(s, url));
      else if (resolve) queue.push(await resolve(s));
    }
  }
  return seen;
}

/**
 * Where a bare specifier leads for a browser, from its package.json in
 * `nodeModules`: its `exports` under the browser, import or default
 * condition, else its `module` or `main` field.
 * @param {URL} nodeModules
 * @param {string} specifier
 * @returns {Promise<URL>}
 */
export async function resolveBare(nodeModules, specifier) {
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  const subpath = `.${specifier.slice(name.length)}`;
  const root = new URL(`${name}/`, nodeModules);
  const pkg = JSON.parse(await readFile(new URL('package.json', root), 'utf8'));
  /** @type {unknown} */
  let target = subpath === '.' ? (pkg.module ?? pkg.main) : subpath;
  if (pkg.exports !== undefined) {
    const exp = pkg.exports;
    // "exports" is one target (or conditions) for ".", or a map of subpaths.
    const sugar = typeof exp === 'string' || Object.keys(exp).every((k) => !k.startsWith('.'));
    target = sugar ? (subpath === '.' ? exp : undefined) : exp[subpath];
    while (target !== null && typeof target === 'object') {
      const conditions = /** @type {Record<string, unknown>} */ (target);
      target = conditions.browser ?? conditions.import ?? conditions.default;
    }
  }
  if (typeof target !== 'string') throw new Error(`cannot resolve ${specifier}`);
  return new URL(target, root);
}
