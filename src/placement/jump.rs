//! `jump`: Lamping–Veach jump consistent hash over a persisted bucket order.
//!
//! Jump hash maps a 64-bit key to a bucket in `0..n` and only moves keys
//! into a new last bucket when `n` grows. ringd keeps an explicit bucket
//! order, one bucket per unit of weight, so a node's buckets stay put across
//! versions:
//!
//! - adding weight fills the lowest hole first, else appends buckets;
//! - removing a node (or weight) turns its buckets into holes, the
//!   highest-numbered ones first, and trailing holes are trimmed;
//! - a key whose bucket is a hole is re-hashed with
//!   `h ← fmix64(h + 0x9E3779B97F4A7C15)` and jumped again until it lands on
//!   a live bucket.
//!
//! So removing a node that is not last moves only that node's keys, spread
//! evenly over the live buckets, at the price of an expected
//! `buckets / live` jumps per lookup while holes remain.

use super::hash::fmix64;
use super::node::{Node, NodeId};

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

/// A bucket table of node indices, `None` for holes.
pub(crate) type Buckets = Vec<Option<u32>>;

/// The bucket of `key_hash`, skipping holes. `buckets` must hold at least
/// one live bucket and no trailing hole.
#[inline]
pub(crate) fn lookup(buckets: &[Option<u32>], mut h: u64) -> usize {
    let n = buckets.len() as u32;
    loop {
        let b = jump_hash(h, n) as usize;
        if buckets[b].is_some() {
            return b;
        }
        h = fmix64(h.wrapping_add(REHASH_INCREMENT));
    }
}

/// The bucket order for a fresh ring: nodes in id order, each taking as
/// many consecutive buckets as its weight.
pub fn initial_order(nodes: &[Node]) -> Vec<Option<NodeId>> {
    next_order(&[], nodes)
}

/// The bucket order after a change, derived from the previous order so
/// that unchanged nodes keep their buckets. `nodes` may include draining
/// nodes; only active ones get buckets.
pub fn next_order(previous: &[Option<NodeId>], nodes: &[Node]) -> Vec<Option<NodeId>> {
    let mut active: Vec<&Node> = nodes.iter().filter(|n| n.is_active()).collect();
    active.sort_by(|a, b| a.id.cmp(&b.id));
    let want = |id: &NodeId| -> u32 {
        active
            .binary_search_by(|n| n.id.cmp(id))
            .map_or(0, |i| active[i].weight.get())
    };
    // Keep each node's lowest-numbered buckets, up to its weight.
    let mut held: std::collections::BTreeMap<&NodeId, u32> = Default::default();
    let mut order: Vec<Option<NodeId>> = previous
        .iter()
        .map(|slot| {
            let id = slot.as_ref()?;
            let count = held.entry(id).or_insert(0);
            (*count < want(id)).then(|| {
                *count += 1;
                id.clone()
            })
        })
        .collect();
    // Then give missing buckets out in id order, lowest hole first.
    let mut holes = order
        .iter()
        .enumerate()
        .filter(|(_, s)| s.is_none())
        .map(|(i, _)| i)
        .collect::<Vec<_>>()
        .into_iter();
    for node in &active {
        for _ in held.get(&node.id).copied().unwrap_or(0)..node.weight.get() {
            match holes.next() {
                Some(i) => order[i] = Some(node.id.clone()),
                None => order.push(Some(node.id.clone())),
            }
        }
    }
    while matches!(order.last(), Some(None)) {
        order.pop();
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::node::{NodeState, Weight};

    fn node(id: &str, w: u64) -> Node {
        Node::new(NodeId::new(id).unwrap()).with_weight(Weight::new(w).unwrap())
    }

    fn ids(order: &[Option<NodeId>]) -> Vec<&str> {
        order
            .iter()
            .map(|s| s.as_ref().map_or("-", NodeId::as_str))
            .collect()
    }

    #[test]
    fn paper_value() {
        assert_eq!(jump_hash(256, 1024), 520);
        assert_eq!(jump_hash(0, 1), 0);
    }

    #[test]
    fn orders_keep_buckets_and_fill_holes() {
        let nodes = vec![node("b", 1), node("a", 2), node("c", 1)];
        let o1 = initial_order(&nodes);
        assert_eq!(ids(&o1), ["a", "a", "b", "c"]);
        // Remove `a` (not last): its buckets become holes.
        let o2 = next_order(&o1, &[node("b", 1), node("c", 1)]);
        assert_eq!(ids(&o2), ["-", "-", "b", "c"]);
        // A new node fills the lowest hole; extra weight appends.
        let o3 = next_order(&o2, &[node("b", 1), node("c", 2), node("d", 1)]);
        assert_eq!(ids(&o3), ["c", "d", "b", "c"]);
        // Draining the last node trims trailing holes.
        let o4 = next_order(
            &o3,
            &[
                node("b", 1),
                node("c", 1),
                node("d", 1).with_state(NodeState::Draining),
            ],
        );
        assert_eq!(ids(&o4), ["c", "-", "b"]);
    }
}
