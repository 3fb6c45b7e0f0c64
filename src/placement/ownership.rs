//! Exact ownership: each node's share of the keyspace next to its weight.

use serde::{Serialize, Serializer};

use super::jump::runs::HOLE;
use super::{haproxy, Layout, Node, NodeId, Placement};

/// What the ownership units count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OwnershipBasis {
    /// Arc lengths on the hash circle (`ring`: 2^64 positions, `ketama`: 2^32).
    Arcs,
    /// Maglev table entries.
    TableEntries,
    /// Live jump buckets: exact in jump's uniform model.
    Buckets,
    /// Weights: exact in rendezvous' exponential-race model.
    Weights,
    /// `table` partitions a node is primary for.
    Partitions,
}

/// One node's share.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeOwnership {
    /// The node.
    pub id: NodeId,
    /// Keyspace units owned, out of [`Ownership::total_units`]. Serialized
    /// as a decimal string: it can exceed what JSON numbers carry exactly.
    #[serde(serialize_with = "as_decimal")]
    pub units: u128,
    /// `units / total_units`.
    pub share: f64,
    /// The node's weight over the total weight.
    pub expected_share: f64,
    /// `share / expected_share`: 1.0 is perfect balance.
    pub ratio: f64,
    /// `table` only: the partition replicas the node holds, primary or
    /// not (its replica quota).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<u64>,
}

/// Every active node's share of the keyspace, computed from the layout in
/// one pass (O(points) or O(table)), never by sampling keys.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ownership {
    /// What the units count.
    pub basis: OwnershipBasis,
    /// Size of the keyspace in units; the nodes' units sum to exactly this.
    #[serde(serialize_with = "as_decimal")]
    pub total_units: u128,
    /// Per node, in id order.
    pub nodes: Vec<NodeOwnership>,
    /// The largest [`NodeOwnership::ratio`]: how far the most loaded node
    /// is above its fair share (with equal weights, max share over mean
    /// share); 0 with no nodes.
    pub max_over_mean: f64,
}

impl Placement {
    /// Keyspace units owned by each node (index order) and their total.
    pub(crate) fn units(&self) -> (OwnershipBasis, Vec<u128>, u128) {
        let mut units = vec![0u128; self.nodes.len()];
        let (basis, total) = match &self.layout {
            Layout::Ring(c)
            | Layout::Ketama(c)
            | Layout::Nginx(c)
            | Layout::Twemproxy(c)
            | Layout::EnvoyRingHash(c)
            | Layout::Haproxy(haproxy::Circle { boundaries: c, .. }) => {
                for arc in c.arcs() {
                    units[arc.owner as usize] += arc.len();
                }
                (OwnershipBasis::Arcs, c.space())
            }
            Layout::Maglev(t) => {
                for &i in t {
                    units[i as usize] += 1;
                }
                (OwnershipBasis::TableEntries, t.len() as u128)
            }
            Layout::Jump(b) => {
                for (owner, count) in b.runs().filter(|&(o, _)| o != HOLE) {
                    units[owner as usize] += u128::from(count);
                }
                (OwnershipBasis::Buckets, units.iter().sum())
            }
            Layout::Rendezvous { weights, .. } => {
                // Units are weights; a ramped placement counts them in
                // parts of 65,536 (`weight × ramp`), an unramped one as
                // the weights themselves.
                let unit = if self.is_ramped() {
                    1
                } else {
                    u64::from(super::RAMP_FULL)
                };
                for (u, &w) in units.iter_mut().zip(weights) {
                    *u = (w / unit).into();
                }
                (OwnershipBasis::Weights, units.iter().sum())
            }
            Layout::Table(t) => {
                for p in 0..t.partitions() as usize {
                    if let Some(&primary) = t.row(p).first() {
                        units[primary as usize] += 1;
                    }
                }
                (OwnershipBasis::Partitions, t.partitions().into())
            }
        };
        // With no active node nothing is owned; report an empty total.
        let total = if self.nodes.is_empty() { 0 } else { total };
        (basis, units, total)
    }

    /// Each node's exact share of the keyspace and its weight share.
    pub fn ownership(&self) -> Ownership {
        let (basis, units, total) = self.units();
        let mut replicas = self.partition_table().map(|t| {
            let mut held = vec![0u64; self.nodes.len()];
            for &c in t.cells() {
                held[c as usize] += 1;
            }
            held.into_iter()
        });
        // `weight × ramp`: the weight share a ramped node should hold.
        let weight_total: u64 = self.nodes.iter().map(Node::scaled_weight).sum();
        let nodes: Vec<NodeOwnership> = self
            .nodes
            .iter()
            .zip(units)
            .map(|(n, u)| {
                let share = u as f64 / total as f64;
                let expected = n.scaled_weight() as f64 / weight_total as f64;
                NodeOwnership {
                    id: n.id.clone(),
                    units: u,
                    share,
                    expected_share: expected,
                    ratio: share / expected,
                    replicas: replicas.as_mut().and_then(Iterator::next),
                }
            })
            .collect();
        let max_over_mean = nodes.iter().map(|n| n.ratio).fold(0.0, f64::max);
        Ownership {
            basis,
            total_units: total,
            nodes,
            max_over_mean,
        }
    }
}

/// Writes a `u128` as a decimal string.
pub(crate) fn as_decimal<S: Serializer>(v: &u128, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}
