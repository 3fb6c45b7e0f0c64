//! `ketama`: byte-for-byte compatible with libketama's continuum.
//!
//! libketama gives each server `floorf(pct * 40.0 * n)` md5 digests, where
//! `pct` is the server's share of the total weight in single precision and
//! the product is computed in double precision and then narrowed to float.
//! Each digest of `"<addr>-<k>"` yields four points: the little-endian u32s
//! of its four 4-byte groups. A key hashes to the little-endian u32 of the
//! first four bytes of its md5 digest and belongs to the first point at or
//! after that value, wrapping. The float arithmetic is reproduced on purpose:
//! it is why 61 equal servers get 156 points each instead of 160.

use super::continuum::Continuum;
use super::hash::md5_digest;
use super::node::Node;

/// Number of md5 digests (each giving four points) libketama computes for a
/// server of weight `weight` among `servers` servers of total weight `total`.
pub fn digest_count(weight: u64, total: u64, servers: usize) -> u32 {
    let pct = weight as f32 / total as f32;
    // `pct * 40.0` promotes to double; `floorf` narrows the product back.
    let product = f64::from(pct) * 40.0 * f64::from(servers as f32);
    (product as f32).floor() as u32
}

/// The key hash: little-endian u32 of the first four md5 bytes.
#[inline]
pub fn key_hash(key: &[u8]) -> u32 {
    let d = md5_digest(key);
    u32::from_le_bytes([d[0], d[1], d[2], d[3]])
}

/// Digest counts for every node (active, sorted by id).
pub(crate) fn digest_counts(nodes: &[Node]) -> Vec<u32> {
    let total: u64 = nodes.iter().map(|n| u64::from(n.weight.get())).sum();
    nodes
        .iter()
        .map(|n| digest_count(n.weight.get().into(), total, nodes.len()))
        .collect()
}

/// Builds the libketama continuum for `nodes` (active, sorted by id).
///
/// libketama sorts with glibc's stable `qsort`, so equal points keep the
/// order in which they were generated: server order, then digest, then the
/// group within the digest. Ordering ties by node index reproduces that when
/// the C library's server list is in ringd's node order (by id).
pub(crate) fn build(nodes: &[Node]) -> Continuum {
    let counts = digest_counts(nodes);
    let total: usize = counts.iter().map(|&c| c as usize * 4).sum();
    let mut points = Vec::with_capacity(total);
    for (i, (node, &count)) in nodes.iter().zip(&counts).enumerate() {
        for k in 0..count {
            let d = md5_digest(format!("{}-{}", node.label(), k).as_bytes());
            for g in d.chunks_exact(4) {
                let p = u32::from_le_bytes([g[0], g[1], g[2], g[3]]);
                points.push((u64::from(p), i as u32));
            }
        }
    }
    Continuum::from_unsorted(points, 32)
}

/// Total points `nodes` would place.
pub(crate) fn point_count(nodes: &[Node]) -> u64 {
    digest_counts(nodes).iter().map(|&c| u64::from(c) * 4).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_arithmetic_quirks_are_reproduced() {
        // 61 equal servers: 1/61 in float times 40 × 61 lands just under 40.
        assert_eq!(digest_count(1, 61, 61), 39);
        assert_eq!(digest_count(1, 4, 4), 40);
        assert_eq!(digest_count(1, 10, 10), 40);
        // In double precision this would be 39; narrowing to float first
        // rounds up to exactly 40.
        assert_eq!(digest_count(1, 100, 100), 40);
    }
}
