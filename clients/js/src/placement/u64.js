// Unsigned 64-bit arithmetic on pairs of 32-bit halves (hi, lo), for the
// lookup paths: BigInt allocates on every operation, and binary64 cannot
// hold a u64. Functions leave their result in `r64`, which the caller
// reads at once (lookups are synchronous, so nothing interleaves).

/** The result of the last operation of this module. */
export const r64 = { hi: 0, lo: 0 };

const TWO32 = 4294967296;

/**
 * The full 64-bit product of two u32s, into r64.
 * @param {number} a
 * @param {number} b
 */
export function mul32(a, b) {
  const a0 = a & 0xffff;
  const a1 = a >>> 16;
  const b0 = b & 0xffff;
  const b1 = b >>> 16;
  const p00 = a0 * b0;
  const p01 = a0 * b1;
  const p10 = a1 * b0;
  const mid = (p00 >>> 16) + (p01 & 0xffff) + (p10 & 0xffff);
  r64.lo = ((mid << 16) | (p00 & 0xffff)) >>> 0;
  r64.hi = (a1 * b1 + (p01 >>> 16) + (p10 >>> 16) + (mid >>> 16)) >>> 0;
}

/**
 * (ah, al) ×ₘ (bh, bl), modulo 2^64, into r64.
 * @param {number} ah
 * @param {number} al
 * @param {number} bh
 * @param {number} bl
 */
export function mul64(ah, al, bh, bl) {
  mul32(al, bl);
  r64.hi = (r64.hi + Math.imul(ah, bl) + Math.imul(al, bh)) >>> 0;
}

/**
 * (ah, al) +ₘ (bh, bl), modulo 2^64, into r64.
 * @param {number} ah
 * @param {number} al
 * @param {number} bh
 * @param {number} bl
 */
export function add64(ah, al, bh, bl) {
  const lo = al + bl;
  r64.lo = lo >>> 0;
  r64.hi = (ah + bh + (lo >= TWO32 ? 1 : 0)) >>> 0;
}

/**
 * MurmurHash3's 64-bit finalizer, a bijection on u64 (spec 3.2), into r64.
 * @param {number} hi
 * @param {number} lo
 */
export function fmix64(hi, lo) {
  mul64(hi, (lo ^ (hi >>> 1)) >>> 0, 0xff51afd7, 0xed558ccd);
  mul64(r64.hi, (r64.lo ^ (r64.hi >>> 1)) >>> 0, 0xc4ceb9fe, 0x1a85ec53);
  r64.lo = (r64.lo ^ (r64.hi >>> 1)) >>> 0;
}

/**
 * Whether (ah, al) < (bh, bl).
 * @param {number} ah
 * @param {number} al
 * @param {number} bh
 * @param {number} bl
 * @returns {boolean}
 */
export function less64(ah, al, bh, bl) {
  return ah < bh || (ah === bh && al < bl);
}

/**
 * @param {number} hi
 * @param {number} lo
 * @returns {bigint}
 */
export function toBigInt(hi, lo) {
  return (BigInt(hi) << 32n) | BigInt(lo);
}

/**
 * Reads a u32 little-endian at `at`.
 * @param {Uint8Array} b
 * @param {number} at
 * @returns {number}
 */
export function le32(b, at) {
  return (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24)) >>> 0;
}

/**
 * Reads a u32 big-endian at `at`.
 * @param {Uint8Array} b
 * @param {number} at
 * @returns {number}
 */
export function be32(b, at) {
  return ((b[at] << 24) | (b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3]) >>> 0;
}
