//! HAProxy 2.6's key hashes (`hash-type … sdbm | djb2 | wt6 | crc32`) and
//! its `full_hash`, the avalanche modifier that also places the servers'
//! points (spec 3.6).
//!
//! No crate computes sdbm, djb2 or wt6 as HAProxy does (32-bit wrapping
//! arithmetic over unsigned bytes, wt6's data-dependent rotations), so they
//! are written here from their definitions; CRC-32 comes from `crc32fast`.

use crate::placement::HashFunction;

/// The 32-bit hash HAProxy computes of a key with function `f`. Only the
/// functions of [`HashFunction::HAPROXY`] are HAProxy's; any other gives
/// the low 32 bits of nothing meaningful and is never asked for (the
/// config refuses them).
pub fn hash32(f: HashFunction, bytes: &[u8]) -> u32 {
    match f {
        HashFunction::Sdbm => sdbm(bytes),
        HashFunction::Djb2 => djb2(bytes),
        HashFunction::Wt6 => wt6(bytes),
        _ => crc32fast::hash(bytes),
    }
}

/// `hash = byte + (hash << 6) + (hash << 16) − hash`, from 0.
pub fn sdbm(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0u32, |h, &c| {
        u32::from(c)
            .wrapping_add(h << 6)
            .wrapping_add(h << 16)
            .wrapping_sub(h)
    })
}

/// `hash = hash × 33 + byte`, from 5381.
pub fn djb2(bytes: &[u8]) -> u32 {
    bytes.iter().fold(5381u32, |h, &c| {
        h.wrapping_mul(33).wrapping_add(u32::from(c))
    })
}

/// Willy Tarreau's wt6: two 32-bit halves rotated by amounts taken from
/// the data. HAProxy writes the rotations as `(x << s) | (x >> (32 − s))`;
/// with `s = 0` that shifts by 32, which x86 reduces to a shift by 0, so
/// the rotation leaves `x` as it is: exactly `rotate_left(0)`.
pub fn wt6(bytes: &[u8]) -> u32 {
    let (mut h0, mut h1) = (0xa53c_965a_u32, 0x5ca6_953a_u32);
    let (mut step0, mut step1) = (6u32, 18u32);
    for &c in bytes {
        let c = u32::from(c);
        h0 = !(h0 ^ c);
        h1 = !(h1.wrapping_add(c));
        let t = h1.rotate_left(step0);
        h1 = h0.rotate_left(step1);
        h0 = t;
        let t = ((h0 >> 16) ^ h1) & 0xffff;
        step0 = t & 0x1f;
        step1 = t >> 11;
    }
    h0 ^ h1
}

/// HAProxy's `full_hash`: Bob Jenkins' 32-bit integer mix, then a
/// multiplication by 3221225473. A bijection on `u32` (checked over all
/// 2^32 inputs when this was written), which is why no two server points
/// ever share a key (spec 5.8).
pub fn full_hash(a: u32) -> u32 {
    let mut a = a;
    a = a.wrapping_add(0x7ed5_5d16).wrapping_add(a << 12);
    a = (a ^ 0xc761_c23c) ^ (a >> 19);
    a = a.wrapping_add(0x1656_67b1).wrapping_add(a << 5);
    a = a.wrapping_add(0xd3a2_646c) ^ (a << 9);
    a = a.wrapping_add(0xfd70_46c5).wrapping_add(a << 3);
    a = (a ^ 0xb55a_4f09) ^ (a >> 16);
    a.wrapping_mul(3_221_225_473)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_values_of_the_spec() {
        // Spec 3.6; HAProxy 2.6 places by these (tests/proxies/haproxy.rs).
        let table: [(&[u8], [u32; 4]); 3] = [
            (b"", [0, 0x1505, 0xf99a_0360, 0]),
            (
                b"hello",
                [0x28d1_9932, 0x0f92_3099, 0xd2e6_e6b7, 0x3610_a686],
            ),
            (
                b"node-a",
                [0x5921_ae76, 0x1087_a399, 0xb84a_ac1b, 0x7899_4dab],
            ),
        ];
        for (input, values) in table {
            for (f, want) in HashFunction::HAPROXY.into_iter().zip(values) {
                assert_eq!(hash32(f, input), want, "{f} of {input:?}");
            }
        }
        assert_eq!(full_hash(0), 0xab4e_d927);
        assert_eq!(full_hash(1), 0x3486_81b6);
        assert_eq!(full_hash(0x28d1_9932), 0x7ae0_88a6);
        assert_eq!(full_hash(4096), 0x49c2_008b);
    }
}
