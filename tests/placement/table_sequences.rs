//! `table` rings through sequences of changes, each computed from the
//! table before it as the server computes them: every step either gets a
//! table that meets the spec's rules (`table_rules`) or is refused exactly
//! when check 7 of 2.4 says so, and then the next step starts from the
//! last table computed.

use proptest::prelude::*;
use ringd::placement::{Algorithm, Node, NodeId, Placement, RingConfig, Weight, Zone};

use crate::table_rules::{assert_refused_as_predicted, assert_valid, refusal};

fn node(id: usize, weight: u64, zone: usize) -> Node {
    Node::new(NodeId::new(format!("n{id:02}")).unwrap())
        .with_weight(Weight::new(weight).unwrap())
        .with_zone(Zone::new(format!("z{zone}")).unwrap())
}

fn config(partitions: u32, rf: usize, zone_aware: bool) -> RingConfig {
    let mut c = RingConfig::new(Algorithm::Table);
    c.partitions = partitions;
    c.replication_factor = rf as u32;
    c.zone_aware = zone_aware;
    c
}

/// One change of a step: indices pick a node modulo the set's size.
#[derive(Debug, Clone)]
enum Change {
    Add { weight: u64, zone: usize },
    Remove(usize),
    Reweight(usize, u64),
    MoveZone(usize, usize),
}

fn change(zones: usize) -> impl Strategy<Value = Change> {
    prop_oneof![
        (1u64..=6, 0..zones).prop_map(|(weight, zone)| Change::Add { weight, zone }),
        (0usize..64).prop_map(Change::Remove),
        (0usize..64, 1u64..=6).prop_map(|(i, w)| Change::Reweight(i, w)),
        (0usize..64, 0..zones).prop_map(|(i, z)| Change::MoveZone(i, z)),
    ]
}

/// Partitions, replication factor, zone awareness, the first nodes
/// `(weight, zone)` and the steps, each one to three changes at once.
type Case = (u32, usize, bool, Vec<(u64, usize)>, Vec<Vec<Change>>);

fn case() -> impl Strategy<Value = Case> {
    (1usize..=4).prop_flat_map(|zones| {
        (
            prop::sample::select(vec![256u32, 512, 1024, 2048, 4096]),
            1usize..=5,
            any::<bool>(),
            prop::collection::vec((1u64..=6, 0..zones), 3..=14),
            prop::collection::vec(prop::collection::vec(change(zones), 1..=3), 1..=6),
        )
    })
}

/// Applies one step's changes; `next_id` numbers added nodes.
fn changed(nodes: &[Node], changes: &[Change], next_id: &mut usize) -> Vec<Node> {
    let mut next = nodes.to_vec();
    for c in changes {
        let len = next.len();
        match *c {
            Change::Add { weight, zone } => {
                next.push(node(*next_id, weight, zone));
                *next_id += 1;
            }
            Change::Remove(i) if len > 1 => {
                next.remove(i % len);
            }
            Change::Remove(_) => {}
            Change::Reweight(i, w) => next[i % len].weight = Weight::new(w).unwrap(),
            Change::MoveZone(i, z) => {
                next[i % len].zone = Some(Zone::new(format!("z{z}")).unwrap())
            }
        }
    }
    next.sort_by(|a, b| a.id.cmp(&b.id));
    next
}

/// The step from `previous` (or from nothing) to `nodes`: `Some` with the
/// placement if it was computed, checked against the rules either way.
fn step(config: &RingConfig, previous: Option<&Placement>, nodes: &[Node]) -> Option<Placement> {
    let computed = match previous {
        Some(p) => p.rebuild(config, nodes),
        None => Placement::build(config, nodes),
    };
    let rf = config.replication_factor as usize;
    match (computed, refusal(rf, config.zone_aware, nodes)) {
        (Ok(p), None) => {
            let table = p.partition_table().expect("a table placement");
            assert_valid(table, config.partitions, rf, config.zone_aware, p.nodes());
            // The same inputs give the same table.
            let again = match previous {
                Some(q) => q.rebuild(config, nodes),
                None => Placement::build(config, nodes),
            };
            assert_eq!(again.unwrap().fingerprint(), p.fingerprint());
            Some(p)
        }
        (Ok(_), Some(predicted)) => panic!("computed, though {predicted:?} is too light"),
        (Err(e), Some(predicted)) => {
            assert_refused_as_predicted(&e, &predicted);
            None
        }
        (Err(e), None) => panic!("refused with {e:?}, though check 7 holds"),
    }
}

/// Rings where some zone must hold two replicas of a row and the zones'
/// weights are uneven: where the greedy passes get stuck.
fn tight_case() -> impl Strategy<Value = Case> {
    (2usize..=3).prop_flat_map(|zones| {
        (
            prop::sample::select(vec![512u32, 1024, 2048, 4096]),
            zones + 1..=5,
            Just(true),
            prop::collection::vec((1u64..=3, 0..zones), 6..=14),
            prop::collection::vec(prop::collection::vec(change(zones), 1..=2), 1..=6),
        )
    })
}

/// Runs a case: its first nodes, then each step from the last table
/// computed.
fn run((partitions, rf, zone_aware, first, steps): Case) {
    let config = config(partitions, rf, zone_aware);
    let mut nodes: Vec<Node> = first
        .iter()
        .enumerate()
        .map(|(i, &(w, z))| node(i, w, z))
        .collect();
    let mut next_id = nodes.len();
    let mut current = step(&config, None, &nodes);
    for changes in &steps {
        let next = changed(&nodes, changes, &mut next_id);
        // A refused step changes nothing: the next one starts from the
        // last table computed, over the nodes it was computed for.
        if let Some(p) = step(&config, current.as_ref(), &next) {
            current = Some(p);
            nodes = next;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn every_step_meets_the_rules_or_is_refused_as_the_spec_predicts(case in case()) {
        run(case);
    }

    /// In about one step in twelve of these (when written) the greedy
    /// passes get stuck and the augmenting paths complete the table.
    #[test]
    fn under_uneven_zones_every_step_meets_the_rules(case in tight_case()) {
        run(case);
    }
}
