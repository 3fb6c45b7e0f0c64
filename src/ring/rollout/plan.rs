//! Turning one change into a rollout's steps, each an ordinary version.
//!
//! The steps are computed, then simulated one after another from the base
//! snapshot, so a plan carries every step's would-be snapshot, placement
//! and movement: the dry run shows exactly what the rollout will commit.
//! How a step is made depends on the algorithm (see `docs/rollouts.md`):
//! `ring`, `rendezvous` and `maglev` ramp the changing nodes, `ketama`
//! steps their weights, `table` moves partitions in waves and `jump`
//! takes one step.

use std::collections::{BTreeMap, BTreeSet};

use super::policy::{RolloutPolicy, MAX_STEPS};
use super::step::{policy_ops, Deltas, Plan, PlanStep};
use super::RolloutError;
use crate::placement::{Algorithm, NodeId, Placement, Ramp, RingConfig, Weight, RAMP_FULL};
use crate::ring::{ChangeOp, NodeRecord, Proposal, RequestedOp, Role, Snapshot};

fn capacity(r: &Option<NodeRecord>) -> u64 {
    match r {
        Some(r) if r.is_active_record() => r.ramp.scale(r.weight.get()),
        _ => 0,
    }
}

impl NodeRecord {
    fn is_active_record(&self) -> bool {
        self.state == crate::placement::NodeState::Active
    }
}

impl Plan {
    /// Plans `ops` on `base` (whose placement is `placement`) under
    /// `policy`.
    pub fn compute(
        base: &Snapshot,
        placement: &Placement,
        ops: Vec<RequestedOp>,
        policy: &RolloutPolicy,
        role: Role,
        now: time::OffsetDateTime,
    ) -> Result<Self, RolloutError> {
        let direct = base
            .propose(placement, ops, None, role, now)?
            .ok_or(RolloutError::NoChange)?;
        let target = &direct.snapshot;
        let algorithm = target.config.algorithm;
        let mut notes = Vec::new();
        let single = |why: String| -> Result<(), RolloutError> {
            match policy.steps {
                Some(k) if k > 1 => Err(RolloutError::SingleStepOnly(why)),
                _ => Ok(()),
            }
        };
        let deltas = deltas(base, target);
        let one_step = |notes: Vec<String>| -> Result<Self, RolloutError> {
            let step = PlanStep {
                ops: direct.snapshot.change.ops.clone(),
                layout: None,
                summary: "the whole change".into(),
                proposal: direct.clone(),
            };
            Ok(Self {
                steps: vec![step],
                direct: direct.clone(),
                notes,
            })
        };
        if target.config != base.config {
            single("the change sets a new placement config, which cannot be taken in steps: make it a change of its own".into())?;
            return one_step(vec!["a new placement config is applied in one step".into()]);
        }
        if let Some(id) = relabelled(&deltas, &target.config) {
            let what = if target.config.algorithm.places_by_address() {
                "address"
            } else {
                "hash_key"
            };
            single(format!("the change gives node `{id}` a new {what} or zone, which moves all of its keys at once: make it a change of its own"))?;
            return one_step(vec![format!("node `{id}` changes label or zone: one step")]);
        }
        match algorithm {
            Algorithm::Jump => {
                single("jump rings take no steps: jump hash gives a node all of its buckets or none, and bucket counts are whole weights, so the change is made in one step".into())?;
                notes.push("jump: one step (jump hash has no partial nodes)".into());
                one_step(notes)
            }
            Algorithm::Table => super::waves::plan(base, placement, &direct, &deltas, policy),
            Algorithm::Nginx => whole_unit_steps(base, placement, direct, policy, &deltas, notes, "nginx: weights step in whole units, since nginx takes whole weights and ringd gives it no ramp; each unit is 160 points of its own, so unchanged servers keep theirs", "nginx weights step in whole units, so this change has at most that many distinct steps; give the nodes larger weights for finer ones"),
            Algorithm::Ketama => whole_unit_steps(base, placement, direct, policy, &deltas, notes, "ketama: weights step in whole units, and libketama clients know no ramp; since every server's point count depends on the total weight, each step also re-cuts the unchanged servers and moves some keys between them", "ketama weights step in whole units, so this change has at most that many distinct steps; give the nodes larger weights (say 100 per unit) for finer ones"),
            Algorithm::Twemproxy => whole_unit_steps(base, placement, direct, policy, &deltas, notes, "twemproxy: weights step in whole units, as nutcracker takes whole weights and ringd gives it no ramp; since every server's point count depends on the total weight, each step also re-cuts the unchanged servers and moves some keys between them", "twemproxy weights step in whole units, so this change has at most that many distinct steps; give the nodes larger weights for finer ones"),
            Algorithm::Haproxy => whole_unit_steps(base, placement, direct, policy, &deltas, notes, "haproxy: weights step in whole units (HAProxy takes integer weights up to 256, 16 points each, and no ramp); a server's points depend only on its id and weight, so each step moves keys only to or from the changing servers", "haproxy weights step in whole units, so this change has at most that many distinct steps; give the nodes larger weights for finer ones"),
            Algorithm::Ring | Algorithm::Rendezvous | Algorithm::Maglev | Algorithm::EnvoyRingHash | Algorithm::EnvoyMaglev => {
                if algorithm.uses_table_size() {
                    notes.push("maglev: ramped weights refill the whole table, so each step also moves some slots between unchanged nodes: about 6% more than the change at once over 5 steps, 10% over 10 (docs/benchmarks.md)".into());
                }
                if algorithm == Algorithm::EnvoyMaglev {
                    notes.push("envoy_maglev: the ramped weights are the EDS weights Envoy is sent, so ringd paces its slow start".into());
                }
                if algorithm == Algorithm::EnvoyRingHash {
                    notes.push("envoy_ring_hash: the ramped weights are the EDS weights Envoy and gRPC are sent, so ringd paces their slow start; each step re-cuts every endpoint's entries (the ring's scale follows the smallest share), so it also moves some keys between unchanged nodes".into());
                }
                let make = |k: u32| Ok(ramp_steps(&deltas, k));
                search(base, placement, direct, policy, notes, MAX_STEPS, make, "")
            }
        }
    }
}

/// Every node the change touches, with its record before and after.
fn deltas(base: &Snapshot, target: &Snapshot) -> Deltas {
    let mut out: Deltas = BTreeMap::new();
    for n in &base.nodes {
        out.insert(n.id.clone(), (Some(n.clone()), None));
    }
    for n in &target.nodes {
        out.entry(n.id.clone()).or_insert((None, None)).1 = Some(n.clone());
    }
    out.retain(|_, (b, a)| b != a);
    out
}

/// A node whose label, or zone in a zone-aware ring, the change alters
/// while it is active on both sides: its keys all move at once.
fn relabelled<'a>(deltas: &'a Deltas, config: &RingConfig) -> Option<&'a NodeId> {
    let by_address = config.algorithm.places_by_address();
    deltas.iter().find_map(|(id, (b, a))| match (b, a) {
        (Some(b), Some(a)) if capacity(&Some(b.clone())) > 0 && capacity(&Some(a.clone())) > 0 => {
            let moved = if by_address {
                b.address != a.address
            } else {
                b.to_node().label() != a.to_node().label()
            } || (config.zone_aware && b.zone != a.zone);
            moved.then_some(id)
        }
        _ => None,
    })
}

fn weight_of(r: &Option<NodeRecord>) -> u64 {
    match r {
        Some(r) if r.is_active_record() => r.weight.get().into(),
        _ => 0,
    }
}

/// `(a·(k−i) + b·i) / k`, rounded up, in integers.
fn between(a: u64, b: u64, i: u32, k: u32) -> u64 {
    let (a, b, i, k) = (u128::from(a), u128::from(b), u128::from(i), u128::from(k));
    ((a * (k - i) + b * i).div_ceil(k)) as u64
}

/// The record a changing node has in the middle of a rollout: the record
/// it ends with if it stays active, else the one it starts with; active,
/// at `weight`, ramped to `ramp`.
fn middle(b: &Option<NodeRecord>, a: &Option<NodeRecord>, weight: u64, ramp: u32) -> NodeRecord {
    let keep = match (b, a) {
        (_, Some(a)) if a.is_active_record() => a,
        (Some(b), _) => b,
        (None, Some(a)) => a,
        (None, None) => unreachable!("a delta has a side"),
    };
    NodeRecord {
        weight: Weight::new(weight).expect("between two valid weights"),
        state: crate::placement::NodeState::Active,
        ramp: Ramp::new(ramp.into()).expect("clamped to 1 ..= 65,536"),
        ..keep.clone()
    }
}

/// Per step, every changing node's record (`None`: absent).
type Stages = Vec<BTreeMap<NodeId, Option<NodeRecord>>>;

/// `ring`, `rendezvous`, `maglev`: each changing node's `weight × ramp`
/// goes in `k` equal steps from where it starts to where it ends; the
/// weight is the larger of the two, the ramp the rest.
fn ramp_steps(deltas: &Deltas, k: u32) -> Stages {
    (1..=k)
        .map(|i| {
            deltas
                .iter()
                .map(|(id, (b, a))| {
                    let (c0, c1) = (capacity(b), capacity(a));
                    let rec = if i == k || c0 == c1 {
                        a.clone()
                    } else {
                        let w = weight_of(b).max(weight_of(a));
                        let c = between(c0, c1, i, k);
                        let ramp = c.div_ceil(w).clamp(1, RAMP_FULL.into()) as u32;
                        Some(middle(b, a, w, ramp))
                    };
                    (id.clone(), rec)
                })
                .collect()
        })
        .collect()
}

/// `ketama`: each changing node's weight goes in `k` steps of whole units.
fn ketama_steps(deltas: &Deltas, k: u32) -> Result<Stages, RolloutError> {
    Ok((1..=k)
        .map(|i| {
            deltas
                .iter()
                .map(|(id, (b, a))| {
                    let (w0, w1) = (weight_of(b), weight_of(a));
                    let rec = if i == k || w0 == w1 {
                        a.clone()
                    } else {
                        let w = between(w0, w1, i, k).max(1);
                        Some(middle(b, a, w, RAMP_FULL))
                    };
                    (id.clone(), rec)
                })
                .collect()
        })
        .collect())
}

/// The ops that take the changing nodes from `prev` to `next`.
fn ops_between(
    prev: &BTreeMap<NodeId, Option<NodeRecord>>,
    next: &BTreeMap<NodeId, Option<NodeRecord>>,
) -> Vec<ChangeOp> {
    next.iter()
        .filter(|(id, rec)| prev.get(*id) != Some(rec))
        .map(|(id, rec)| match rec {
            Some(node) => ChangeOp::Upsert { node: node.clone() },
            None => ChangeOp::Remove { id: id.clone() },
        })
        .collect()
}

/// What a step does to the changing nodes, in a few words.
fn summary(next: &BTreeMap<NodeId, Option<NodeRecord>>, ops: &[ChangeOp]) -> String {
    let touched: BTreeSet<&NodeId> = ops
        .iter()
        .filter_map(|op| match op {
            ChangeOp::Upsert { node } => Some(&node.id),
            ChangeOp::Remove { id } => Some(id),
            ChangeOp::SetConfig { .. } => None,
        })
        .collect();
    let mut parts: Vec<String> = touched
        .iter()
        .take(3)
        .map(|id| match next.get(*id).and_then(Option::as_ref) {
            None => format!("{id} removed"),
            Some(r) if !r.is_active_record() => format!("{id} {}", state_name(r)),
            Some(r) if r.ramp.is_full() => format!("{id} weight {}", r.weight.get()),
            Some(r) => format!(
                "{id} at {:.1}% of weight {}",
                f64::from(r.ramp.get()) * 100.0 / f64::from(RAMP_FULL),
                r.weight.get()
            ),
        })
        .collect();
    if touched.len() > 3 {
        parts.push(format!("{} more nodes", touched.len() - 3));
    }
    parts.join(", ")
}

fn state_name(r: &NodeRecord) -> &'static str {
    match r.state {
        crate::placement::NodeState::Active => "active",
        crate::placement::NodeState::Draining => "draining",
        crate::placement::NodeState::Joining => "joining",
    }
}

/// Simulates `stages` from `base`: each step's ops applied to the
/// version before. The first step also carries the change's ops that
/// touch no node (a membership policy); they alter no placement.
pub(super) fn simulate(
    base: &Snapshot,
    placement: &Placement,
    stages: Stages,
    extra: &[ChangeOp],
    role: Role,
    now: time::OffsetDateTime,
) -> Result<Vec<PlanStep>, RolloutError> {
    let mut prev_stage: BTreeMap<NodeId, Option<NodeRecord>> = BTreeMap::new();
    for n in &base.nodes {
        prev_stage.insert(n.id.clone(), Some(n.clone()));
    }
    let mut snapshot = base.clone();
    let mut current = placement.clone();
    let mut steps = Vec::with_capacity(stages.len());
    for (i, stage) in stages.into_iter().enumerate() {
        let mut ops = ops_between(&prev_stage, &stage);
        if i == 0 {
            ops.extend(extra.iter().cloned());
        }
        let summary = summary(&stage, &ops);
        let proposal = snapshot
            .propose_exact(&current, ops.clone(), None, None, role, now)?
            .ok_or(RolloutError::EmptyStep(i as u32 + 1))?;
        prev_stage.extend(stage);
        snapshot = proposal.snapshot.clone();
        current = proposal.placement.clone();
        steps.push(PlanStep {
            ops,
            layout: None,
            summary,
            proposal,
        });
    }
    Ok(steps)
}

/// A plan for the algorithms whose weights step only in whole units
/// (`ketama`, `nginx`): at most as many steps as the largest weight change.
#[allow(clippy::too_many_arguments)]
fn whole_unit_steps(
    base: &Snapshot,
    placement: &Placement,
    direct: Proposal,
    policy: &RolloutPolicy,
    deltas: &Deltas,
    mut notes: Vec<String>,
    note: &str,
    too_fine: &str,
) -> Result<Plan, RolloutError> {
    notes.push(note.into());
    let most = deltas
        .values()
        .map(|(b, a)| weight_of(b).abs_diff(weight_of(a)))
        .max()
        .unwrap_or(1)
        .max(1);
    let steps = most.min(u64::from(MAX_STEPS)) as u32;
    search(
        base,
        placement,
        direct,
        policy,
        notes,
        steps,
        |k| ketama_steps(deltas, k),
        too_fine,
    )
}

/// The plan with the policy's step count, or the fewest steps (up to
/// `most`) that keep every step within its moved fraction.
#[allow(clippy::too_many_arguments)]
fn search(
    base: &Snapshot,
    placement: &Placement,
    direct: Proposal,
    policy: &RolloutPolicy,
    notes: Vec<String>,
    most: u32,
    make: impl Fn(u32) -> Result<Stages, RolloutError>,
    too_fine: &str,
) -> Result<Plan, RolloutError> {
    let deltas_extra = policy_ops(&direct);
    let role = direct.snapshot.change.role;
    let now = direct.snapshot.created_at;
    let build = |k: u32| -> Result<Plan, RolloutError> {
        let steps = simulate(base, placement, make(k)?, &deltas_extra, role, now)?;
        Ok(Plan {
            steps,
            direct: direct.clone(),
            notes: notes.clone(),
        })
    };
    if let Some(k) = policy.steps {
        if k > most {
            return Err(RolloutError::TooManySteps {
                asked: k,
                most,
                why: too_fine.to_owned(),
            });
        }
        return build(k);
    }
    let f = policy
        .max_moved_fraction_per_step
        .expect("a policy without steps has a fraction (or is table's)");
    let first = ((direct.diff.moved_fraction / f).ceil() as u32).clamp(1, most);
    for k in first..=most {
        let plan = build(k)?;
        if plan.max_step_moved() <= f + 1e-12 {
            return Ok(plan);
        }
    }
    Err(RolloutError::FractionUnreachable {
        fraction: f,
        most,
        direct: direct.diff.moved_fraction,
    })
}

#[cfg(test)]
mod tests;
