//! The tally every diff method fills: mass moving between old and new node
//! indices, and the moved ranges, turned into a [`PlacementDiff`] at the end.

use std::collections::BTreeMap;

use super::{DiffBasis, MovedRange, NodeMovement, PlacementDiff, Transfer};
use crate::placement::{NodeId, Placement};

/// Collects movement keyed by node indices on each side.
pub(super) struct Tally<'a> {
    from: &'a Placement,
    to: &'a Placement,
    /// For each old node index, the new index of the same id (or `NONE`).
    old_to_new: Vec<u32>,
    /// (old index or u32::MAX for none, new index or u32::MAX) → mass.
    flows: BTreeMap<(u32, u32), f64>,
    ranges: Vec<MovedRange>,
}

/// The index standing for "no owner" on either side.
pub(super) const NONE: u32 = u32::MAX;

impl<'a> Tally<'a> {
    pub(super) fn new(from: &'a Placement, to: &'a Placement) -> Self {
        // Both node lists are sorted by id, so one merge pass pairs them up;
        // the sweeps then compare owners as integers, not strings.
        let mut old_to_new = vec![NONE; from.nodes.len()];
        let mut j = 0;
        for (i, n) in from.nodes.iter().enumerate() {
            while j < to.nodes.len() && to.nodes[j].id < n.id {
                j += 1;
            }
            if j < to.nodes.len() && to.nodes[j].id == n.id {
                old_to_new[i] = j as u32;
            }
        }
        Self {
            from,
            to,
            old_to_new,
            flows: BTreeMap::new(),
            ranges: Vec::new(),
        }
    }

    /// Whether old index `a` and new index `b` are the same node.
    #[inline]
    pub(super) fn same(&self, a: u32, b: u32) -> bool {
        if a == NONE {
            b == NONE
        } else {
            b != NONE && self.old_to_new[a as usize] == b
        }
    }

    /// Records `mass` moving from old `a` to new `b` (ignored if same node).
    pub(super) fn flow(&mut self, a: u32, b: u32, mass: f64) {
        if mass > 0.0 && !self.same(a, b) {
            *self.flows.entry((a, b)).or_insert(0.0) += mass;
        }
    }

    /// Records a moved run, extending the previous one when contiguous.
    pub(super) fn range(&mut self, first: u64, last: u64, a: u32, b: u32) {
        let (from, to) = (self.old_id(a), self.new_id(b));
        if let Some(prev) = self.ranges.last_mut() {
            if prev.last.checked_add(1) == Some(first) && prev.from == from && prev.to == to {
                prev.last = last;
                return;
            }
        }
        self.ranges.push(MovedRange {
            first,
            last,
            from,
            to,
        });
    }

    fn old_id(&self, a: u32) -> Option<NodeId> {
        (a != NONE).then(|| self.from.nodes[a as usize].id.clone())
    }

    fn new_id(&self, b: u32) -> Option<NodeId> {
        (b != NONE).then(|| self.to.nodes[b as usize].id.clone())
    }

    pub(super) fn finish(self, basis: DiffBasis) -> PlacementDiff {
        let before = self.from.shares();
        let after = self.to.shares();
        let mut by_id: BTreeMap<NodeId, NodeMovement> = BTreeMap::new();
        let blank = |id: &NodeId| NodeMovement {
            id: id.clone(),
            before: 0.0,
            after: 0.0,
            gained: 0.0,
            lost: 0.0,
        };
        for (n, s) in self.from.nodes.iter().zip(&before) {
            by_id
                .entry(n.id.clone())
                .or_insert_with(|| blank(&n.id))
                .before = *s;
        }
        for (n, s) in self.to.nodes.iter().zip(&after) {
            by_id
                .entry(n.id.clone())
                .or_insert_with(|| blank(&n.id))
                .after = *s;
        }
        let mut transfers = Vec::with_capacity(self.flows.len());
        let mut moved = 0.0;
        for (&(a, b), &mass) in &self.flows {
            let (from, to) = (self.old_id(a), self.new_id(b));
            if let Some(id) = &from {
                by_id.get_mut(id).expect("old node listed").lost += mass;
            }
            if let Some(id) = &to {
                by_id.get_mut(id).expect("new node listed").gained += mass;
            }
            moved += mass;
            transfers.push(Transfer {
                from,
                to,
                fraction: mass,
            });
        }
        transfers.sort_by(|x, y| (&x.from, &x.to).cmp(&(&y.from, &y.to)));
        PlacementDiff {
            basis,
            moved_fraction: moved,
            nodes: by_id.into_values().collect(),
            transfers,
            moved_ranges: self.ranges,
            table_moves: Vec::new(),
            replicas_moved: 0,
        }
    }
}
