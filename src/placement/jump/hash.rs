//! The jump hash function itself, shared by the bucket-order rules
//! (`mod.rs`) and the run table's lookup (`runs.rs`).

/// The golden-ratio increment added before re-hashing past a hole.
pub const REHASH_INCREMENT: u64 = 0x9E37_79B9_7F4A_7C15;

/// Lamping & Veach, "A Fast, Minimal Memory, Consistent Hash Algorithm"
/// (2014): the bucket in `0..buckets` for `key`. `buckets` must be ≥ 1.
#[inline]
pub fn jump_hash(mut key: u64, buckets: u32) -> u32 {
    let mut b: i64 = -1;
    let mut j: i64 = 0;
    while j < i64::from(buckets) {
        b = j;
        key = key.wrapping_mul(2_862_933_555_777_941_757).wrapping_add(1);
        j = ((b + 1) as f64 * ((1u64 << 31) as f64 / ((key >> 33) + 1) as f64)) as i64;
    }
    b as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_value() {
        assert_eq!(jump_hash(256, 1024), 520);
        assert_eq!(jump_hash(0, 1), 0);
    }
}
