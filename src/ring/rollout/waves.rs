//! `table` rollouts: the partitions whose rows change, moved in waves.
//!
//! The direct change's table is computed as for any change; the rollout
//! then takes the changed partitions a wave at a time, each wave's rows
//! jumping from the old row to the new one whole (moving one slot of a row
//! at a time could list a node twice in it). Between the waves the ring
//! holds every node of both sides, active, so every row names a node it
//! has; nodes that leave leave in the last wave. A wave takes partitions
//! in order, first fit, while no node would gain or lose more slots than
//! `max_moves_per_node_per_step` and the wave stays within its share of
//! the moves (`steps`) or of the keyspace (`max_moved_fraction_per_step`).

use std::collections::{BTreeMap, HashMap};

use super::policy::{RolloutPolicy, MAX_STEPS};
use super::step::{policy_ops, Deltas, Plan, PlanStep};
use super::RolloutError;
use crate::placement::{NodeId, Placement};
use crate::ring::{ChangeOp, ExactLayout, NodeRecord, Proposal, Snapshot, TableBytes};

/// A partition's rows before and after, by id.
struct Moved {
    partition: usize,
    /// Slot moves per node (off and onto it).
    load: HashMap<NodeId, u32>,
    primary: bool,
}

fn rows(p: &Placement) -> Vec<Vec<NodeId>> {
    let t = p.partition_table().expect("a table placement");
    (0..t.partitions() as usize)
        .map(|i| {
            t.row(i)
                .iter()
                .map(|&x| p.nodes()[x as usize].id.clone())
                .collect()
        })
        .collect()
}

/// Plans a `table` rollout.
pub(super) fn plan(
    base: &Snapshot,
    placement: &Placement,
    direct: &Proposal,
    deltas: &Deltas,
    policy: &RolloutPolicy,
) -> Result<Plan, RolloutError> {
    let before = rows(placement);
    let after = rows(&direct.placement);
    let replicas = after.first().map_or(0, Vec::len);
    if before.len() != after.len() || before.first().map_or(0, Vec::len) != replicas {
        if policy.steps.is_some_and(|k| k > 1) {
            return Err(RolloutError::SingleStepOnly(
                "the change alters the table's shape (partitions, or replicas per partition as the active nodes cross replication_factor), which cannot be taken in waves".into(),
            ));
        }
        return Ok(Plan {
            steps: vec![PlanStep {
                ops: direct.snapshot.change.ops.clone(),
                layout: None,
                summary: "the whole change".into(),
                proposal: direct.clone(),
            }],
            direct: direct.clone(),
            notes: vec!["the table changes shape: one step".into()],
        });
    }
    let moved: Vec<Moved> = before
        .iter()
        .zip(&after)
        .enumerate()
        .filter(|(_, (b, a))| b != a)
        .map(|(partition, (b, a))| {
            let mut load: HashMap<NodeId, u32> = HashMap::new();
            for (x, y) in b.iter().zip(a).filter(|(x, y)| x != y) {
                *load.entry(x.clone()).or_default() += 1;
                *load.entry(y.clone()).or_default() += 1;
            }
            Moved {
                partition,
                load,
                primary: b[0] != a[0],
            }
        })
        .collect();
    let partitions = before.len();
    // Each wave's budget: its share of the partitions, or of the primaries.
    let per_wave = policy
        .steps
        .map(|k| moved.len().div_ceil(k as usize).max(1));
    let primaries = policy
        .max_moved_fraction_per_step
        .map(|f| ((f * partitions as f64).floor() as usize).max(1));
    let cap = policy.max_moves_per_node_per_step;
    struct Wave {
        load: HashMap<NodeId, u32>,
        parts: Vec<usize>,
        primaries: usize,
    }
    let mut waves: Vec<Wave> = Vec::new();
    for m in &moved {
        let fits = |w: &Wave| {
            per_wave.is_none_or(|n| w.parts.len() < n)
                && primaries.is_none_or(|n| !m.primary || w.primaries < n)
                && cap.is_none_or(|c| {
                    w.parts.is_empty()
                        || m.load
                            .iter()
                            .all(|(id, l)| w.load.get(id).copied().unwrap_or(0) + l <= c)
                })
        };
        let i = match waves.iter().position(fits) {
            Some(i) => i,
            None => {
                waves.push(Wave {
                    load: HashMap::new(),
                    parts: Vec::new(),
                    primaries: 0,
                });
                waves.len() - 1
            }
        };
        let w = &mut waves[i];
        for (id, l) in &m.load {
            *w.load.entry(id.clone()).or_default() += l;
        }
        w.parts.push(m.partition);
        w.primaries += usize::from(m.primary);
    }
    if waves.is_empty() {
        // Only records changed (an address, labels): one step.
        waves.push(Wave {
            load: HashMap::new(),
            parts: Vec::new(),
            primaries: 0,
        });
    }
    let k = waves.len() as u32;
    if k == 1 {
        return Ok(Plan {
            steps: vec![PlanStep {
                ops: direct.snapshot.change.ops.clone(),
                layout: None,
                summary: format!("{} partitions in one wave", moved.len()),
                proposal: direct.clone(),
            }],
            direct: direct.clone(),
            notes: vec![format!(
                "table: {} partitions change rows, in one wave",
                moved.len()
            )],
        });
    }
    if k > MAX_STEPS {
        return Err(RolloutError::TooManySteps {
            asked: k,
            most: MAX_STEPS,
            why: "the table's moves need more waves than that under this policy: raise max_moves_per_node_per_step or max_moved_fraction_per_step".into(),
        });
    }
    // Between the waves: every node of both sides, active.
    let middle: BTreeMap<NodeId, NodeRecord> = deltas
        .iter()
        .map(|(id, (b, a))| {
            let keep = match (b, a) {
                (_, Some(a)) if a.state == crate::placement::NodeState::Active => a.clone(),
                (Some(b), _) => b.clone(),
                (None, Some(a)) => a.clone(),
                (None, None) => unreachable!("a delta has a side"),
            };
            (id.clone(), keep)
        })
        .collect();
    let mut mid_nodes: BTreeMap<NodeId, NodeRecord> = base
        .nodes
        .iter()
        .map(|n| (n.id.clone(), n.clone()))
        .collect();
    mid_nodes.extend(middle.clone());
    let mid_nodes: Vec<NodeRecord> = mid_nodes.into_values().collect();
    let mid_placement_nodes: Vec<crate::placement::Node> =
        mid_nodes.iter().map(NodeRecord::to_node).collect();
    let mut wave_of = vec![u32::MAX; partitions];
    for (i, w) in waves.iter().enumerate() {
        for &p in &w.parts {
            wave_of[p] = i as u32;
        }
    }
    let role = direct.snapshot.change.role;
    let now = direct.snapshot.created_at;
    let mut snapshot = base.clone();
    let mut current = placement.clone();
    let mut steps = Vec::with_capacity(k as usize);
    for i in 0..k {
        let last = i + 1 == k;
        let (ops, layout) = if last {
            let ops: Vec<ChangeOp> = deltas
                .iter()
                .filter(|(id, (_, a))| middle.get(*id) != a.as_ref())
                .map(|(id, (_, a))| match a {
                    Some(node) => ChangeOp::Upsert { node: node.clone() },
                    None => ChangeOp::Remove { id: id.clone() },
                })
                .collect();
            let table = direct.snapshot.table.clone().expect("a table proposal");
            (ops, ExactLayout::Table(table))
        } else {
            let mut ops: Vec<ChangeOp> = if i == 0 {
                middle
                    .iter()
                    .filter(|(id, rec)| base.nodes.iter().find(|n| &n.id == *id) != Some(*rec))
                    .map(|(_, rec)| ChangeOp::Upsert { node: rec.clone() })
                    .collect()
            } else {
                Vec::new()
            };
            if i == 0 {
                ops.extend(policy_ops(direct));
            }
            let chosen = (0..partitions).map(|p| {
                if wave_of[p] <= i {
                    &after[p][..]
                } else {
                    &before[p][..]
                }
            });
            let body = Placement::table_body_of_rows(
                &direct.snapshot.config,
                &mid_placement_nodes,
                replicas,
                chosen,
            )?;
            (ops, ExactLayout::Table(TableBytes::from(body)))
        };
        let proposal = snapshot
            .propose_exact(&current, ops.clone(), Some(&layout), None, role, now)?
            .ok_or(RolloutError::EmptyStep(i + 1))?;
        let w = &waves[i as usize];
        let summary = format!(
            "wave {} of {k}: {} partitions, {} primaries",
            i + 1,
            w.parts.len(),
            w.primaries
        );
        snapshot = proposal.snapshot.clone();
        current = proposal.placement.clone();
        steps.push(PlanStep {
            ops,
            layout: Some(layout),
            summary,
            proposal,
        });
    }
    Ok(Plan {
        steps,
        direct: direct.clone(),
        notes: vec![format!(
            "table: {} partitions change rows, in {k} waves",
            moved.len()
        )],
    })
}
