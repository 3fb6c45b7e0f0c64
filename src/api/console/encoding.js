// Decoder of the canonical placement encoding (placement-spec 9.1), enough
// to draw a placement: the header, the active nodes in index order and the
// body of each algorithm. Positions become fractions of the keyspace in
// [0, 1) as doubles: exact enough for pixels, and much faster than BigInt.

const MAGIC = [0x52, 0x49, 0x4e, 0x47, 0x44, 0x50, 0x4c, 0x01];
const ALGORITHMS = ["", "ring", "ketama", "maglev", "jump", "rendezvous", "table", "nginx", "haproxy", "twemproxy"];
// The algorithms that place by address: only their node records carry one.
const BY_ADDRESS = new Set(["nginx", "twemproxy"]);
const TWO32 = 4294967296;
const TWO64 = TWO32 * TWO32;
export const NO_NODE = 0xffffffff;

export function decode(buffer) {
  const v = new DataView(buffer);
  const bytes = new Uint8Array(buffer);
  let o = 0;
  const need = (n) => {
    if (o + n > bytes.length) throw new Error("placement encoding is truncated");
  };
  need(8);
  for (let i = 0; i < 8; i++) {
    if (bytes[i] !== MAGIC[i]) throw new Error("not a ringd placement encoding (bad magic)");
  }
  o = 8;
  need(12);
  const algorithm = ALGORITHMS[v.getUint8(o)] || `unknown(${v.getUint8(o)})`;
  const flags = v.getUint8(o + 3);
  const zoneAware = v.getUint8(o + 2) === 1;
  const replicationFactor = v.getUint32(o + 4, true);
  const count = v.getUint32(o + 8, true);
  o += 12;
  const ramped = (flags & 1) === 1;
  const text = new TextDecoder();
  const nodes = [];
  for (let i = 0; i < count; i++) {
    need(1);
    const idLen = v.getUint8(o++);
    need(idLen + 1);
    const id = text.decode(bytes.subarray(o, o + idLen));
    o += idLen;
    const zoneLen = v.getUint8(o++);
    need(zoneLen + 4);
    const zone = zoneLen ? text.decode(bytes.subarray(o, o + zoneLen)) : null;
    o += zoneLen;
    const weight = v.getUint32(o, true);
    o += 4;
    let ramp = 65536;
    if (ramped) {
      need(4);
      ramp = v.getUint32(o, true);
      o += 4;
    }
    let address = null;
    if (BY_ADDRESS.has(algorithm)) {
      need(1);
      const addressLen = v.getUint8(o++);
      need(addressLen);
      address = text.decode(bytes.subarray(o, o + addressLen));
      o += addressLen;
    }
    nodes.push({ id, zone, weight, ramp, address });
  }
  const out = { algorithm, zoneAware, replicationFactor, nodes, ramped };
  if (algorithm === "twemproxy") {
    // The hash tag (u8 length, 0 or 2, then its bytes) comes first; the
    // points then read as ketama's.
    need(1);
    const tagLen = v.getUint8(o);
    need(1 + tagLen);
    o += 1 + tagLen;
  }
  if (algorithm === "ring" || algorithm === "ketama" || algorithm === "nginx" || algorithm === "twemproxy") {
    need(4);
    const p = v.getUint32(o, true);
    o += 4;
    const wide = algorithm === "ring";
    const stride = wide ? 12 : 8;
    need(p * stride);
    const pos = new Float64Array(p);
    const owner = new Uint32Array(p);
    for (let i = 0; i < p; i++, o += stride) {
      // u64 as hi·2^32 + lo: little-endian, so the high word is second.
      pos[i] = wide
        ? (v.getUint32(o + 4, true) * TWO32 + v.getUint32(o, true)) / TWO64
        : v.getUint32(o, true) / TWO32;
      owner[i] = v.getUint32(o + (wide ? 8 : 4), true);
    }
    out.points = { pos, owner };
  } else if (algorithm === "haproxy") {
    // u8 avalanche, a u32 server id per node, then HAProxy's points. A key
    // goes to the nearest point (placement-spec 5.8.2), which is the first
    // point at or after it among the "boundaries" key + gap/2: those are
    // drawn, so pointAt answers haproxy rings as it answers the others.
    need(1 + count * 4 + 4);
    o += 1 + count * 4;
    const p = v.getUint32(o, true);
    o += 4;
    need(p * 8);
    const keys = new Float64Array(p);
    const owners = new Uint32Array(p);
    for (let i = 0; i < p; i++, o += 8) {
      keys[i] = v.getUint32(o, true);
      owners[i] = v.getUint32(o + 4, true);
    }
    const bounds = [];
    for (let i = 0; i < p; i++) {
      const gap = i + 1 < p ? keys[i + 1] - keys[i] : keys[0] + TWO32 - keys[i];
      bounds.push([(keys[i] + Math.floor(gap / 2)) % TWO32, owners[i]]);
    }
    bounds.sort((a, b) => a[0] - b[0]);
    out.points = {
      pos: Float64Array.from(bounds, (b) => b[0] / TWO32),
      owner: Uint32Array.from(bounds, (b) => b[1]),
    };
  } else if (algorithm === "maglev" || algorithm === "jump") {
    need(4);
    const n = v.getUint32(o, true);
    o += 4;
    need(n * 4);
    const cells = new Uint32Array(n);
    for (let i = 0; i < n; i++, o += 4) cells[i] = v.getUint32(o, true);
    out.cells = cells;
  } else if (algorithm === "table") {
    need(5);
    const partitions = v.getUint32(o, true);
    const r = v.getUint8(o + 4);
    o += 5;
    const width = count <= 65535 ? 2 : 4;
    need(partitions * r * width);
    const cells = new Uint32Array(partitions * r);
    for (let i = 0; i < cells.length; i++, o += width) {
      cells[i] = width === 2 ? v.getUint16(o, true) : v.getUint32(o, true);
    }
    out.partitions = partitions;
    out.replicas = r;
    out.cells = cells;
  }
  return out;
}

// The point that owns fraction f of a ring: the first at or after it, else
// the first point (the wrap-around). Binary search over sorted positions.
export function pointAt(points, f) {
  const { pos } = points;
  let lo = 0;
  let hi = pos.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (pos[mid] < f) lo = mid + 1;
    else hi = mid;
  }
  return lo === pos.length ? 0 : lo;
}
