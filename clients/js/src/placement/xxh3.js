// XXH3-64 with seed 0 and the default secret for inputs up to 240 bytes,
// in 32-bit halves. Measured reason (docs/benchmarks.md, "Where ringd's
// time goes"): a key hashed through hash-wasm's streaming hasher costs
// about 650–750 ns, four calls into WebAssembly and 400 B of typed-array
// views per key, while the search after it costs 4–24 ns. Keys are short,
// and XXH3's paths up to 240 bytes are a handful of 64 × 64-bit
// multiplies, so they are done here; longer inputs, builds' points and
// every other hash stay with hash-wasm (hashes.js). test/xxh3.test.js
// checks every length from 0 to 240 against hash-wasm.

import { r64 } from './u64.js';

/** The first 136 bytes of XXH3's default secret (kSecret): all that inputs up to 240 bytes read. */
const SECRET = Uint8Array.from(
  (
    'b8fe6c3923a44bbe7c01812cf721ad1cded46de9839097db7240a4a4b7b3671f' +
    'cb79e64eccc0e578825ad07dccff7221b8084674f743248ee03590e6813a264c' +
    '3c2852bb91c300cb88d0658b1b532ea371644897a20df94e3819ef46a9deacd8' +
    'a8fa763fe39c343ff9dcbbc7c70b4f1d8a51e04bcdb45931c89f7ec9d9787364' +
    'eac5ac8334d3ebc3'
  ).match(/../g) ?? [],
  (x) => Number.parseInt(x, 16),
);

/** The longest input hashed here. */
export const XXH3_SHORT_MAX = 240;

/**
 * @param {Uint8Array} b
 * @param {number} at
 * @returns {number}
 */
function le32(b, at) {
  return (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24)) >>> 0;
}

/** The secret's little-endian u32 at every byte offset (mid-size rounds read it unaligned). */
const S = new Uint32Array(SECRET.length - 3);
for (let i = 0; i < S.length; i++) S[i] = le32(SECRET, i);

// Operands, product and accumulator as halves in one typed array. V8
// passes and keeps numbers past 2^30 as heap numbers wherever a call is
// not inlined or a module variable holds them: with u32 halves as
// arguments and module variables this file measured 350 ns and 220 B per
// short key. So every helper takes only small integers and objects, and
// reads and writes its u64s here.
const W = new Uint32Array(8);
const A_HI = 0;
const A_LO = 1;
const B_HI = 2;
const B_LO = 3;
const P_HI = 4;
const P_LO = 5;
const ACC_HI = 6;
const ACC_LO = 7;

// Multiplying by a power of two is exact, and much faster than dividing.
const INV16 = 1 / 65536;
const INV32 = 1 / 4294967296;

/** P = A × B modulo 2^64, by u32 halves and 16-bit pieces. */
function mul64() {
  const ah = W[A_HI];
  const al = W[A_LO];
  const bh = W[B_HI];
  const bl = W[B_LO];
  // al × bl in full: al·bl = y·2^16 + x with x = al·bl₀ and y = al·bl₁
  // below 2^48, exact in binary64; y splits at 2^16 by ToInt32's modulo.
  const x = al * (bl & 0xffff);
  const y = al * (bl >>> 16);
  const yl = y & 0xffff;
  const hi = (y - yl) * INV16 + Math.floor((x + yl * 65536) * INV32);
  W[P_LO] = Math.imul(al, bl);
  W[P_HI] = hi + Math.imul(ah, bl) + Math.imul(al, bh);
}

/** ACC += XXH3_mul128_fold64(A, B): the 128-bit product's halves xored. */
function addMulFold() {
  const ah = W[A_HI];
  const al = W[A_LO];
  const bh = W[B_HI];
  const bl = W[B_LO];
  // The four u32 products' high words as in mul64, low words by imul.
  let x = al * (bl & 0xffff);
  let y = al * (bl >>> 16);
  let yl = y & 0xffff;
  const llHi = (y - yl) * INV16 + Math.floor((x + yl * 65536) * INV32);
  x = al * (bh & 0xffff);
  y = al * (bh >>> 16);
  yl = y & 0xffff;
  const lhHi = (y - yl) * INV16 + Math.floor((x + yl * 65536) * INV32);
  x = ah * (bl & 0xffff);
  y = ah * (bl >>> 16);
  yl = y & 0xffff;
  const hlHi = (y - yl) * INV16 + Math.floor((x + yl * 65536) * INV32);
  x = ah * (bh & 0xffff);
  y = ah * (bh >>> 16);
  yl = y & 0xffff;
  const hhHi = (y - yl) * INV16 + Math.floor((x + yl * 65536) * INV32);
  // Words w3:w2:w1:w0 of the product; the sums stay below 2^35, exact.
  const t1 = llHi + (Math.imul(al, bh) >>> 0) + (Math.imul(ah, bl) >>> 0);
  const w1 = t1 >>> 0;
  const t2 = lhHi + hlHi + (Math.imul(ah, bh) >>> 0) + (t1 - w1) * INV32;
  const w2 = t2 >>> 0;
  const w3 = (hhHi + (t2 - w2) * INV32) >>> 0;
  const lo = W[ACC_LO] + ((Math.imul(al, bl) ^ w2) >>> 0);
  W[ACC_LO] = lo;
  W[ACC_HI] = W[ACC_HI] + ((w1 ^ w3) >>> 0) + (lo >= 4294967296 ? 1 : 0);
}

/**
 * XXH3_mix16B with seed 0, added to the accumulator.
 * @param {Uint8Array} b
 * @param {number} at the input's offset
 * @param {number} s the secret's offset
 */
function mix16(b, at, s) {
  W[A_LO] = le32(b, at) ^ S[s];
  W[A_HI] = le32(b, at + 4) ^ S[s + 4];
  W[B_LO] = le32(b, at + 8) ^ S[s + 8];
  W[B_HI] = le32(b, at + 12) ^ S[s + 12];
  addMulFold();
}

/** XXH3_avalanche of the accumulator, into r64. */
function avalanche() {
  W[A_HI] = W[ACC_HI];
  W[A_LO] = W[ACC_LO] ^ (W[ACC_HI] >>> 5);
  W[B_HI] = 0x16566791;
  W[B_LO] = 0x9e3779f9;
  mul64();
  r64.hi = W[P_HI];
  r64.lo = (W[P_LO] ^ W[P_HI]) >>> 0;
}

/** XXH64_avalanche of A, into r64. */
function avalanche64() {
  W[A_LO] ^= W[A_HI] >>> 1;
  W[B_HI] = 0xc2b2ae3d;
  W[B_LO] = 0x27d4eb4f;
  mul64();
  W[A_HI] = W[P_HI] ^ (W[P_HI] >>> 29);
  W[A_LO] = W[P_LO] ^ (W[P_LO] >>> 29) ^ (W[P_HI] << 3);
  W[B_HI] = 0x165667b1;
  W[B_LO] = 0x9e3779f9;
  mul64();
  r64.hi = W[P_HI];
  r64.lo = (W[P_LO] ^ W[P_HI]) >>> 0;
}

/**
 * XXH3_rrmxmx of A, into r64.
 * @param {number} len
 */
function rrmxmx(len) {
  const hi = W[A_HI];
  const lo = W[A_LO];
  // h ^= rotl(h, 49) ^ rotl(h, 24)
  W[A_HI] = hi ^ ((lo << 17) | (hi >>> 15)) ^ ((hi << 24) | (lo >>> 8));
  W[A_LO] = lo ^ ((hi << 17) | (lo >>> 15)) ^ ((lo << 24) | (hi >>> 8));
  W[B_HI] = 0x9fb21c65;
  W[B_LO] = 0x1e98df25;
  mul64();
  W[A_HI] = W[P_HI];
  W[A_LO] = W[P_LO] ^ ((W[P_HI] >>> 3) + len);
  mul64();
  r64.hi = (W[P_HI] ^ (W[P_HI] >>> 28)) >>> 0;
  r64.lo = (W[P_LO] ^ ((W[P_LO] >>> 28) | (W[P_HI] << 4))) >>> 0;
}

/**
 * Byte-swaps a u32.
 * @param {number} x
 * @returns {number}
 */
function bswap32(x) {
  return (x >>> 24) | ((x >>> 8) & 0xff00) | ((x << 8) & 0xff0000) | (x << 24);
}

/**
 * Inputs of 9 to 16 bytes: len + swap64(lo) + hi + mul128_fold64(lo, hi).
 * @param {Uint8Array} b
 */
function len9to16(b) {
  const len = b.length;
  const ll = le32(b, 0) ^ S[24] ^ S[32];
  const lh = le32(b, 4) ^ S[28] ^ S[36];
  const hl = le32(b, len - 8) ^ S[40] ^ S[48];
  const hh = le32(b, len - 4) ^ S[44] ^ S[52];
  W[A_HI] = lh;
  W[A_LO] = ll;
  W[B_HI] = hh;
  W[B_LO] = hl;
  // ACC = len + swap64(lo) + hi, then the fold is added to it.
  const lo = len + (bswap32(lh) >>> 0) + W[B_LO];
  W[ACC_LO] = lo;
  W[ACC_HI] = (bswap32(ll) >>> 0) + W[B_HI] + Math.floor(lo * INV32);
  addMulFold();
  avalanche();
}

/**
 * Inputs of 17 to 128 bytes.
 * @param {Uint8Array} b
 */
function len17to128(b) {
  const len = b.length;
  accumulateLength(len);
  if (len > 32) {
    if (len > 64) {
      if (len > 96) {
        mix16(b, 48, 96);
        mix16(b, len - 64, 112);
      }
      mix16(b, 32, 64);
      mix16(b, len - 48, 80);
    }
    mix16(b, 16, 32);
    mix16(b, len - 32, 48);
  }
  mix16(b, 0, 0);
  mix16(b, len - 16, 16);
  avalanche();
}

/**
 * Inputs of 129 to 240 bytes.
 * @param {Uint8Array} b
 */
function len129to240(b) {
  const len = b.length;
  accumulateLength(len);
  for (let i = 0; i < 8; i++) mix16(b, 16 * i, 16 * i);
  avalanche();
  W[ACC_HI] = r64.hi;
  W[ACC_LO] = r64.lo;
  const rounds = len >>> 4;
  // MIDSIZE_STARTOFFSET 3, and SECRET_SIZE_MIN 136 − MIDSIZE_LASTOFFSET 17.
  for (let i = 8; i < rounds; i++) mix16(b, 16 * i, 16 * (i - 8) + 3);
  mix16(b, len - 16, 119);
  avalanche();
}

/**
 * ACC = len × PRIME64_1.
 * @param {number} len
 */
function accumulateLength(len) {
  W[A_HI] = 0;
  W[A_LO] = len;
  W[B_HI] = 0x9e3779b1;
  W[B_LO] = 0x85ebca87;
  mul64();
  W[ACC_HI] = W[P_HI];
  W[ACC_LO] = W[P_LO];
}

/**
 * XXH3-64 of `b` (at most 240 bytes) with seed 0, into r64.
 * @param {Uint8Array} b
 */
export function xxh3Short(b) {
  const len = b.length;
  if (len > 128) {
    len129to240(b);
  } else if (len > 16) {
    len17to128(b);
  } else if (len > 8) {
    len9to16(b);
  } else if (len >= 4) {
    W[A_HI] = le32(b, 0) ^ S[12] ^ S[20];
    W[A_LO] = le32(b, len - 4) ^ S[8] ^ S[16];
    rrmxmx(len);
  } else if (len > 0) {
    W[A_HI] = 0;
    W[A_LO] = ((b[0] << 16) | (b[len >>> 1] << 24) | b[len - 1] | (len << 8)) ^ S[0] ^ S[4];
    avalanche64();
  } else {
    W[A_HI] = S[60] ^ S[68];
    W[A_LO] = S[56] ^ S[64];
    avalanche64();
  }
}
