//! `ring`: the default algorithm, a virtual-node ring with 64-bit positions.
//!
//! Each active node gets `vnodes_per_weight × weight` points. The count never
//! depends on the rest of the cluster, so changing one node never re-cuts the
//! others. Point `k` of a node sits at `hash(le32(len) ‖ label ‖ le32(k))`;
//! the length prefix makes the encoding injective (`node1`+`1` and
//! `node11`+nothing hash different bytes). A node ramped below full places
//! only its first `⌈ramp × count / 65,536⌉` points, so as its ramp grows
//! it gains points and never moves the ones it has: keys move only onto it.

use super::config::HashFunction;
use super::continuum::Continuum;
use super::hash::hash64;
use super::node::Node;

/// The bytes hashed for point `k` of a node labelled `label`.
pub fn point_label(label: &str, k: u32) -> Vec<u8> {
    let mut buf = Vec::with_capacity(label.len() + 8);
    buf.extend_from_slice(&(label.len() as u32).to_le_bytes());
    buf.extend_from_slice(label.as_bytes());
    buf.extend_from_slice(&k.to_le_bytes());
    buf
}

/// Points of one node, as `(position, owner)` pairs.
pub(crate) fn node_points(
    hash: HashFunction,
    vnodes_per_weight: u32,
    node: &Node,
    owner: u32,
    out: &mut Vec<(u64, u32)>,
) {
    let count = placed_points(vnodes_per_weight, node);
    let label = node.label();
    // Reuse one buffer: only the trailing point number changes.
    let mut buf = point_label(label, 0);
    let tail = buf.len() - 4;
    for k in 0..count {
        buf[tail..].copy_from_slice(&k.to_le_bytes());
        out.push((hash64(hash, &buf), owner));
    }
}

/// How many points a node places: `vnodes_per_weight × weight`, or the
/// first `⌈ramp × that / 65,536⌉` of them when it is ramped below full.
pub fn placed_points(vnodes_per_weight: u32, node: &Node) -> u32 {
    let all = u64::from(vnodes_per_weight) * u64::from(node.weight.get());
    let ramp = u64::from(node.ramp.get());
    // At most 2^23 points times 2^16 parts: no overflow in u64.
    ((all * ramp).div_ceil(u64::from(super::node::RAMP_FULL))) as u32
}

/// Builds the continuum for `nodes` (active, sorted by id).
pub(crate) fn build(hash: HashFunction, vnodes_per_weight: u32, nodes: &[Node]) -> Continuum {
    let total: usize = nodes
        .iter()
        .map(|n| placed_points(vnodes_per_weight, n) as usize)
        .sum();
    let mut points = Vec::with_capacity(total);
    for (i, node) in nodes.iter().enumerate() {
        node_points(hash, vnodes_per_weight, node, i as u32, &mut points);
    }
    Continuum::from_unsorted(points, 64)
}

/// Total points `nodes` would place.
pub(crate) fn point_count(vnodes_per_weight: u32, nodes: &[Node]) -> u64 {
    nodes
        .iter()
        .map(|n| u64::from(vnodes_per_weight) * u64::from(n.weight.get()))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_length_prefixed_so_they_cannot_collide() {
        assert_ne!(point_label("node1", 1), point_label("node11", 0));
        assert_eq!(
            point_label("ab", 2),
            vec![2, 0, 0, 0, b'a', b'b', 2, 0, 0, 0]
        );
    }
}
