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

mod hash;
pub(crate) mod runs;

use super::node::{Node, NodeId};
pub use hash::{jump_hash, REHASH_INCREMENT};
use runs::{BucketRuns, RunsBuilder, HOLE};

/// The bucket order for a fresh ring: nodes in id order, each taking as
/// many consecutive buckets as its weight. This and [`next_order`] follow
/// the specification bucket by bucket; placements derive the same orders
/// on runs (see `next_runs`).
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

/// The initial order on runs, for `active` nodes sorted by id: one run
/// per node.
pub(crate) fn initial_runs(active: &[Node]) -> BucketRuns {
    let mut out = RunsBuilder::default();
    for (i, n) in active.iter().enumerate() {
        out.push(i as u32, n.weight.get().into());
    }
    out.finish()
}

/// [`next_order`] on runs, in O(runs + nodes) rather than per bucket.
/// `previous` holds indices into `old` (the previous active nodes, sorted
/// by id); the result holds indices into `active` (sorted by id).
///
/// Each pass of [`next_order`] treats the buckets of one run alike, up to
/// one split: pass 1 keeps a run's first buckets while its node still
/// wants some, and pass 2 fills the holes in ascending order with the
/// nodes' missing buckets in id order, which is one merge of the hole
/// runs with the list of what each node misses.
pub(crate) fn next_runs(previous: &BucketRuns, old: &[Node], active: &[Node]) -> BucketRuns {
    // Old index -> new index of the same id (both lists are sorted).
    let mut to_new = vec![HOLE; old.len()];
    let mut j = 0;
    for (i, n) in old.iter().enumerate() {
        while j < active.len() && active[j].id < n.id {
            j += 1;
        }
        if j < active.len() && active[j].id == n.id {
            to_new[i] = j as u32;
        }
    }
    let mut held = vec![0u64; active.len()];
    let mut kept: Vec<(u32, u64)> = Vec::with_capacity(previous.run_count() * 2);
    for (owner, count) in previous.runs() {
        let count = u64::from(count);
        let node = if owner == HOLE {
            HOLE
        } else {
            to_new[owner as usize]
        };
        if node == HOLE {
            kept.push((HOLE, count));
            continue;
        }
        let want = u64::from(active[node as usize].weight.get());
        let keep = count.min(want - held[node as usize]);
        held[node as usize] += keep;
        kept.push((node, keep));
        kept.push((HOLE, count - keep));
    }
    let mut missing = active
        .iter()
        .enumerate()
        .map(|(i, n)| (i as u32, u64::from(n.weight.get()) - held[i]))
        .filter(|&(_, m)| m > 0);
    let mut current = missing.next();
    let mut out = RunsBuilder::default();
    for (owner, mut count) in kept {
        if owner != HOLE {
            out.push(owner, count);
            continue;
        }
        while count > 0 {
            let Some((node, need)) = current.as_mut() else {
                out.push(HOLE, count);
                break;
            };
            let take = count.min(*need);
            out.push(*node, take);
            count -= take;
            *need -= take;
            if *need == 0 {
                current = missing.next();
            }
        }
    }
    while let Some((node, need)) = current {
        out.push(node, need);
        current = missing.next();
    }
    out.finish()
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
