// The keys of the Go client's benchmark (clients/go/benchmarks/owner_test.go),
// the same strings in the same order: its generator, math/rand/v2's PCG
// (PCG-DXSM, seeded 7, 11), is reproduced here with BigInt, so both
// benchmarks look up identical keys. Three kinds of cache keys, 16–40
// bytes: `user:<n>`, `session/<hex>-<hex>`, `obj/<n>/part-<n>`.

const M64 = (1n << 64n) - 1n;
const MUL = (2549297995355413924n << 64n) | 4865540595714422341n;
const INC = (6364136223846793005n << 64n) | 1442695040888963407n;
const M128 = (1n << 128n) - 1n;
const CHEAP_MUL = 0xda942042e4dd58b5n;

/** math/rand/v2's PCG: 128-bit LCG state, DXSM output. */
class PCG {
  /**
   * @param {bigint} hi
   * @param {bigint} lo
   */
  constructor(hi, lo) {
    this.state = (hi << 64n) | lo;
  }

  /** @returns {bigint} */
  uint64() {
    this.state = (this.state * MUL + INC) & M128;
    let hi = this.state >> 64n;
    const lo = this.state & M64;
    hi ^= hi >> 32n;
    hi = (hi * CHEAP_MUL) & M64;
    hi ^= hi >> 48n;
    hi = (hi * (lo | 1n)) & M64;
    return hi;
  }

  /**
   * rand.UintN(n) on a 64-bit platform (Lemire's method, as Go does).
   * @param {bigint} n
   * @returns {bigint}
   */
  uintN(n) {
    if ((n & (n - 1n)) === 0n) return this.uint64() & (n - 1n);
    let p = this.uint64() * n;
    let lo = p & M64;
    if (lo < n) {
      const thresh = ((1n << 64n) - n) % n;
      while (lo < thresh) {
        p = this.uint64() * n;
        lo = p & M64;
      }
    }
    return p >> 64n;
  }
}

/**
 * The first `count` keys of the Go benchmark's sequence.
 * @param {number} count
 * @returns {string[]}
 */
export function makeKeys(count) {
  const rng = new PCG(7n, 11n);
  const keys = new Array(count);
  for (let i = 0; i < count; i++) {
    switch (i % 3) {
      case 0:
        keys[i] = `user:${rng.uint64()}`;
        break;
      case 1: {
        const a = rng.uint64().toString(16).padStart(16, '0');
        const b = rng
          .uintN(1n << 16n)
          .toString(16)
          .padStart(4, '0');
        keys[i] = `session/${a}-${b}`;
        break;
      }
      default: {
        const a = rng.uintN(1_000_000n);
        const b = rng.uintN(100n);
        keys[i] = `obj/${a}/part-${b}`;
      }
    }
  }
  return keys;
}

/**
 * The node ids of every benchmark: `cache-NNNN.example.net:11211`.
 * @param {number} n
 * @returns {string[]}
 */
export function nodeNames(n) {
  return Array.from({ length: n }, (_, i) => `cache-${String(i).padStart(4, '0')}.example.net:11211`);
}
