//! `haproxy`: HAProxy 2.6's `hash-type consistent` (spec 5.8), bit for bit.
//!
//! HAProxy gives a server of weight `w` the points
//! `full_hash(id × 4096 + k)`, `k < 16 × w`, where `id` is the server's
//! numeric id, and sends a key to the point *nearest* its hash, the one
//! before it on a tie. ringd keeps every node's id for life
//! (`ring::ServerIds`), so a node keeps its points whatever else changes.
//!
//! The nearest-point rule is a successor rule over other points: point `j`
//! wins every position from the one after the previous point's last win up
//! to `p_j + ⌊gap_j / 2⌋` (`gap_j` the distance to the next point). A
//! `Continuum` of those last positions ("boundaries") therefore answers
//! owners, ownership arcs, diffs and successor walks with the code `ring`
//! and `ketama` use; the points themselves are kept for the encoding.

pub mod hashes;

use std::collections::BTreeMap;

use super::continuum::Continuum;
use super::{HashFunction, Node, NodeId, PlacementError};

/// Points per unit of weight: HAProxy's `BE_WEIGHT_SCALE`.
pub const POINTS_PER_WEIGHT: u32 = 16;
/// The stride between two servers' point inputs: HAProxy's
/// `SRV_EWGHT_RANGE` (256 weights × 16 points).
pub const ID_STRIDE: u32 = 4096;
/// The largest weight HAProxy takes.
pub const MAX_WEIGHT: u32 = 256;
/// The largest server id ringd gives: `id × 4096 + k` stays below 2^32,
/// so (`full_hash` being a bijection) no two points ever share a key.
pub const MAX_SERVER_ID: u32 = (1 << 20) - 1;

/// A key's position: HAProxy's hash of it, then `full_hash` when the
/// ring has the avalanche modifier.
#[inline]
pub fn key_hash(f: HashFunction, avalanche: bool, key: &[u8]) -> u32 {
    let h = hashes::hash32(f, key);
    if avalanche {
        hashes::full_hash(h)
    } else {
        h
    }
}

/// The key of point `k` of the server with id `server_id`.
#[inline]
pub fn point_key(server_id: u32, k: u32) -> u32 {
    hashes::full_hash(server_id.wrapping_mul(ID_STRIDE).wrapping_add(k))
}

/// A `haproxy` placement's layout.
#[derive(Debug, Clone)]
pub(crate) struct Circle {
    /// HAProxy's points: `(key, node index)`, ascending by key.
    points: Vec<(u32, u32)>,
    /// The last position each point wins, as a successor-rule circle.
    pub boundaries: Continuum,
    /// Each node's server id, in node index order.
    pub server_ids: Vec<u32>,
}

impl Circle {
    /// HAProxy's points, ascending by key, with their node indices.
    pub(crate) fn points(&self) -> &[(u32, u32)] {
        &self.points
    }
}

/// Points of every active node (`server_ids[i]` is node `i`'s id).
pub(crate) fn build(active: &[Node], server_ids: Vec<u32>) -> Circle {
    let mut points: Vec<(u32, u32)> = Vec::new();
    for (i, (node, &id)) in active.iter().zip(&server_ids).enumerate() {
        let count = POINTS_PER_WEIGHT * node.weight.get();
        points.extend((0..count).map(|k| (point_key(id, k), i as u32)));
    }
    points.sort_unstable();
    let n = points.len();
    let boundaries = (0..n)
        .map(|j| {
            let (key, owner) = points[j];
            // The distance to the next point round the circle; 2^32 for a
            // lone point, which then wins everything.
            let next = points[(j + 1) % n].0;
            let gap = (u64::from(next) + (1 << 32) - u64::from(key) - 1) % (1 << 32) + 1;
            ((u64::from(key) + gap / 2) & 0xffff_ffff, owner)
        })
        .collect();
    Circle {
        points,
        boundaries: Continuum::from_unsorted(boundaries, 32),
        server_ids,
    }
}

/// Checks that every active node has a server id in 1 ..= [`MAX_SERVER_ID`]
/// and that no two share one; returns the ids in node index order.
pub(crate) fn ids_of(
    active: &[Node],
    ids: &BTreeMap<NodeId, u32>,
) -> Result<Vec<u32>, PlacementError> {
    let mut out = Vec::with_capacity(active.len());
    let mut seen: BTreeMap<u32, &NodeId> = BTreeMap::new();
    for node in active {
        let id = *ids.get(&node.id).ok_or_else(|| {
            PlacementError::InvalidServerIds(format!("active node `{}` has no server id", node.id))
        })?;
        if id == 0 || id > MAX_SERVER_ID {
            return Err(PlacementError::InvalidServerIds(format!(
                "node `{}` has server id {id}: ids run from 1 to {MAX_SERVER_ID}",
                node.id
            )));
        }
        if let Some(other) = seen.insert(id, &node.id) {
            return Err(PlacementError::InvalidServerIds(format!(
                "nodes `{other}` and `{}` share server id {id}",
                node.id
            )));
        }
        out.push(id);
    }
    Ok(out)
}

/// The ids of a ring that becomes `haproxy` (or a placement built from
/// scratch): every node, in any state, in id order, numbered from 1.
pub fn initial_ids(nodes: &[Node]) -> BTreeMap<NodeId, u32> {
    let mut ids: Vec<&NodeId> = nodes.iter().map(|n| &n.id).collect();
    ids.sort();
    ids.dedup();
    ids.into_iter().cloned().zip(1..).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::Weight;

    fn node(id: &str, weight: u32) -> Node {
        Node::new(NodeId::new(id).unwrap()).with_weight(Weight::new(weight.into()).unwrap())
    }

    /// The nearest point by HAProxy's own steps: the first point at or
    /// after `h` (wrapping), the one before it, and the smaller distance,
    /// the previous one on a tie.
    fn nearest(points: &[(u32, u32)], h: u32) -> u32 {
        let next = points.iter().position(|p| p.0 >= h).unwrap_or(0);
        let prev = (next + points.len() - 1) % points.len();
        let dp = h.wrapping_sub(points[prev].0);
        let dn = points[next].0.wrapping_sub(h);
        if dp <= dn {
            points[prev].1
        } else {
            points[next].1
        }
    }

    #[test]
    fn boundaries_answer_the_nearest_point() {
        let active = [node("a", 1), node("b", 2), node("c", 1)];
        let circle = build(&active, vec![3, 1, 7]);
        assert_eq!(circle.points().len(), 64);
        let mut probes: Vec<u32> = vec![0, 1, u32::MAX, u32::MAX - 1];
        for w in circle.points().windows(2) {
            let (a, b) = (w[0].0, w[1].0);
            let mid = a + (b - a) / 2;
            probes.extend([a, b, mid.wrapping_sub(1), mid, mid + 1, a + 1, b - 1]);
        }
        for k in 0..20_000u32 {
            probes.push(k.wrapping_mul(0x9E37_79B9));
        }
        for h in probes {
            assert_eq!(
                circle.boundaries.owner(u64::from(h)),
                Some(nearest(circle.points(), h)),
                "h = {h}"
            );
        }
    }

    #[test]
    fn a_lone_point_wins_everything() {
        let circle = build(&[node("a", 1)], vec![1]);
        for h in [0u64, 1 << 31, u32::MAX.into()] {
            assert_eq!(circle.boundaries.owner(h), Some(0));
        }
        let arcs: u128 = circle.boundaries.arcs().map(|a| a.len()).sum();
        assert_eq!(arcs, 1 << 32);
    }

    #[test]
    fn ids_are_checked() {
        let active = [node("a", 1), node("b", 1)];
        let ids = |pairs: &[(&str, u32)]| -> BTreeMap<NodeId, u32> {
            pairs
                .iter()
                .map(|&(n, i)| (NodeId::new(n).unwrap(), i))
                .collect()
        };
        assert_eq!(ids_of(&active, &ids(&[("a", 4), ("b", 2)])), Ok(vec![4, 2]));
        for bad in [
            ids(&[("a", 1)]),
            ids(&[("a", 1), ("b", 1)]),
            ids(&[("a", 0), ("b", 1)]),
            ids(&[("a", MAX_SERVER_ID + 1), ("b", 1)]),
        ] {
            assert!(matches!(
                ids_of(&active, &bad),
                Err(PlacementError::InvalidServerIds(_))
            ));
        }
        let all = [node("b", 1), node("a", 1), node("c", 1)];
        assert_eq!(initial_ids(&all), ids(&[("a", 1), ("b", 2), ("c", 3)]));
    }
}
