//! The moves between two partition tables: what changed, slot by slot, by
//! node id. A version's moves are what a watcher is sent instead of the
//! whole table, what the store keeps between full tables, and what the
//! diff of a `table` change lists.

use super::PartitionTable;
use crate::placement::node::{Node, NodeId};

/// One slot of one partition given to another node.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Move {
    /// The partition.
    pub partition: u32,
    /// The slot in its row: 0 is the primary.
    pub slot: u8,
    /// The node that held the slot, if the row had it.
    pub from: Option<NodeId>,
    /// The node that holds it now.
    pub to: NodeId,
}

/// Why moves could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MovesError {
    /// The tables do not have the same shape.
    #[error("the moves are for {partitions} partitions × {replicas} replicas")]
    Shape {
        /// Partitions the moves are for.
        partitions: u32,
        /// Replicas per partition the moves are for.
        replicas: usize,
    },
    /// A move names a slot that does not hold its `from` node.
    #[error("partition {partition} slot {slot} does not hold the node the move takes it from")]
    Stale {
        /// The partition.
        partition: u32,
        /// The slot.
        slot: u8,
    },
    /// A node the result names is not among the nodes given.
    #[error("the moves name node `{0}`, which is not active")]
    UnknownNode(NodeId),
    /// The result would hold one node twice in a partition.
    #[error("the moves put one node twice into partition {0}")]
    Duplicate(u32),
}

impl PartitionTable {
    /// The slots of `after` (over `after_nodes`) that differ from `before`
    /// (over `before_nodes`), by partition and slot. Both tables must have
    /// the same partitions; a slot beyond `before`'s replicas has no
    /// `from`.
    pub fn moves(
        before: &PartitionTable,
        before_nodes: &[Node],
        after: &PartitionTable,
        after_nodes: &[Node],
    ) -> Vec<Move> {
        let mut out = Vec::new();
        for p in 0..after.partitions as usize {
            let row = after.row(p);
            let old = if before.partitions == after.partitions && before.replicas > 0 {
                before.row(p)
            } else {
                &[]
            };
            for (s, &x) in row.iter().enumerate() {
                let to = &after_nodes[x as usize].id;
                let from = old.get(s).map(|&y| &before_nodes[y as usize].id);
                if from != Some(to) {
                    out.push(Move {
                        partition: p as u32,
                        slot: s as u8,
                        from: from.cloned(),
                        to: to.clone(),
                    });
                }
            }
        }
        out
    }

    /// `before` (over `before_nodes`) with `moves` applied, as a table of
    /// `replicas` per partition over `after_nodes`: the inverse of
    /// [`PartitionTable::moves`].
    pub fn apply_moves(
        before: &PartitionTable,
        before_nodes: &[Node],
        moves: &[Move],
        replicas: usize,
        after_nodes: &[Node],
    ) -> Result<PartitionTable, MovesError> {
        let index = |id: &NodeId| {
            after_nodes
                .binary_search_by(|n| n.id.cmp(id))
                .map(|i| i as u32)
                .map_err(|_| MovesError::UnknownNode(id.clone()))
        };
        let partitions = before.partitions as usize;
        // Rows as ids first: nodes may have left, and indices shift.
        let mut rows: Vec<Vec<Option<&NodeId>>> = (0..partitions)
            .map(|p| {
                let mut row: Vec<Option<&NodeId>> = if before.replicas > 0 {
                    before
                        .row(p)
                        .iter()
                        .map(|&x| Some(&before_nodes[x as usize].id))
                        .collect()
                } else {
                    Vec::new()
                };
                row.resize(replicas, None);
                row
            })
            .collect();
        for m in moves {
            let (p, s) = (m.partition as usize, m.slot as usize);
            if p >= partitions || s >= replicas {
                return Err(MovesError::Shape {
                    partitions: before.partitions,
                    replicas,
                });
            }
            if rows[p][s] != m.from.as_ref() {
                return Err(MovesError::Stale {
                    partition: m.partition,
                    slot: m.slot,
                });
            }
            rows[p][s] = Some(&m.to);
        }
        let mut cells = Vec::with_capacity(partitions * replicas);
        for (p, row) in rows.into_iter().enumerate() {
            for (s, id) in row.into_iter().enumerate() {
                let id = id.ok_or(MovesError::Stale {
                    partition: p as u32,
                    slot: s as u8,
                })?;
                let x = index(id)?;
                if cells[p * replicas..].contains(&x) {
                    return Err(MovesError::Duplicate(p as u32));
                }
                cells.push(x);
            }
        }
        Ok(PartitionTable {
            partitions: before.partitions,
            replicas,
            cells: cells.into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::node::Weight;

    fn nodes(ids: &[&str]) -> Vec<Node> {
        ids.iter()
            .map(|id| Node::new(NodeId::new(*id).unwrap()))
            .collect()
    }

    #[test]
    fn moves_rebuild_the_next_table_and_name_every_changed_slot() {
        let before_nodes = nodes(&["a", "b", "c"]);
        let before = PartitionTable::compute(256, 2, &before_nodes, None, None).unwrap();
        let mut after_nodes = nodes(&["a", "c", "d"]);
        after_nodes[2].weight = Weight::new(2).unwrap();
        let after =
            PartitionTable::compute(256, 2, &after_nodes, None, Some((&before, &before_nodes)))
                .unwrap();
        let moves = PartitionTable::moves(&before, &before_nodes, &after, &after_nodes);
        // One move per slot whose node differs, in partition and slot order.
        let differing = (0..256)
            .flat_map(|p| (0..2).map(move |s| (p, s)))
            .filter(|&(p, s)| {
                before_nodes[before.row(p)[s] as usize].id
                    != after_nodes[after.row(p)[s] as usize].id
            })
            .count();
        assert_eq!(moves.len(), differing);
        // Every slot `b` held is among them.
        let b_slots = before
            .cells()
            .iter()
            .filter(|&&x| before_nodes[x as usize].id.as_str() == "b")
            .count();
        let from_b = moves
            .iter()
            .filter(|m| m.from.as_ref().is_some_and(|f| f.as_str() == "b"))
            .count();
        assert_eq!(from_b, b_slots);
        assert!(moves
            .windows(2)
            .all(|w| (w[0].partition, w[0].slot) < (w[1].partition, w[1].slot)));
        assert!(moves.iter().all(|m| m.from.as_ref() != Some(&m.to)));
        let rebuilt =
            PartitionTable::apply_moves(&before, &before_nodes, &moves, 2, &after_nodes).unwrap();
        assert_eq!(rebuilt, after);
        // No moves: the same table.
        let same = PartitionTable::apply_moves(&after, &after_nodes, &[], 2, &after_nodes).unwrap();
        assert_eq!(same, after);
    }

    #[test]
    fn moves_that_do_not_fit_are_refused() {
        let ns = nodes(&["a", "b", "c"]);
        let t = PartitionTable::compute(256, 2, &ns, None, None).unwrap();
        let first = ns[t.row(0)[0] as usize].id.clone();
        let second = ns[t.row(0)[1] as usize].id.clone();
        let stale = Move {
            partition: 0,
            slot: 0,
            from: Some(second.clone()),
            to: first.clone(),
        };
        assert_eq!(
            PartitionTable::apply_moves(&t, &ns, &[stale], 2, &ns),
            Err(MovesError::Stale {
                partition: 0,
                slot: 0
            })
        );
        let twice = Move {
            partition: 0,
            slot: 0,
            from: Some(first.clone()),
            to: second,
        };
        assert_eq!(
            PartitionTable::apply_moves(&t, &ns, &[twice], 2, &ns),
            Err(MovesError::Duplicate(0))
        );
        let gone = Move {
            partition: 0,
            slot: 0,
            from: Some(first.clone()),
            to: NodeId::new("z").unwrap(),
        };
        assert_eq!(
            PartitionTable::apply_moves(&t, &ns, &[gone], 2, &ns),
            Err(MovesError::UnknownNode(NodeId::new("z").unwrap()))
        );
        let outside = Move {
            partition: 256,
            slot: 0,
            from: None,
            to: first,
        };
        assert_eq!(
            PartitionTable::apply_moves(&t, &ns, &[outside], 2, &ns),
            Err(MovesError::Shape {
                partitions: 256,
                replicas: 2
            })
        );
    }
}
