//! Wire types for movement between two versions: the dry-run preview,
//! the result of a change and `GET …/diff`.

use serde::{Deserialize, Serialize};

use crate::placement::{DiffBasis, NodeId, PlacementDiff};

/// Most moved ranges one response lists; the rest are counted only, so a
/// diff of a large ring stays a reasonable size.
pub const MAX_MOVED_RANGES: usize = 1_000;

/// How a diff was computed.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum DiffBasisName {
    /// Exact, by sweeping hash ranges.
    Ranges,
    /// Exact, by comparing Maglev tables.
    TableEntries,
    /// Exact in jump's uniform model.
    JumpModel,
    /// Exact in rendezvous' model.
    RendezvousModel,
    /// Estimated from 65,536 sample keys (the versions hash differently).
    Sampled,
    /// Exact, by comparing `table` partitions.
    Partitions,
}

impl DiffBasisName {
    /// The name as sent on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ranges => "ranges",
            Self::TableEntries => "table_entries",
            Self::JumpModel => "jump_model",
            Self::RendezvousModel => "rendezvous_model",
            Self::Sampled => "sampled",
            Self::Partitions => "partitions",
        }
    }
}

impl From<DiffBasis> for DiffBasisName {
    fn from(b: DiffBasis) -> Self {
        match b {
            DiffBasis::Ranges => Self::Ranges,
            DiffBasis::TableEntries => Self::TableEntries,
            DiffBasis::JumpModel => Self::JumpModel,
            DiffBasis::RendezvousModel => Self::RendezvousModel,
            DiffBasis::Sampled => Self::Sampled,
            DiffBasis::Partitions => Self::Partitions,
        }
    }
}

/// One node's change in share.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct NodeMovementView {
    /// The node.
    pub id: String,
    /// Share before (0 if it was not active).
    pub before: f64,
    /// Share after (0 if it is no longer active).
    pub after: f64,
    /// Share it receives from other nodes.
    pub gained: f64,
    /// Share it hands to other nodes.
    pub lost: f64,
}

/// Keyspace moving between two nodes; `null` means no owner.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct TransferView {
    /// Previous owner.
    pub from: Option<String>,
    /// New owner.
    pub to: Option<String>,
    /// Share of the keyspace.
    pub fraction: f64,
}

/// A run of hash positions (or Maglev slots) that changes owner;
/// inclusive bounds as decimal strings.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct MovedRangeView {
    /// First position or slot.
    pub first: String,
    /// Last position or slot.
    pub last: String,
    /// Previous owner.
    pub from: Option<String>,
    /// New owner.
    pub to: Option<String>,
}

/// The movement between two versions.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct DiffView {
    /// How it was computed.
    pub basis: DiffBasisName,
    /// Share of all keys whose owner changes.
    pub moved_fraction: f64,
    /// Every node active on either side, in id order.
    pub nodes: Vec<NodeMovementView>,
    /// Non-zero transfers, ordered by (from, to).
    pub transfers: Vec<TransferView>,
    /// The first 1,000 moved ranges in ascending order (none for `jump`
    /// and `rendezvous`).
    pub moved_ranges: Vec<MovedRangeView>,
    /// How many moved ranges there are in all.
    pub moved_ranges_total: usize,
    /// Whether `moved_ranges` was cut at 1,000.
    pub moved_ranges_truncated: bool,
    /// `table` only: the first 100,000 replica slots that changed node,
    /// by partition and slot.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub table_moves: Vec<TableMoveView>,
    /// `table` only: how many slots changed node in all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_moves_total: Option<usize>,
    /// `table` only: whether `table_moves` was cut at 100,000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_moves_truncated: Option<bool>,
    /// `table` only: replicas placed on a node that held none of that
    /// partition before: the copies a migration makes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas_moved: Option<u64>,
}

/// One replica slot of a `table` partition given to another node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct TableMoveView {
    /// The partition.
    pub partition: u32,
    /// The slot in its row: 0 is the primary.
    pub slot: u8,
    /// The node that held the slot (`null` for a slot the row did not have).
    pub from: Option<String>,
    /// The node that holds it now.
    pub to: String,
}

/// Most table moves a diff lists.
pub const MAX_TABLE_MOVES: usize = 100_000;

impl From<&PlacementDiff> for DiffView {
    fn from(d: &PlacementDiff) -> Self {
        let id = |n: &Option<NodeId>| n.as_ref().map(ToString::to_string);
        let is_table = d.basis == DiffBasis::Partitions;
        Self {
            basis: d.basis.into(),
            moved_fraction: d.moved_fraction,
            nodes: d
                .nodes
                .iter()
                .map(|n| NodeMovementView {
                    id: n.id.to_string(),
                    before: n.before,
                    after: n.after,
                    gained: n.gained,
                    lost: n.lost,
                })
                .collect(),
            transfers: d
                .transfers
                .iter()
                .map(|t| TransferView {
                    from: id(&t.from),
                    to: id(&t.to),
                    fraction: t.fraction,
                })
                .collect(),
            moved_ranges: d
                .moved_ranges
                .iter()
                .take(MAX_MOVED_RANGES)
                .map(|r| MovedRangeView {
                    first: r.first.to_string(),
                    last: r.last.to_string(),
                    from: id(&r.from),
                    to: id(&r.to),
                })
                .collect(),
            moved_ranges_total: d.moved_ranges.len(),
            moved_ranges_truncated: d.moved_ranges.len() > MAX_MOVED_RANGES,
            table_moves: d
                .table_moves
                .iter()
                .take(MAX_TABLE_MOVES)
                .map(|m| TableMoveView {
                    partition: m.partition,
                    slot: m.slot,
                    from: id(&m.from),
                    to: m.to.to_string(),
                })
                .collect(),
            table_moves_total: is_table.then_some(d.table_moves.len()),
            table_moves_truncated: is_table.then_some(d.table_moves.len() > MAX_TABLE_MOVES),
            replicas_moved: is_table.then_some(d.replicas_moved),
        }
    }
}
