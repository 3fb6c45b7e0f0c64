//! The `table` algorithm's partition table: for each of `partitions`
//! partitions (a power of two), its replicas' nodes, primary first.
//!
//! Unlike the other algorithms a table is not a function of the node set
//! alone: each table is computed from the previous one, moving only what
//! the new quotas force, and is then stored with its version. Quotas are
//! exact: every node holds `⌊e⌋` or `⌈e⌉` of the `partitions × replicas`
//! slots, `e` its weighted share (within its zone, under the zone rule),
//! and is primary for `⌊e⌋` or `⌈e⌉` of the partitions, `e` its weighted
//! share of them. `docs/placement-spec.md` ("table") is normative.

mod assign;
mod exact;
mod flow;
mod flow_graph;
pub(crate) mod layout;
mod moves;
mod primary;
mod quota;
mod repair;
mod zone_rule;

use std::sync::Arc;

pub use assign::OPEN;
use assign::{assign, PrimaryHints, ZoneRule};
pub use moves::{Move, MovesError};
use quota::{apportion, bounds, Claim};

use super::node::Node;

// The bounds of a table's size live with the other bounds in `config`,
// which must not depend on the table: the table's layout uses `nodeset`,
// which uses `config`.
pub use super::config::{DEFAULT_PARTITIONS, MAX_PARTITIONS, MIN_PARTITIONS};

/// A partition table: `replicas` node indices per partition (indices into
/// the placement's nodes, in id order), the primary first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionTable {
    partitions: u32,
    replicas: usize,
    cells: Arc<[u32]>,
}

/// Why a table could not be computed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TableError {
    /// No assignment satisfies the quotas and the zone rule. The quotas
    /// always admit one (`docs/placement-spec.md` 5.6.4), so this is a
    /// defect, reported rather than answered with a wrong table.
    #[error("no assignment satisfies the quotas and the zone rule (partition {partition} has no node that may take a replica)")]
    Unassignable {
        /// The partition left without a replica.
        partition: usize,
    },
    /// A zone that must hold a replica of every partition has too little
    /// weight for that many: its nodes would hold more than their
    /// weighted share.
    #[error("zone {zone} has {weight} of the {total_weight} weight, too little to hold one replica of every partition")]
    ZoneTooLight {
        /// The zone's number (zones are numbered in name order).
        zone: usize,
        /// Its nodes' weight.
        weight: u64,
        /// All nodes' weight.
        total_weight: u64,
    },
}

impl PartitionTable {
    /// Number of partitions.
    pub fn partitions(&self) -> u32 {
        self.partitions
    }

    /// Replicas per partition: the replication factor, or the number of
    /// active nodes if that is smaller.
    pub fn replicas(&self) -> usize {
        self.replicas
    }

    /// Partition `p`'s nodes, primary first.
    pub fn row(&self, p: usize) -> &[u32] {
        &self.cells[p * self.replicas..(p + 1) * self.replicas]
    }

    /// Every partition's nodes, row after row.
    pub fn cells(&self) -> &[u32] {
        &self.cells
    }

    /// The partition a key hash falls in: its top `log2(partitions)` bits.
    #[inline]
    pub fn partition_of(&self, hash: u64) -> usize {
        (hash >> (64 - self.partitions.trailing_zeros())) as usize
    }

    /// A table from stored cells; `None` if they do not fit the shape or
    /// name a node beyond `nodes`.
    pub fn from_cells(
        partitions: u32,
        replicas: usize,
        cells: Vec<u32>,
        nodes: usize,
    ) -> Option<Self> {
        let fits = partitions.is_power_of_two()
            && cells.len() == partitions as usize * replicas
            && cells.iter().all(|&c| (c as usize) < nodes)
            && cells
                .chunks(replicas.max(1))
                .all(|row| (1..row.len()).all(|i| !row[..i].contains(&row[i])));
        fits.then(|| Self {
            partitions,
            replicas,
            cells: cells.into(),
        })
    }

    /// Computes the table for `nodes` (active, in id order), starting from
    /// `previous` (the previous table and the nodes its indices name).
    /// `zones` numbers each node's zone when the ring is zone-aware.
    pub fn compute(
        partitions: u32,
        replication_factor: usize,
        nodes: &[Node],
        zones: Option<(&[u32], usize)>,
        previous: Option<(&PartitionTable, &[Node])>,
    ) -> Result<Self, TableError> {
        let exact = partitions as usize * nodes.len() <= exact::EXACT_LIMIT;
        Self::compute_with(
            partitions,
            replication_factor,
            nodes,
            zones,
            previous,
            exact,
        )
    }

    /// [`PartitionTable::compute`], solved exactly by minimum-cost flow
    /// whatever the size: the least movement any assignment of the quotas
    /// has, at a cost that grows with `partitions × nodes × replicas`. For
    /// measuring the greedy passes against, in tests and benchmarks.
    pub fn compute_exact(
        partitions: u32,
        replication_factor: usize,
        nodes: &[Node],
        zones: Option<(&[u32], usize)>,
        previous: Option<(&PartitionTable, &[Node])>,
    ) -> Result<Self, TableError> {
        Self::compute_with(partitions, replication_factor, nodes, zones, previous, true)
    }

    fn compute_with(
        partitions: u32,
        replication_factor: usize,
        nodes: &[Node],
        zones: Option<(&[u32], usize)>,
        previous: Option<(&PartitionTable, &[Node])>,
        exact: bool,
    ) -> Result<Self, TableError> {
        let n = nodes.len();
        let r = replication_factor.min(n);
        let p = partitions as usize;
        if r == 0 {
            return Ok(Self {
                partitions,
                replicas: 0,
                cells: Arc::from([]),
            });
        }
        let rule = match zones {
            Some((of, count)) => ZoneRule::spread(of.to_vec(), count, r),
            None => ZoneRule::none(n, r),
        };
        too_light(r, nodes, &rule)?;
        let quotas = replica_quotas(p, r, nodes, &rule);
        let (previous_cells, previous_replicas, previous_primary) =
            carried_over(p, nodes, previous);
        let claims: Vec<Claim> = nodes
            .iter()
            .zip(&quotas)
            .map(|(node, &q)| Claim {
                weight: u64::from(node.weight.get()),
                lo: 0,
                hi: q,
            })
            .collect();
        let primary_bounds =
            bounds(p as u64, &claims).expect("replica quotas leave room for every primary");
        // Primaries each node must give up: those are the replicas it
        // gives up first when it has too many, so that a primary moves
        // with its data where it can instead of on its own.
        let mut drop_primary = vec![0u64; n];
        for &x in previous_primary.iter().filter(|&&x| x != OPEN) {
            drop_primary[x as usize] += 1;
        }
        for (d, b) in drop_primary.iter_mut().zip(&primary_bounds) {
            *d = d.saturating_sub(b.1);
        }
        let most_primaries: Vec<u64> = primary_bounds.iter().map(|b| b.1).collect();
        // Small tables are solved exactly; larger ones by the greedy passes,
        // whose movement the benchmarks compare with the least possible,
        // and which complete by augmenting paths where they get stuck.
        let cells = if exact {
            exact::exact(p, r, &quotas, &rule, &previous_cells, previous_replicas)
                .ok_or(TableError::Unassignable { partition: 0 })?
        } else {
            assign(
                p,
                r,
                &quotas,
                &rule,
                (&previous_cells, previous_replicas),
                PrimaryHints {
                    drop: &drop_primary,
                    most: &most_primaries,
                },
            )
            .map_err(|e| TableError::Unassignable {
                partition: e.partition,
            })?
            .cells
        };
        let slots = primary::primaries(&cells, r, &primary_bounds, &previous_primary);
        let mut cells = cells;
        for (row, &s) in cells.chunks_mut(r).zip(&slots) {
            row[..=s as usize].rotate_right(1);
        }
        Ok(Self {
            partitions,
            replicas: r,
            cells: cells.into(),
        })
    }
}

/// How far, in tenths, the zone rule may load a zone beyond its weighted
/// share before the table is refused: 110 %, the balance threshold
/// Cruise Control uses by default. Below it, an uneven split such as 34,
/// 33 and 33 nodes over three zones (a zone at 0.99 of the replicas it
/// must hold) is served with the zone's nodes a little over their weight.
const ZONE_LOAD_TENTHS: u128 = 11;

/// Refuses a rule that makes some zone hold a replica of every partition
/// when that is more than 110 % of its weighted share of the replicas:
/// weight stands for capacity, and such a zone's nodes would be loaded far
/// beyond theirs. (A rule that caps a zone below its share only leaves its
/// nodes below their weight, which the quotas allow.)
fn too_light(replicas: usize, nodes: &[Node], rule: &ZoneRule) -> Result<(), TableError> {
    if !rule.every_zone {
        return Ok(());
    }
    let mut zone_weight = vec![0u64; rule.zones];
    for (node, &z) in nodes.iter().zip(&rule.zone_of) {
        zone_weight[z as usize] += u64::from(node.weight.get());
    }
    let total: u64 = zone_weight.iter().sum();
    // p > 1.1 · w·r·p / W  ⇔  10·W > 11·w·r (p cancels).
    match zone_weight
        .iter()
        .position(|&w| 10 * u128::from(total) > ZONE_LOAD_TENTHS * u128::from(w) * replicas as u128)
    {
        Some(zone) => Err(TableError::ZoneTooLight {
            zone,
            weight: zone_weight[zone],
            total_weight: total,
        }),
        None => Ok(()),
    }
}

/// Each node's replica slots: zones first get their totals under the zone
/// rule, shared by weight; then each zone's nodes share its total by
/// weight. No node holds more than one replica of a partition.
fn replica_quotas(partitions: usize, replicas: usize, nodes: &[Node], rule: &ZoneRule) -> Vec<u64> {
    let p = partitions as u64;
    let total = p * replicas as u64;
    let mut zone_weight = vec![0u64; rule.zones];
    let mut zone_nodes = vec![0u64; rule.zones];
    for (node, &z) in nodes.iter().zip(&rule.zone_of) {
        zone_weight[z as usize] += u64::from(node.weight.get());
        zone_nodes[z as usize] += 1;
    }
    let zone_claims: Vec<Claim> = (0..rule.zones)
        .map(|z| Claim {
            weight: zone_weight[z],
            lo: if rule.every_zone { p } else { 0 },
            hi: zone_nodes[z].min(rule.max_per_zone as u64) * p,
        })
        .collect();
    let zone_totals = apportion(total, &zone_claims).expect("the zone rule can always be met");
    let mut quotas = vec![0u64; nodes.len()];
    for (z, &zone_total) in zone_totals.iter().enumerate() {
        let members: Vec<usize> = (0..nodes.len())
            .filter(|&i| rule.zone_of[i] as usize == z)
            .collect();
        let claims: Vec<Claim> = members
            .iter()
            .map(|&i| Claim {
                weight: u64::from(nodes[i].weight.get()),
                lo: 0,
                hi: p,
            })
            .collect();
        let shares = apportion(zone_total, &claims).expect("a zone's nodes can hold its total");
        for (&i, s) in members.iter().zip(shares) {
            quotas[i] = s;
        }
    }
    quotas
}

/// The previous table as the new one starts from: each new partition's
/// previous nodes as indices into `nodes` ([`OPEN`] for a node no longer
/// active), and its previous primary. A table with more partitions than
/// before starts each partition from the one it was split from; one with
/// fewer, from the first of those merged into it.
fn carried_over(
    partitions: usize,
    nodes: &[Node],
    previous: Option<(&PartitionTable, &[Node])>,
) -> (Vec<u32>, usize, Vec<u32>) {
    let Some((table, old_nodes)) = previous else {
        return (Vec::new(), 0, vec![OPEN; partitions]);
    };
    let r = table.replicas;
    if r == 0 {
        return (Vec::new(), 0, vec![OPEN; partitions]);
    }
    // Old index → new index, by id (both lists are in id order).
    let map: Vec<u32> = old_nodes
        .iter()
        .map(|n| {
            nodes
                .binary_search_by(|m| m.id.cmp(&n.id))
                .map_or(OPEN, |i| i as u32)
        })
        .collect();
    let (old_bits, new_bits) = (
        table.partitions.trailing_zeros(),
        partitions.trailing_zeros(),
    );
    let source = |p: usize| {
        if new_bits >= old_bits {
            p >> (new_bits - old_bits)
        } else {
            p << (old_bits - new_bits)
        }
    };
    let mut cells = Vec::with_capacity(partitions * r);
    let mut primary = Vec::with_capacity(partitions);
    for p in 0..partitions {
        let row = table.row(source(p));
        cells.extend(row.iter().map(|&c| map[c as usize]));
        primary.push(map[row[0] as usize]);
    }
    (cells, r, primary)
}
