use super::*;

#[test]
fn published_values_for_apple() {
    // twemproxy 0.5.0's own unit test (src/test_all.c), which copies
    // libmemcached's tests/hash_results.h.
    assert_eq!(one_at_a_time(b"apple"), 2_297_466_611);
    assert_eq!(md5(b"apple"), 3_195_025_439);
    assert_eq!(crc32a(b"apple"), 2_838_417_488);
    assert_eq!(fnv1_32(b"apple"), 67_176_023);
    assert_eq!(fnv1a_32(b"apple"), 280_767_167);
    assert_eq!(fnv1_64(b"apple"), 473_199_127);
    assert_eq!(fnv1a_64(b"apple"), 1_488_911_807);
    assert_eq!(hsieh(b"apple"), 3_738_850_110);
    assert_eq!(jenkins(b"apple"), 1_442_444_624);
    assert_eq!(murmur(b"apple"), 4_142_305_122);
}

#[test]
fn crc32a_is_the_standard_check_value() {
    // CRC-32/ISO-HDLC check value.
    assert_eq!(crc32a(b"123456789"), 0xcbf4_3926);
}

#[test]
fn high_bytes_enter_sign_extended_where_nutcracker_reads_a_char() {
    // One byte 0xE9 enters FNV-1a as 0xFFFFFFE9, not 0xE9.
    let sext = (0x8422_2325u32 ^ 0xffff_ffe9).wrapping_mul(0x1b3);
    assert_eq!(fnv1a_64(&[0xe9]), sext);
    assert_ne!(
        fnv1a_64(&[0xe9]),
        (0x8422_2325u32 ^ 0xe9).wrapping_mul(0x1b3)
    );
    // Bytes up to 0x7F are the same either way.
    assert_eq!(
        fnv1a_64(&[0x41]),
        (0x8422_2325u32 ^ 0x41).wrapping_mul(0x1b3)
    );
}

#[test]
fn empty_keys() {
    assert_eq!(hsieh(b""), 0);
    assert_eq!(fnv1a_64(b""), 0x8422_2325);
    assert_eq!(jenkins(b""), 0xdead_beef_u32.wrapping_add(13));
    assert_eq!(hash32(HashFunction::Xxh3, b"apple"), None);
    assert_eq!(
        hash32(HashFunction::Murmur, b"apple"),
        Some(murmur(b"apple"))
    );
}
