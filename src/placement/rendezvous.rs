//! `rendezvous`: weighted highest-random-weight, in integer arithmetic.
//!
//! For a key with hash `k`, node `i` (label hash `n_i`) draws
//! `h_i = fmix64(k ^ n_i)`. Its cost is `d_i = 2^38 − L(h_i + 1)` where
//! `L(x) = ⌊2^32 · log2 x⌋` is computed by the exact integer procedure in
//! [`log2_q32`]; `d_i / 2^32` is `−log2(u)` for `u = (h_i + 1) / 2^64`. The
//! node with the least `d_i / w_i` wins (compared as `d_i · w_j < d_j · w_i`),
//! ties going to the larger `h_i`, then to the earlier node in id order.
//! This is the exponential race behind weighted rendezvous (share exactly
//! `w_i / Σw`) without any platform `ln`, so every language agrees bit for
//! bit. When all weights are equal the order reduces to "largest `h_i`
//! wins", which the lookup uses as a shortcut.

use std::cmp::Ordering;

use super::hash::fmix64;

/// `2^32 · 64`: `L(2^64)`.
const TOP: u64 = 64 << 32;

/// `⌊2^32 · log2 x⌋` for `1 ≤ x ≤ 2^64`, by the bit-by-bit method: the
/// integer part is the position of the top bit; the mantissa `m ∈ [1, 2)` is
/// held in 1.63 fixed point and squared 32 times, each square truncated to
/// 63 fractional bits; a square reaching 2 emits a 1 bit and is halved.
pub fn log2_q32(x: u128) -> u64 {
    debug_assert!((1..=1u128 << 64).contains(&x));
    let e = 127 - x.leading_zeros(); // 0..=64
                                     // Mantissa in [2^63, 2^64): exact, since x has at most 65 bits.
    let mut m: u128 = if e >= 63 {
        x >> (e - 63)
    } else {
        x << (63 - e)
    };
    let mut frac = 0u64;
    for _ in 0..32 {
        m = (m * m) >> 63;
        frac <<= 1;
        if m >= 1 << 64 {
            m >>= 1;
            frac |= 1;
        }
    }
    (u64::from(e) << 32) | frac
}

/// A node's draw for a key.
#[inline]
pub fn draw(key_hash: u64, node_hash: u64) -> u64 {
    fmix64(key_hash ^ node_hash)
}

/// The cost `d = 2^38 − L(h + 1)` of a draw.
#[inline]
pub fn cost(h: u64) -> u64 {
    TOP - log2_q32(u128::from(h) + 1)
}

/// One node's standing for a key: draw, cost and weight.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Score {
    pub draw: u64,
    pub cost: u64,
    pub weight: u64,
    pub node: u32,
}

/// Orders scores best first.
pub(crate) fn better(a: &Score, b: &Score) -> Ordering {
    let lhs = u128::from(a.cost) * u128::from(b.weight);
    let rhs = u128::from(b.cost) * u128::from(a.weight);
    lhs.cmp(&rhs)
        .then(b.draw.cmp(&a.draw))
        .then(a.node.cmp(&b.node))
}

/// Scores every node for a key. `uniform` skips the logarithm, which is
/// sound because the order is then by draw alone.
pub(crate) fn scores<'a>(
    key_hash: u64,
    node_hashes: &'a [u64],
    weights: &'a [u64],
    uniform: bool,
) -> impl Iterator<Item = Score> + 'a {
    node_hashes
        .iter()
        .zip(weights)
        .enumerate()
        .map(move |(i, (&n, &w))| {
            let h = draw(key_hash, n);
            Score {
                draw: h,
                cost: if uniform { 0 } else { cost(h) },
                weight: w,
                node: i as u32,
            }
        })
}

/// The winning node index.
pub(crate) fn owner(
    key_hash: u64,
    node_hashes: &[u64],
    weights: &[u64],
    uniform: bool,
) -> Option<u32> {
    if uniform {
        // Largest draw wins; ties go to the earlier node.
        let mut best: Option<(u64, u32)> = None;
        for (i, &n) in node_hashes.iter().enumerate() {
            let h = draw(key_hash, n);
            if best.is_none_or(|(bh, _)| h > bh) {
                best = Some((h, i as u32));
            }
        }
        return best.map(|(_, i)| i);
    }
    scores(key_hash, node_hashes, weights, false)
        .min_by(better)
        .map(|s| s.node)
}

/// Nodes in descending preference for a key.
pub(crate) fn ranked(
    key_hash: u64,
    node_hashes: &[u64],
    weights: &[u64],
    uniform: bool,
) -> Vec<u32> {
    let mut all: Vec<Score> = scores(key_hash, node_hashes, weights, uniform).collect();
    all.sort_by(better);
    all.into_iter().map(|s| s.node).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log2_is_exact_on_powers_of_two_and_monotone() {
        assert_eq!(log2_q32(1), 0);
        assert_eq!(log2_q32(2), 1 << 32);
        assert_eq!(log2_q32(1 << 64), 64 << 32);
        // log2(3) = 1.5849625007...; ⌊0.5849625007... × 2^32⌋ = 2512394809.
        assert_eq!(log2_q32(3), (1 << 32) | 2_512_394_809);
        let mut prev = 0;
        for x in (1u128..5000).chain((1u128 << 64) - 5000..=(1u128 << 64)) {
            let l = log2_q32(x);
            assert!(l >= prev, "not monotone at {x}");
            prev = l;
        }
    }

    #[test]
    fn weighted_order_matches_uniform_shortcut_when_weights_are_equal() {
        let nodes: Vec<u64> = (0..50u64).map(|i| fmix64(i + 1)).collect();
        let weights = vec![7u64; 50];
        for k in 0..2000u64 {
            let kh = fmix64(k.wrapping_mul(31));
            assert_eq!(
                ranked(kh, &nodes, &weights, true),
                ranked(kh, &nodes, &weights, false)
            );
        }
    }
}
