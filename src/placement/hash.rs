//! The hash functions of the placement spec, pinned to exact bytes.
//!
//! Every function here is specified bit for bit in `docs/placement-spec.md`;
//! a client in another language must reproduce them exactly.

use md5::{Digest as _, Md5};
use sha2::Sha256;
use xxhash_rust::{xxh3::xxh3_64, xxh64::xxh64};

use super::config::HashFunction;
use super::twemproxy::hashes;

/// Hashes `bytes` to 64 bits with `f`.
///
/// Kept small enough to inline into every lookup: the default hash is
/// called directly, the others through out-of-line functions.
#[inline(always)]
pub fn hash64(f: HashFunction, bytes: &[u8]) -> u64 {
    match f {
        HashFunction::Xxh3 => xxh3_64(bytes),
        HashFunction::Md5 => md5_64(bytes),
        HashFunction::Sha256 => sha256_64(bytes),
        HashFunction::Murmur3 => murmur3_x64_128(bytes, 0).0,
        // Only `envoy_ring_hash` rings accept it (`RingConfig::validate`).
        HashFunction::Xxh64 => xxh64(bytes, 0),
        // twemproxy's 32-bit hashes, zero-extended; only `twemproxy` rings
        // accept them (RingConfig::validate).
        HashFunction::Fnv1a64 => u64::from(hashes::fnv1a_64(bytes)),
        HashFunction::Fnv164 => u64::from(hashes::fnv1_64(bytes)),
        HashFunction::Fnv1a32 => u64::from(hashes::fnv1a_32(bytes)),
        HashFunction::Fnv132 => u64::from(hashes::fnv1_32(bytes)),
        HashFunction::Crc32a => u64::from(hashes::crc32a(bytes)),
        HashFunction::OneAtATime => u64::from(hashes::one_at_a_time(bytes)),
        HashFunction::Murmur => u64::from(hashes::murmur(bytes)),
        HashFunction::Jenkins => u64::from(hashes::jenkins(bytes)),
        HashFunction::Hsieh => u64::from(hashes::hsieh(bytes)),
        // The proxies' 32-bit hashes, zero-extended. Only `nginx` (crc32)
        // and `haproxy` rings accept them (`RingConfig::validate`);
        // `haproxy` adds HAProxy's avalanche itself (`haproxy::key_hash`).
        HashFunction::Crc32 => u64::from(crc32fast::hash(bytes)),
        HashFunction::Sdbm | HashFunction::Djb2 | HashFunction::Wt6 => {
            u64::from(super::haproxy::hashes::hash32(f, bytes))
        }
    }
}

#[inline(never)]
fn md5_64(bytes: &[u8]) -> u64 {
    let d = Md5::digest(bytes);
    u64::from_le_bytes(d[..8].try_into().expect("md5 digest is 16 bytes"))
}

#[inline(never)]
fn sha256_64(bytes: &[u8]) -> u64 {
    let d = Sha256::digest(bytes);
    u64::from_le_bytes(d[..8].try_into().expect("sha256 digest is 32 bytes"))
}

/// XXH64 with an explicit seed, as Envoy's Maglev uses for host permutations.
#[inline]
pub fn xxh64_seeded(bytes: &[u8], seed: u64) -> u64 {
    xxh64(bytes, seed)
}

/// The full MD5 digest, for ketama.
#[inline]
pub fn md5_digest(bytes: &[u8]) -> [u8; 16] {
    Md5::digest(bytes).into()
}

/// The finalization mix of MurmurHash3 (x64): a bijection on u64 with full
/// avalanche, used to combine a key hash with a node hash.
#[inline]
pub fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^= k >> 33;
    k
}

/// MurmurHash3 x64-128 (Austin Appleby's `MurmurHash3_x64_128`), returning
/// the two 64-bit halves `(h1, h2)`.
#[inline(never)]
pub fn murmur3_x64_128(data: &[u8], seed: u32) -> (u64, u64) {
    const C1: u64 = 0x87c3_7b91_1142_53d5;
    const C2: u64 = 0x4cf5_ad43_2745_937f;
    let mut h1 = u64::from(seed);
    let mut h2 = u64::from(seed);
    let mut blocks = data.chunks_exact(16);
    for block in &mut blocks {
        let mut k1 = u64::from_le_bytes(block[..8].try_into().expect("8 bytes"));
        let mut k2 = u64::from_le_bytes(block[8..].try_into().expect("8 bytes"));
        k1 = k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
        h1 ^= k1;
        h1 = h1
            .rotate_left(27)
            .wrapping_add(h2)
            .wrapping_mul(5)
            .wrapping_add(0x52dc_e729);
        k2 = k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1);
        h2 ^= k2;
        h2 = h2
            .rotate_left(31)
            .wrapping_add(h1)
            .wrapping_mul(5)
            .wrapping_add(0x3849_5ab5);
    }
    let tail = blocks.remainder();
    let mut k1 = 0u64;
    let mut k2 = 0u64;
    for (i, &b) in tail.iter().enumerate() {
        if i < 8 {
            k1 |= u64::from(b) << (8 * i);
        } else {
            k2 |= u64::from(b) << (8 * (i - 8));
        }
    }
    if tail.len() > 8 {
        k2 = k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1);
        h2 ^= k2;
    }
    if !tail.is_empty() {
        k1 = k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
        h1 ^= k1;
    }
    let len = data.len() as u64;
    h1 ^= len;
    h2 ^= len;
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    h1 = fmix64(h1);
    h2 = fmix64(h2);
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    (h1, h2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn murmur3_matches_reference_digests() {
        // (h1, h2) of MurmurHash3_x64_128 with seed 0, as the reference
        // C++ code and the `mmh3` Python package (`hash64`) produce them.
        assert_eq!(murmur3_x64_128(b"", 0), (0, 0));
        let (h1, h2) = murmur3_x64_128(b"hello", 0);
        assert_eq!((h1, h2), (0xcbd8_a7b3_41bd_9b02, 0x5b1e_906a_48ae_1d19));
        let (h1, h2) = murmur3_x64_128(b"The quick brown fox jumps over the lazy dog", 0);
        assert_eq!((h1, h2), (0xe34b_bc7b_bc07_1b6c, 0x7a43_3ca9_c49a_9347));
    }

    #[test]
    fn truncated_digests_read_little_endian() {
        // md5("") = d41d8cd98f00b204 e9800998ecf8427e
        assert_eq!(hash64(HashFunction::Md5, b""), 0x04b2_008f_d98c_1dd4);
        // sha256("") = e3b0c44298fc1c14 ...
        assert_eq!(hash64(HashFunction::Sha256, b""), 0x141c_fc98_42c4_b0e3);
        // XXH3-64 of the empty input with seed 0.
        assert_eq!(hash64(HashFunction::Xxh3, b""), 0x2d06_8005_38d3_94c2);
    }
}
