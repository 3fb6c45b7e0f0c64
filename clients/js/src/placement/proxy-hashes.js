// The proxies' own 32-bit key hashes: HAProxy's (spec 3.6) and
// nutcracker's (3.7), bit for bit, quirks included. They are small and
// spec-defined, so they are written out here rather than taken from a
// dependency: none of the npm packages carries nutcracker's sign extension
// or HAProxy's rotations. No import but this module's own arithmetic, so
// the console can use full_hash (haproxy's points) without a bundler.

/**
 * A byte read through a signed C char and widened to u32: bytes from 0x80
 * up are sign-extended (nutcracker on x86 and ARM Linux, 3.7).
 * @param {number} b
 * @returns {number}
 */
function sx(b) {
  return b < 0x80 ? b : (b | 0xffffff00) >>> 0;
}

/**
 * @param {number} x
 * @param {number} s
 * @returns {number}
 */
function rotl(x, s) {
  return s === 0 ? x >>> 0 : ((x << s) | (x >>> (32 - s))) >>> 0;
}

/**
 * HAProxy's sdbm: h = c + (h << 6) + (h << 16) − h over unsigned bytes.
 * @param {Uint8Array} data
 * @returns {number}
 */
export function sdbm(data) {
  let h = 0;
  for (let i = 0; i < data.length; i++) h = (data[i] + (h << 6) + (h << 16) - h) >>> 0;
  return h;
}

/**
 * HAProxy's djb2: h = h × 33 + c, from 5381.
 * @param {Uint8Array} data
 * @returns {number}
 */
export function djb2(data) {
  let h = 5381;
  for (let i = 0; i < data.length; i++) h = (Math.imul(h, 33) + data[i]) >>> 0;
  return h;
}

/**
 * Willy Tarreau's wt6 from HAProxy. A rotation by 0 is the identity, which
 * is what HAProxy's shift by 32 gives on x86 (3.6).
 * @param {Uint8Array} data
 * @returns {number}
 */
export function wt6(data) {
  let h0 = 0xa53c965a;
  let h1 = 0x5ca6953a;
  let s0 = 6;
  let s1 = 18;
  for (let i = 0; i < data.length; i++) {
    const c = data[i];
    h0 = ~(h0 ^ c) >>> 0;
    h1 = ~(h1 + c) >>> 0;
    const t0 = rotl(h1, s0);
    h1 = rotl(h0, s1);
    h0 = t0;
    const t = ((h0 >>> 16) ^ h1) & 0xffff;
    s0 = t & 31;
    s1 = t >>> 11;
  }
  return (h0 ^ h1) >>> 0;
}

/**
 * HAProxy's avalanche: Bob Jenkins' integer mix, then a multiplication; a
 * bijection on u32 (3.6).
 * @param {number} a
 * @returns {number}
 */
export function fullHash(a) {
  a = (a + 0x7ed55d16 + (a << 12)) >>> 0;
  a = (a ^ 0xc761c23c ^ (a >>> 19)) >>> 0;
  a = (a + 0x165667b1 + (a << 5)) >>> 0;
  a = ((a + 0xd3a2646c) ^ (a << 9)) >>> 0;
  a = (a + 0xfd7046c5 + (a << 3)) >>> 0;
  a = (a ^ 0xb55a4f09 ^ (a >>> 16)) >>> 0;
  return Math.imul(a, 3221225473) >>> 0;
}

/**
 * nutcracker's fnv1a_64: the 64-bit basis and prime cut to their low 32
 * bits, over sign-extended bytes; a 32-bit hash.
 * @param {Uint8Array} data
 * @returns {number}
 */
export function fnv1a64(data) {
  let h = 0x84222325;
  for (let i = 0; i < data.length; i++) h = Math.imul(h ^ sx(data[i]), 0x1b3);
  return h >>> 0;
}

/**
 * 64-bit FNV-1 over bytes sign-extended to 64 bits, its low 32 bits. The
 * low half of a product depends only on the operands' low halves, and the
 * low half of a sign-extended byte is sx: so it runs in 32 bits.
 * @param {Uint8Array} data
 * @returns {number}
 */
export function fnv164(data) {
  let h = 0x84222325;
  for (let i = 0; i < data.length; i++) h = Math.imul(h, 0x1b3) ^ sx(data[i]);
  return h >>> 0;
}

/**
 * @param {Uint8Array} data
 * @returns {number}
 */
export function fnv1a32(data) {
  let h = 0x811c9dc5;
  for (let i = 0; i < data.length; i++) h = Math.imul(h ^ sx(data[i]), 0x01000193);
  return h >>> 0;
}

/**
 * @param {Uint8Array} data
 * @returns {number}
 */
export function fnv132(data) {
  let h = 0x811c9dc5;
  for (let i = 0; i < data.length; i++) h = Math.imul(h, 0x01000193) ^ sx(data[i]);
  return h >>> 0;
}

/**
 * @param {Uint8Array} data
 * @returns {number}
 */
export function oneAtATime(data) {
  let h = 0;
  for (let i = 0; i < data.length; i++) {
    h = (h + sx(data[i])) >>> 0;
    h = (h + (h << 10)) >>> 0;
    h = (h ^ (h >>> 6)) >>> 0;
  }
  h = (h + (h << 3)) >>> 0;
  h = (h ^ (h >>> 11)) >>> 0;
  return (h + (h << 15)) >>> 0;
}

/**
 * @param {Uint8Array} d
 * @param {number} at
 * @returns {number}
 */
function le32(d, at) {
  return (d[at] | (d[at + 1] << 8) | (d[at + 2] << 16) | (d[at + 3] << 24)) >>> 0;
}

/**
 * nutcracker's murmur: MurmurHash2 (32-bit) seeded with 0xdeadbeef ×
 * length, over unsigned bytes.
 * @param {Uint8Array} data
 * @returns {number}
 */
export function murmur2(data) {
  const m = 0x5bd1e995;
  const n = data.length;
  let h = (Math.imul(0xdeadbeef, n) ^ n) >>> 0;
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    let k = Math.imul(le32(data, i), m);
    k ^= k >>> 24;
    k = Math.imul(k, m);
    h = Math.imul(h, m) ^ k;
  }
  if (i < n) {
    for (let j = 0; i + j < n; j++) h ^= data[i + j] << (8 * j);
    h = Math.imul(h, m);
  }
  h ^= h >>> 13;
  h = Math.imul(h, m);
  h ^= h >>> 15;
  return h >>> 0;
}

/**
 * Bob Jenkins' lookup3 hashlittle(key, len, 13), over unsigned bytes.
 * @param {Uint8Array} data
 * @returns {number}
 */
export function jenkins(data) {
  let a = (0xdeadbeef + data.length + 13) >>> 0;
  let b = a;
  let c = a;
  if (data.length === 0) return c;
  let i = 0;
  for (; data.length - i > 12; i += 12) {
    a = (a + le32(data, i)) | 0;
    b = (b + le32(data, i + 4)) | 0;
    c = (c + le32(data, i + 8)) | 0;
    a -= c;
    a ^= rotl(c, 4);
    c += b;
    b -= a;
    b ^= rotl(a, 6);
    a += c;
    c -= b;
    c ^= rotl(b, 8);
    b += a;
    a -= c;
    a ^= rotl(c, 16);
    c += b;
    b -= a;
    b ^= rotl(a, 19);
    a += c;
    c -= b;
    c ^= rotl(b, 4);
    b += a;
    a |= 0;
    b |= 0;
    c |= 0;
  }
  const last = new Uint8Array(12); // the last block, zero-padded
  last.set(data.subarray(i));
  a = (a + le32(last, 0)) | 0;
  b = (b + le32(last, 4)) | 0;
  c = (c + le32(last, 8)) | 0;
  c ^= b;
  c -= rotl(b, 14);
  c |= 0;
  a ^= c;
  a -= rotl(c, 11);
  a |= 0;
  b ^= a;
  b -= rotl(a, 25);
  b |= 0;
  c ^= b;
  c -= rotl(b, 16);
  c |= 0;
  a ^= c;
  a -= rotl(c, 4);
  a |= 0;
  b ^= a;
  b -= rotl(a, 14);
  b |= 0;
  c ^= b;
  c -= rotl(b, 24);
  return c >>> 0;
}

/**
 * Paul Hsieh's SuperFastHash from 0 (not from the length); only the third
 * byte of a 3-byte tail is sign-extended (3.7).
 * @param {Uint8Array} data
 * @returns {number}
 */
export function hsieh(data) {
  const n = data.length;
  if (n === 0) return 0;
  let h = 0;
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    h = (h + (data[i] | (data[i + 1] << 8))) >>> 0;
    const tmp = (((data[i + 2] | (data[i + 3] << 8)) << 11) ^ h) >>> 0;
    h = ((h << 16) ^ tmp) >>> 0;
    h = (h + (h >>> 11)) >>> 0;
  }
  switch (n - i) {
    case 3:
      h = (h + (data[i] | (data[i + 1] << 8))) >>> 0;
      h = (h ^ (h << 16)) >>> 0;
      h = (h ^ (sx(data[i + 2]) << 18)) >>> 0;
      h = (h + (h >>> 11)) >>> 0;
      break;
    case 2:
      h = (h + (data[i] | (data[i + 1] << 8))) >>> 0;
      h = (h ^ (h << 11)) >>> 0;
      h = (h + (h >>> 17)) >>> 0;
      break;
    case 1:
      h = (h + data[i]) >>> 0;
      h = (h ^ (h << 10)) >>> 0;
      h = (h + (h >>> 1)) >>> 0;
      break;
  }
  h = (h ^ (h << 3)) >>> 0;
  h = (h + (h >>> 5)) >>> 0;
  h = (h ^ (h << 4)) >>> 0;
  h = (h + (h >>> 17)) >>> 0;
  h = (h ^ (h << 25)) >>> 0;
  return (h + (h >>> 6)) >>> 0;
}
