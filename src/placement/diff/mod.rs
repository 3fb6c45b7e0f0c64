//! What moves between two placements: the moved fraction, each node's gain
//! and loss, the from→to transfer matrix and, where the algorithm has hash
//! ranges, the exact moved ranges a migration tool copies.

use serde::Serialize;

mod model;
mod sweep;
mod tally;

use super::{Layout, NodeId, Placement};
use tally::{Tally, NONE};

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
    /// Exact, by comparing two `table`s' partitions: a key moves when its
    /// partition's primary does.
    Partitions,
    /// Estimated from 65,536 sample keys: the two placements hash keys
    /// differently (another algorithm, hash or table size), so nothing
    /// lines up to compare exactly.
    Sampled,
}

/// Number of keys a sampled diff evaluates.
pub(super) const SAMPLE_KEYS: u32 = 65_536;

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
    /// Moved ranges in ascending order; empty for algorithms without
    /// ranges. For `table`, runs of partitions whose primary changed
    /// (`first` and `last` are partition numbers).
    pub moved_ranges: Vec<MovedRange>,
    /// `table` only: every replica slot that changed node, by partition
    /// and slot (empty otherwise).
    pub table_moves: Vec<super::table::Move>,
    /// `table` only: replicas placed on a node that did not hold one of
    /// that partition before (the data that must be copied); a slot move
    /// between two nodes of the same row is not one.
    pub replicas_moved: u64,
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
            (Layout::Ring(a), Layout::Ring(b))
            | (Layout::Ketama(a), Layout::Ketama(b))
            | (Layout::Nginx(a), Layout::Nginx(b))
                if same_hash =>
            {
                sweep::sweep_arcs(&mut tally, a, b);
                DiffBasis::Ranges
            }
            // Positions after the avalanche modifier, a bijection: the
            // moved share of positions is the moved share of key hashes.
            (Layout::Haproxy(a), Layout::Haproxy(b))
                if same_hash && self.config.avalanche == to.config.avalanche =>
            {
                sweep::sweep_arcs(&mut tally, &a.boundaries, &b.boundaries);
                DiffBasis::Ranges
            }
            // Another hash tag hashes other bytes of the same keys.
            (Layout::Twemproxy(a), Layout::Twemproxy(b))
                if same_hash && self.config.hash_tag == to.config.hash_tag =>
            {
                sweep::sweep_arcs(&mut tally, a, b);
                DiffBasis::Ranges
            }
            (Layout::Maglev(a), Layout::Maglev(b))
                if same_hash && self.config.table_size == to.config.table_size =>
            {
                sweep::sweep_tables(&mut tally, a, b, self.config.table_size);
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
            (Layout::Table(a), Layout::Table(b))
                if same_hash && a.partitions() == b.partitions() =>
            {
                let owners = |t: &super::table::PartitionTable| -> Vec<u32> {
                    (0..t.partitions() as usize)
                        .map(|p| t.row(p).first().copied().unwrap_or(NONE))
                        .collect()
                };
                let size = u64::from(a.partitions());
                sweep::sweep_tables(&mut tally, &owners(a), &owners(b), size);
                let mut diff = tally.finish(DiffBasis::Partitions);
                diff.table_moves =
                    super::table::PartitionTable::moves(a, &self.nodes, b, &to.nodes);
                diff.replicas_moved = (0..a.partitions() as usize)
                    .map(|p| {
                        let old: Vec<&NodeId> = a
                            .row(p)
                            .iter()
                            .map(|&x| &self.nodes[x as usize].id)
                            .collect();
                        b.row(p)
                            .iter()
                            .filter(|&&y| !old.contains(&&to.nodes[y as usize].id))
                            .count() as u64
                    })
                    .sum();
                return diff;
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
