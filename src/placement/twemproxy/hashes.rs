//! twemproxy's key hashes (`hash:` in a nutcracker pool), bit for bit as
//! nutcracker 0.5.0 computes them on x86-64 and arm64 Linux.
//!
//! Every function returns nutcracker's 32-bit hash. Several read the key
//! through a signed `char`, so a byte above 0x7F enters them sign-extended
//! (0xE9 as 0xFFFF_FFE9): that quirk decides where such keys land and is
//! reproduced on purpose. Only `crc32a` is a standard checksum (CRC-32/IEEE,
//! from `crc32fast`); the others are written here because no crate computes
//! them with nutcracker's seeds, truncations and sign extensions.
//! `docs/placement-spec.md` 3.7 specifies each one.

use md5::{Digest as _, Md5};

use crate::placement::HashFunction;

/// A byte as nutcracker's `(uint32_t)key[x]` reads it through a signed
/// `char`: bytes above 0x7F are sign-extended.
#[inline]
fn signed(b: u8) -> u32 {
    b as i8 as i32 as u32
}

/// The twemproxy hash `f` of `key`, for the twemproxy hashes (and `md5`);
/// `None` for a hash twemproxy does not have.
pub fn hash32(f: HashFunction, key: &[u8]) -> Option<u32> {
    Some(match f {
        HashFunction::Md5 => md5(key),
        HashFunction::Fnv1a64 => fnv1a_64(key),
        HashFunction::Fnv164 => fnv1_64(key),
        HashFunction::Fnv1a32 => fnv1a_32(key),
        HashFunction::Fnv132 => fnv1_32(key),
        HashFunction::Crc32a => crc32a(key),
        HashFunction::OneAtATime => one_at_a_time(key),
        HashFunction::Murmur => murmur(key),
        HashFunction::Jenkins => jenkins(key),
        HashFunction::Hsieh => hsieh(key),
        HashFunction::Xxh3
        | HashFunction::Sha256
        | HashFunction::Murmur3
        | HashFunction::Crc32
        | HashFunction::Sdbm
        | HashFunction::Djb2
        | HashFunction::Wt6
        | HashFunction::Xxh64 => return None,
    })
}

/// `md5`: the first four digest bytes as a little-endian u32.
pub fn md5(key: &[u8]) -> u32 {
    let d = Md5::digest(key);
    u32::from_le_bytes([d[0], d[1], d[2], d[3]])
}

const FNV_64_INIT: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_64_PRIME: u64 = 0x0000_0100_0000_01b3;
const FNV_32_INIT: u32 = 0x811c_9dc5;
const FNV_32_PRIME: u32 = 0x0100_0193;

/// `fnv1a_64` (the default): despite its name, FNV-1a in 32 bits with the
/// 64-bit offset basis and prime truncated to their low 32 bits, over
/// sign-extended bytes.
pub fn fnv1a_64(key: &[u8]) -> u32 {
    key.iter().fold(FNV_64_INIT as u32, |h, &b| {
        (h ^ signed(b)).wrapping_mul(FNV_64_PRIME as u32)
    })
}

/// `fnv1_64`: 64-bit FNV-1 over bytes sign-extended to 64 bits, truncated
/// to the low 32 bits.
pub fn fnv1_64(key: &[u8]) -> u32 {
    let h = key.iter().fold(FNV_64_INIT, |h, &b| {
        h.wrapping_mul(FNV_64_PRIME) ^ (b as i8 as i64 as u64)
    });
    h as u32
}

/// `fnv1a_32`: 32-bit FNV-1a over sign-extended bytes.
pub fn fnv1a_32(key: &[u8]) -> u32 {
    key.iter().fold(FNV_32_INIT, |h, &b| {
        (h ^ signed(b)).wrapping_mul(FNV_32_PRIME)
    })
}

/// `fnv1_32`: 32-bit FNV-1 over sign-extended bytes.
pub fn fnv1_32(key: &[u8]) -> u32 {
    key.iter().fold(FNV_32_INIT, |h, &b| {
        h.wrapping_mul(FNV_32_PRIME) ^ signed(b)
    })
}

/// `crc32a`: the standard CRC-32 (IEEE, reflected, as zlib's `crc32`).
/// Unlike nutcracker's `crc32`, which keeps 15 bits, it keeps all 32.
pub fn crc32a(key: &[u8]) -> u32 {
    crc32fast::hash(key)
}

/// `one_at_a_time`: Jenkins' one-at-a-time hash over sign-extended bytes.
pub fn one_at_a_time(key: &[u8]) -> u32 {
    let mut h = key.iter().fold(0u32, |mut h, &b| {
        h = h.wrapping_add(signed(b));
        h = h.wrapping_add(h << 10);
        h ^ (h >> 6)
    });
    h = h.wrapping_add(h << 3);
    h ^= h >> 11;
    h.wrapping_add(h << 15)
}

/// `murmur`: MurmurHash2 (32-bit) with the seed `0xdeadbeef × length`,
/// over unsigned bytes read as little-endian words.
pub fn murmur(key: &[u8]) -> u32 {
    const M: u32 = 0x5bd1_e995;
    let len = key.len() as u32;
    let mut h = 0xdead_beef_u32.wrapping_mul(len) ^ len;
    let mut words = key.chunks_exact(4);
    for w in &mut words {
        let mut k = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
        k = k.wrapping_mul(M);
        k ^= k >> 24;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M) ^ k;
    }
    let tail = words.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate() {
            h ^= u32::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^ (h >> 15)
}

/// `jenkins`: Bob Jenkins' lookup3 `hashlittle` with initial value 13, over
/// unsigned bytes; 0 bytes give the initial state's `c` unmixed.
pub fn jenkins(key: &[u8]) -> u32 {
    let init = 0xdead_beef_u32
        .wrapping_add(key.len() as u32)
        .wrapping_add(13);
    let (mut a, mut b, mut c) = (init, init, init);
    let word = |bytes: &[u8]| -> u32 {
        let mut w = [0u8; 4];
        w[..bytes.len()].copy_from_slice(bytes);
        u32::from_le_bytes(w)
    };
    let mut rest = key;
    // Every block but the last is mixed; the last (1 to 12 bytes) is
    // added zero-padded and finalized.
    while rest.len() > 12 {
        a = a.wrapping_add(word(&rest[0..4]));
        b = b.wrapping_add(word(&rest[4..8]));
        c = c.wrapping_add(word(&rest[8..12]));
        mix(&mut a, &mut b, &mut c);
        rest = &rest[12..];
    }
    if rest.is_empty() {
        return c;
    }
    let mut last = [0u8; 12];
    last[..rest.len()].copy_from_slice(rest);
    a = a.wrapping_add(word(&last[0..4]));
    b = b.wrapping_add(word(&last[4..8]));
    c = c.wrapping_add(word(&last[8..12]));
    final_mix(&mut a, &mut b, &mut c);
    c
}

fn mix(a: &mut u32, b: &mut u32, c: &mut u32) {
    *a = a.wrapping_sub(*c) ^ c.rotate_left(4);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a) ^ a.rotate_left(6);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b) ^ b.rotate_left(8);
    *b = b.wrapping_add(*a);
    *a = a.wrapping_sub(*c) ^ c.rotate_left(16);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a) ^ a.rotate_left(19);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b) ^ b.rotate_left(4);
    *b = b.wrapping_add(*a);
}

fn final_mix(a: &mut u32, b: &mut u32, c: &mut u32) {
    *c = (*c ^ *b).wrapping_sub(b.rotate_left(14));
    *a = (*a ^ *c).wrapping_sub(c.rotate_left(11));
    *b = (*b ^ *a).wrapping_sub(a.rotate_left(25));
    *c = (*c ^ *b).wrapping_sub(b.rotate_left(16));
    *a = (*a ^ *c).wrapping_sub(c.rotate_left(4));
    *b = (*b ^ *a).wrapping_sub(a.rotate_left(14));
    *c = (*c ^ *b).wrapping_sub(b.rotate_left(24));
}

/// `hsieh`: Paul Hsieh's SuperFastHash, starting from 0 (not from the
/// length), 0 for the empty key; the third byte of a 3-byte tail enters
/// sign-extended.
pub fn hsieh(key: &[u8]) -> u32 {
    if key.is_empty() {
        return 0;
    }
    let get16 = |p: &[u8]| u32::from(p[0]) | u32::from(p[1]) << 8;
    let mut h = 0u32;
    let mut quads = key.chunks_exact(4);
    for q in &mut quads {
        h = h.wrapping_add(get16(&q[0..2]));
        let tmp = (get16(&q[2..4]) << 11) ^ h;
        h = (h << 16) ^ tmp;
        h = h.wrapping_add(h >> 11);
    }
    match *quads.remainder() {
        [b0, b1, b2] => {
            h = h.wrapping_add(get16(&[b0, b1]));
            h ^= h << 16;
            h ^= signed(b2) << 18;
            h = h.wrapping_add(h >> 11);
        }
        [b0, b1] => {
            h = h.wrapping_add(get16(&[b0, b1]));
            h ^= h << 11;
            h = h.wrapping_add(h >> 17);
        }
        [b0] => {
            h = h.wrapping_add(u32::from(b0));
            h ^= h << 10;
            h = h.wrapping_add(h >> 1);
        }
        _ => {}
    }
    h ^= h << 3;
    h = h.wrapping_add(h >> 5);
    h ^= h << 4;
    h = h.wrapping_add(h >> 17);
    h ^= h << 25;
    h.wrapping_add(h >> 6)
}

#[cfg(test)]
mod tests;
