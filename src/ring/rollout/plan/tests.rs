//! The planner against the rules of `docs/rollouts.md`: exact ramps and
//! weights per step, movement only onto or off the changing nodes, the
//! last step equal to the direct change, and the refusals.

use std::collections::BTreeMap;

use time::OffsetDateTime;

use super::*;
use crate::placement::{Algorithm, NodeId, NodeState, Placement, RingConfig, Weight, RAMP_FULL};
use crate::ring::rollout::*;
use crate::ring::{ChangeOp, NodeRecord, RequestedOp, RingName, Role, Snapshot};

fn id(s: &str) -> NodeId {
    NodeId::new(s).unwrap()
}

fn record(name: &str, weight: u64) -> NodeRecord {
    NodeRecord {
        weight: Weight::new(weight).unwrap(),
        ..NodeRecord::new(id(name))
    }
}

fn now() -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap()
}

/// A ring of `config` holding `nodes`, at version 2.
fn ring(config: RingConfig, nodes: Vec<NodeRecord>) -> (Snapshot, Placement) {
    let (first, p) =
        Snapshot::first(RingName::new("r").unwrap(), config, Role::Admin, now()).unwrap();
    let ops: Vec<ChangeOp> = nodes
        .into_iter()
        .map(|node| ChangeOp::Upsert { node })
        .collect();
    let next = first
        .propose(&p, ops, None, Role::Admin, now())
        .unwrap()
        .unwrap();
    (next.snapshot, next.placement)
}

fn ten(algorithm: Algorithm) -> (Snapshot, Placement) {
    let mut config = RingConfig::new(algorithm);
    config.partitions = 256;
    ring(
        config,
        (0..10).map(|i| record(&format!("n-{i}"), 1)).collect(),
    )
}

fn upsert(r: NodeRecord) -> Vec<RequestedOp> {
    vec![ChangeOp::Upsert { node: r }.into()]
}

fn policy(json: &str, algorithm: Algorithm) -> RolloutPolicy {
    RolloutPolicy::from_spec(&serde_json::from_str(json).unwrap(), algorithm).unwrap()
}

fn plan_of(
    base: &(Snapshot, Placement),
    ops: Vec<RequestedOp>,
    json: &str,
) -> Result<Plan, RolloutError> {
    let algorithm = base.0.config.algorithm;
    Plan::compute(
        &base.0,
        &base.1,
        ops,
        &policy(json, algorithm),
        Role::Admin,
        now(),
    )
}

/// The ramp every step gives node `name` (`None`: absent or not active).
fn ramps(plan: &Plan, name: &str) -> Vec<Option<(u32, u32)>> {
    plan.steps
        .iter()
        .map(|s| {
            s.proposal
                .snapshot
                .nodes
                .iter()
                .find(|n| n.id.as_str() == name && n.state == NodeState::Active)
                .map(|n| (n.weight.get(), n.ramp.get()))
        })
        .collect()
}

fn keys() -> impl Iterator<Item = Vec<u8>> {
    (0..20_000).map(|i| format!("key-{i}").into_bytes())
}

/// Every key that changes owner between consecutive steps moves onto
/// (or off) `node`.
fn moves_only_with(base: &Placement, plan: &Plan, node: &str) {
    let mut before = base.clone();
    for (i, step) in plan.steps.iter().enumerate() {
        let after = &step.proposal.placement;
        for k in keys() {
            let (was, now) = (before.owner(&k), after.owner(&k));
            if was != now {
                assert!(
                    was.map(NodeId::as_str) == Some(node) || now.map(NodeId::as_str) == Some(node),
                    "step {}: {was:?} -> {now:?}",
                    i + 1
                );
            }
        }
        before = after.clone();
    }
}

#[test]
fn adding_a_node_in_five_steps_ramps_it_by_fifths() {
    for algorithm in [Algorithm::Ring, Algorithm::Rendezvous, Algorithm::Maglev] {
        let base = ten(algorithm);
        let plan = plan_of(&base, upsert(record("n-new", 1)), r#"{"steps": 5}"#).unwrap();
        // ⌈i × 65,536 / 5⌉, then all in.
        let expected: Vec<Option<(u32, u32)>> = [13_108, 26_215, 39_322, 52_429, RAMP_FULL]
            .iter()
            .map(|&r| Some((1, r)))
            .collect();
        assert_eq!(ramps(&plan, "n-new"), expected, "{}", algorithm.name());
        assert_eq!(plan.steps.len(), 5);
        let last = &plan.steps[4].proposal;
        assert_eq!(last.snapshot.fingerprint, plan.direct.snapshot.fingerprint);
        assert_eq!(last.snapshot.nodes, plan.direct.snapshot.nodes);
        assert_eq!(plan.steps[0].summary, "n-new at 20.0% of weight 1");
        assert_eq!(plan.steps[4].summary, "n-new weight 1");
        // Each step's ops: only the new node's record.
        for s in &plan.steps {
            assert!(
                matches!(&s.ops[..], [ChangeOp::Upsert { node }] if node.id.as_str() == "n-new")
            );
        }
        if algorithm != Algorithm::Maglev {
            moves_only_with(&base.1, &plan, "n-new");
        }
    }
}

#[test]
fn the_steps_move_what_the_direct_change_moves() {
    // rendezvous: the model's fractions telescope to the direct one.
    let base = ten(Algorithm::Rendezvous);
    let plan = plan_of(&base, upsert(record("n-new", 1)), r#"{"steps": 5}"#).unwrap();
    assert!((plan.total_moved() - plan.direct.diff.moved_fraction).abs() < 1e-9);
    // ring: the exact arcs, within the rounding of a point per step.
    let base = ten(Algorithm::Ring);
    let plan = plan_of(&base, upsert(record("n-new", 1)), r#"{"steps": 5}"#).unwrap();
    let (total, direct) = (plan.total_moved(), plan.direct.diff.moved_fraction);
    assert!((total - direct).abs() < 1e-12, "{total} vs {direct}");
}

#[test]
fn removing_a_node_ramps_it_down_then_removes_it() {
    let base = ten(Algorithm::Ring);
    let ops = vec![ChangeOp::Remove { id: id("n-3") }.into()];
    let plan = plan_of(&base, ops, r#"{"steps": 4}"#).unwrap();
    assert_eq!(
        ramps(&plan, "n-3"),
        [
            Some((1, 49_152)),
            Some((1, 32_768)),
            Some((1, 16_384)),
            None
        ]
    );
    assert_eq!(plan.steps[3].ops, [ChangeOp::Remove { id: id("n-3") }]);
    moves_only_with(&base.1, &plan, "n-3");
}

#[test]
fn a_weight_change_ramps_the_difference() {
    let base = ten(Algorithm::Ring);
    // 1 → 3 in two steps: weight 3 at ⌈2/3 × 65,536⌉, then all in.
    let up = plan_of(&base, upsert(record("n-0", 3)), r#"{"steps": 2}"#).unwrap();
    assert_eq!(ramps(&up, "n-0"), [Some((3, 43_691)), Some((3, RAMP_FULL))]);
    // 3 → 1 from a ring where it is 3: weight 3 at 2/3, then weight 1.
    let base3 = up.direct.clone();
    let base3 = (base3.snapshot, base3.placement);
    let down = plan_of(&base3, upsert(record("n-0", 1)), r#"{"steps": 2}"#).unwrap();
    assert_eq!(
        ramps(&down, "n-0"),
        [Some((3, 43_691)), Some((1, RAMP_FULL))]
    );
}

#[test]
fn a_moved_fraction_cap_picks_the_fewest_steps_that_keep_it() {
    let base = ring(
        RingConfig::new(Algorithm::Ring),
        (0..4).map(|i| record(&format!("n-{i}"), 1)).collect(),
    );
    let plan = plan_of(
        &base,
        upsert(record("n-new", 1)),
        r#"{"max_moved_fraction_per_step": 0.05}"#,
    )
    .unwrap();
    let k = plan.steps.len();
    assert!(plan.max_step_moved() <= 0.05, "{}", plan.max_step_moved());
    // One step fewer would not keep it.
    let fewer = with_steps(&base, k as u32 - 1);
    assert!(fewer.max_step_moved() > 0.05);
    assert!(k >= 4, "{k} steps for {}", plan.direct.diff.moved_fraction);
}

#[test]
fn jump_takes_one_step_and_refuses_more() {
    let base = ten(Algorithm::Jump);
    let err = plan_of(&base, upsert(record("n-new", 1)), r#"{"steps": 3}"#).unwrap_err();
    assert!(
        matches!(&err, RolloutError::SingleStepOnly(why) if why.starts_with("jump rings take no steps")),
        "{err}"
    );
    let one = plan_of(
        &base,
        upsert(record("n-new", 1)),
        r#"{"max_moved_fraction_per_step": 0.01}"#,
    )
    .unwrap();
    assert_eq!(one.steps.len(), 1);
    assert_eq!(
        one.steps[0].proposal.snapshot.fingerprint,
        one.direct.snapshot.fingerprint
    );
}

#[test]
fn ketama_steps_whole_weights_and_says_so() {
    let base = ten(Algorithm::Ketama);
    let err = plan_of(&base, upsert(record("n-new", 1)), r#"{"steps": 2}"#).unwrap_err();
    assert!(
        matches!(
            err,
            RolloutError::TooManySteps {
                asked: 2,
                most: 1,
                ..
            }
        ),
        "{err}"
    );
    let plan = plan_of(&base, upsert(record("n-new", 100)), r#"{"steps": 4}"#).unwrap();
    let weights: Vec<Option<(u32, u32)>> = ramps(&plan, "n-new");
    assert_eq!(weights, [25, 50, 75, 100].map(|w| Some((w, RAMP_FULL))));
    assert!(plan.notes[0].starts_with("ketama: weights step in whole units"));
}

#[test]
fn nginx_steps_whole_weights_and_a_new_address_is_one_step() {
    let at = |name: &str, weight: u64, address: &str| NodeRecord {
        address: Some(address.into()),
        ..record(name, weight)
    };
    let nodes = (0..10).map(|i| at(&format!("n-{i}"), 1, &format!("10.0.0.{i}:11211")));
    let base = ring(RingConfig::new(Algorithm::Nginx), nodes.collect());
    let added = upsert(at("n-new", 100, "10.0.1.1:11211"));
    let plan = plan_of(&base, added, r#"{"steps": 4}"#).unwrap();
    let weights: Vec<Option<(u32, u32)>> = ramps(&plan, "n-new");
    assert_eq!(weights, [25, 50, 75, 100].map(|w| Some((w, RAMP_FULL))));
    assert!(plan.notes[0].starts_with("nginx: weights step in whole units"));
    // hash_key places nothing under nginx; a new address moves every key.
    let relabel = NodeRecord {
        hash_key: Some(crate::placement::HashKey::new("elsewhere").unwrap()),
        ..at("n-1", 1, "10.0.0.1:11211")
    };
    let err = plan_of(&base, upsert(relabel), r#"{"steps": 2}"#).unwrap_err();
    assert!(!matches!(err, RolloutError::SingleStepOnly(_)), "{err}");
    let moved = at("n-1", 1, "10.0.9.9:11211");
    let err = plan_of(&base, upsert(moved), r#"{"steps": 2}"#).unwrap_err();
    assert!(
        matches!(&err, RolloutError::SingleStepOnly(why) if why.contains("a new address")),
        "{err}"
    );
}

#[test]
fn a_new_config_or_label_is_one_step() {
    let base = ten(Algorithm::Ring);
    let relabel = NodeRecord {
        hash_key: Some(crate::placement::HashKey::new("elsewhere").unwrap()),
        ..record("n-1", 1)
    };
    let err = plan_of(&base, upsert(relabel), r#"{"steps": 2}"#).unwrap_err();
    assert!(
        matches!(&err, RolloutError::SingleStepOnly(why) if why.contains("`n-1`")),
        "{err}"
    );
    let nothing = plan_of(&base, upsert(record("n-1", 1)), r#"{"steps": 2}"#).unwrap_err();
    assert_eq!(nothing, RolloutError::NoChange);
}

#[test]
fn table_waves_respect_the_per_node_cap_and_end_at_the_direct_table() {
    let base = ten(Algorithm::Table);
    let plan = plan_of(
        &base,
        upsert(record("n-new", 1)),
        r#"{"max_moves_per_node_per_step": 20}"#,
    )
    .unwrap();
    let k = plan.steps.len();
    assert!(k > 1);
    let last = &plan.steps[k - 1].proposal;
    assert_eq!(last.snapshot.fingerprint, plan.direct.snapshot.fingerprint);
    assert_eq!(last.snapshot.table, plan.direct.snapshot.table);
    // Every wave moves at most 20 slots onto or off any one node, and
    // every row is the old one or the new one.
    let rows = |p: &Placement| -> Vec<Vec<String>> {
        let t = p.partition_table().unwrap();
        (0..t.partitions() as usize)
            .map(|i| {
                t.row(i)
                    .iter()
                    .map(|&x| p.nodes()[x as usize].id.to_string())
                    .collect()
            })
            .collect()
    };
    let (old, new) = (rows(&base.1), rows(&plan.direct.placement));
    let mut prev = old.clone();
    for s in &plan.steps {
        let cur = rows(&s.proposal.placement);
        let mut load: BTreeMap<String, u32> = BTreeMap::new();
        for (p, (a, b)) in prev.iter().zip(&cur).enumerate() {
            assert!(b == &old[p] || b == &new[p], "partition {p}");
            for (x, y) in a.iter().zip(b).filter(|(x, y)| x != y) {
                *load.entry(x.clone()).or_default() += 1;
                *load.entry(y.clone()).or_default() += 1;
            }
        }
        assert!(load.values().all(|&l| l <= 20), "{load:?}");
        prev = cur;
    }
    // The new node is in from the first wave; the ops after it are empty
    // until the last, which has none to make either.
    assert!(
        matches!(&plan.steps[0].ops[..], [ChangeOp::Upsert { node }] if node.id.as_str() == "n-new")
    );
    assert!(plan.steps[1..].iter().all(|s| s.ops.is_empty()));
}

/// The ramp plan of a single added node `n-new` (weight 1) in `k` steps.
fn with_steps(base: &(Snapshot, Placement), k: u32) -> Plan {
    let node = NodeRecord::new(NodeId::new("n-new").unwrap());
    let direct = base
        .0
        .propose(
            &base.1,
            vec![ChangeOp::Upsert { node }],
            None,
            Role::Admin,
            base.0.created_at,
        )
        .unwrap()
        .unwrap();
    let deltas = deltas(&base.0, &direct.snapshot);
    let steps = simulate(
        &base.0,
        &base.1,
        ramp_steps(&deltas, k),
        &[],
        Role::Admin,
        base.0.created_at,
    )
    .unwrap();
    Plan {
        steps,
        direct,
        notes: Vec::new(),
    }
}
