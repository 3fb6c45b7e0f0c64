//! What moves between two placements: the moved fraction, each node's gain
//! and loss, the from→to transfer matrix and, where the algorithm has hash
//! ranges, the exact moved ranges a migration tool copies.

use std::collections::BTreeMap;

use serde::Serialize;

mod model;

use super::continuum::{Arc, Continuum};
use super::{Layout, NodeId, Placement};

/// How a diff was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DiffBasis {
    /// Exact, by sweeping both sets of arcs over the hash circle.
    Ranges,
    /// Exact, by comparing Maglev tables slot by slot.
    TableEntries,
    /// Exact in jump's uniform model (no hash ranges exist).
    JumpModel,
    /// Exact in rendezvous' exponential-race model (no hash ranges exist).
    RendezvousModel,
    /// Estimated from 65,536 sample keys: the two placements hash keys
    /// differently (another algorithm, hash or table size), so nothing
    /// lines up to compare exactly.
    Sampled,
}

/// Number of keys a sampled diff evaluates.
pub const SAMPLE_KEYS: u32 = 65_536;

/// One node's change in share.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeMovement {
    /// The node.
    pub id: NodeId,
    /// Share before (0 if it was not active).
    pub before: f64,
    /// Share after (0 if it is no longer active).
    pub after: f64,
    /// Share of keyspace it receives from other nodes.
    pub gained: f64,
    /// Share of keyspace it hands to other nodes.
    pub lost: f64,
}

/// Keyspace moving from one node to another. `None` stands for "no
/// owner": the side of the diff with no active node.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Transfer {
    /// Previous owner.
    pub from: Option<NodeId>,
    /// New owner.
    pub to: Option<NodeId>,
    /// Share of the keyspace.
    pub fraction: f64,
}

/// A maximal run of hash positions (`ring`, `ketama`) or table slots
/// (`maglev`) that changes owner; bounds are inclusive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MovedRange {
    /// First position or slot.
    pub first: u64,
    /// Last position or slot.
    pub last: u64,
    /// Previous owner.
    pub from: Option<NodeId>,
    /// New owner.
    pub to: Option<NodeId>,
}

/// The movement between two placements.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlacementDiff {
    /// How it was computed.
    pub basis: DiffBasis,
    /// Share of all keys whose owner changes.
    pub moved_fraction: f64,
    /// Every node active on either side, in id order.
    pub nodes: Vec<NodeMovement>,
    /// Non-zero transfers, ordered by (from, to).
    pub transfers: Vec<Transfer>,
    /// Moved ranges in ascending order; empty for algorithms without ranges.
    pub moved_ranges: Vec<MovedRange>,
}

/// Collects movement keyed by node indices on each side.
pub(crate) struct Tally<'a> {
    from: &'a Placement,
    to: &'a Placement,
    /// For each old node index, the new index of the same id (or `NONE`).
    old_to_new: Vec<u32>,
    /// (old index or u32::MAX for none, new index or u32::MAX) → mass.
    flows: BTreeMap<(u32, u32), f64>,
    ranges: Vec<MovedRange>,
}

pub(crate) const NONE: u32 = u32::MAX;

impl<'a> Tally<'a> {
    pub(crate) fn new(from: &'a Placement, to: &'a Placement) -> Self {
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
    pub(crate) fn same(&self, a: u32, b: u32) -> bool {
        if a == NONE {
            b == NONE
        } else {
            b != NONE && self.old_to_new[a as usize] == b
        }
    }

    /// Records `mass` moving from old `a` to new `b` (ignored if same node).
    pub(crate) fn flow(&mut self, a: u32, b: u32, mass: f64) {
        if mass > 0.0 && !self.same(a, b) {
            *self.flows.entry((a, b)).or_insert(0.0) += mass;
        }
    }

    /// Records a moved run, extending the previous one when contiguous.
    fn range(&mut self, first: u64, last: u64, a: u32, b: u32) {
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

    pub(crate) fn finish(self, basis: DiffBasis) -> PlacementDiff {
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
        }
    }
}

impl Placement {
    /// Each active node's share of the keyspace, in index order.
    pub(crate) fn shares(&self) -> Vec<f64> {
        let (_, units, total) = self.units();
        units.iter().map(|&u| u as f64 / total as f64).collect()
    }

    /// What moves from this placement to `to`. Exact whenever both hash
    /// keys the same way; otherwise estimated from sample keys (see
    /// [`DiffBasis::Sampled`]).
    pub fn diff(&self, to: &Placement) -> PlacementDiff {
        let mut tally = Tally::new(self, to);
        let same_hash = self.config.hash == to.config.hash;
        let basis = match (&self.layout, &to.layout) {
            (Layout::Ring(a), Layout::Ring(b)) | (Layout::Ketama(a), Layout::Ketama(b))
                if same_hash =>
            {
                sweep_arcs(&mut tally, a, b);
                DiffBasis::Ranges
            }
            (Layout::Maglev(a), Layout::Maglev(b))
                if same_hash && self.config.table_size == to.config.table_size =>
            {
                sweep_tables(&mut tally, a, b, self.config.table_size);
                DiffBasis::TableEntries
            }
            (Layout::Jump(a), Layout::Jump(b)) if same_hash => {
                model::jump(&mut tally, a, b);
                DiffBasis::JumpModel
            }
            (Layout::Rendezvous { .. }, Layout::Rendezvous { .. }) if same_hash => {
                model::rendezvous(&mut tally, self, to);
                DiffBasis::RendezvousModel
            }
            _ => {
                let unit = 1.0 / f64::from(SAMPLE_KEYS);
                for i in 0..SAMPLE_KEYS {
                    let key = format!("ringd-sample-{i}");
                    let a = self.owner_index(key.as_bytes()).map_or(NONE, |i| i as u32);
                    let b = to.owner_index(key.as_bytes()).map_or(NONE, |i| i as u32);
                    tally.flow(a, b, unit);
                }
                DiffBasis::Sampled
            }
        };
        tally.finish(basis)
    }
}

/// Arcs covering the whole circle, with `NONE` owning it all when empty.
fn cover(c: &Continuum) -> Box<dyn Iterator<Item = Arc> + '_> {
    if c.len() == 0 {
        Box::new(std::iter::once(Arc {
            first: 0,
            last: c.space() - 1,
            owner: NONE,
        }))
    } else {
        Box::new(c.arcs())
    }
}

fn sweep_arcs(tally: &mut Tally<'_>, a: &Continuum, b: &Continuum) {
    // Sum exact arc lengths per (from, to) and divide once at the end, so
    // that fractions carry a single rounding.
    let mut moved: BTreeMap<(u32, u32), u128> = BTreeMap::new();
    let mut xs = cover(a);
    let mut ys = cover(b);
    let (mut x, mut y) = (xs.next(), ys.next());
    let mut cursor = 0u128;
    while let (Some(xa), Some(ya)) = (x, y) {
        let end = xa.last.min(ya.last);
        if !tally.same(xa.owner, ya.owner) {
            *moved.entry((xa.owner, ya.owner)).or_insert(0) += end - cursor + 1;
            tally.range(cursor as u64, end as u64, xa.owner, ya.owner);
        }
        cursor = end + 1;
        if xa.last == end {
            x = xs.next();
        }
        if ya.last == end {
            y = ys.next();
        }
    }
    let space = a.space() as f64;
    for ((from, to), units) in moved {
        tally.flow(from, to, units as f64 / space);
    }
}

fn sweep_tables(tally: &mut Tally<'_>, a: &[u32], b: &[u32], size: u64) {
    let mut moved: BTreeMap<(u32, u32), u64> = BTreeMap::new();
    for slot in 0..size as usize {
        let x = a.get(slot).copied().unwrap_or(NONE);
        let y = b.get(slot).copied().unwrap_or(NONE);
        if !tally.same(x, y) {
            *moved.entry((x, y)).or_insert(0) += 1;
            tally.range(slot as u64, slot as u64, x, y);
        }
    }
    for ((from, to), slots) in moved {
        tally.flow(from, to, slots as f64 / size as f64);
    }
}
