// nginx (spec 5.7): nginx's `hash $key consistent`. Each node's 160 ×
// weight chained CRC-32 points of host ‖ 0x00 ‖ port ‖ LE32(previous
// point), and of equal positions only the lowest node index's, as nginx
// keeps the first of equal points in server order.

import { nginxHostPort } from './addresses.js';
import { sortPoints } from './continuum.js';
import { crc32 } from './hashes.js';

/** @typedef {import('./node.js').Node} Node */
/** @typedef {import('./continuum.js').Points} Points */

/** nginx's points per unit of weight. */
export const NGINX_POINTS_PER_WEIGHT = 160;
const utf8 = new TextEncoder();

/**
 * @param {Node[]} active with checked addresses
 * @returns {Points}
 */
export function buildNginx(active) {
  let total = 0;
  for (const n of active) total += NGINX_POINTS_PER_WEIGHT * n.weight;
  const hi = new Uint32Array(total);
  const owner = new Uint32Array(total);
  let j = 0;
  active.forEach((n, i) => {
    const [host, port] = nginxHostPort(n.address ?? '') ?? [n.address ?? '', ''];
    const h = utf8.encode(host);
    const p = utf8.encode(port);
    const buf = new Uint8Array(h.length + 1 + p.length + 4);
    buf.set(h, 0);
    buf.set(p, h.length + 1);
    const view = new DataView(buf.buffer);
    let prev = 0;
    for (let k = 0; k < NGINX_POINTS_PER_WEIGHT * n.weight; k++) {
      view.setUint32(buf.length - 4, prev, true);
      prev = crc32(buf);
      hi[j] = prev;
      owner[j++] = i;
    }
  });
  const sorted = sortPoints({ hi, lo: new Uint32Array(total), owner });
  // Keep the first of each run of equal positions: the lowest index.
  const keep = sorted.hi.map((_, k) => (k === 0 || sorted.hi[k] !== sorted.hi[k - 1] ? 1 : 0));
  const count = keep.reduce((a, b) => a + b, 0);
  const out = { hi: new Uint32Array(count), lo: new Uint32Array(count), owner: new Uint32Array(count) };
  let c = 0;
  for (let k = 0; k < total; k++) {
    if (keep[k]) {
      out.hi[c] = sorted.hi[k];
      out.owner[c++] = sorted.owner[k];
    }
  }
  return out;
}
