// The selection of spec 6.2: up to want = min(r, node count) distinct node
// indices from a successor order. With zones, the first S = min(want, zone
// count) entries are the first nodes that each bring a zone not yet used,
// and the rest the earliest nodes not yet taken. A node seen again is
// skipped, or dropped as it was the first time, which is why walking runs
// instead of buckets (jump) gives the same list.

/**
 * Something with a successor order (6.1).
 * @typedef {object} Walker
 * @property {(h: number, l: number, visit: (node: number) => boolean) => void} walk
 */

/**
 * @param {Walker} walker
 * @param {number} h the key hash's high half
 * @param {number} l its low half
 * @param {number} want
 * @param {number} nodes
 * @param {Int32Array | null} zoneOf
 * @param {number} zoneCount
 * @returns {number[]}
 */
export function selectReplicas(walker, h, l, want, nodes, zoneOf, zoneCount) {
  want = Math.min(want, nodes);
  /** @type {number[]} */
  const picked = [];
  if (!(want > 0)) return picked;
  const seen = new Uint8Array(nodes);
  if (zoneOf === null) {
    walker.walk(h, l, (n) => {
      if (seen[n] === 0) {
        seen[n] = 1;
        picked.push(n);
      }
      return picked.length < want;
    });
    return picked;
  }
  const spread = Math.min(want, zoneCount);
  const usedZones = new Uint8Array(zoneCount);
  /** @type {number[]} */
  const rest = [];
  walker.walk(h, l, (n) => {
    if (seen[n] === 1) return true;
    seen[n] = 1;
    const z = zoneOf[n];
    if (picked.length < spread && usedZones[z] === 0) {
      usedZones[z] = 1;
      picked.push(n);
    } else if (rest.length < want - spread) rest.push(n);
    return picked.length < spread || rest.length < want - spread;
  });
  return picked.concat(rest);
}
