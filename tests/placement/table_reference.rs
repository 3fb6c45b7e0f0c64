//! The `table` assignment against an independent computation on small
//! cases: every assignment that meets the same quotas and the zone rule is
//! enumerated, and none moves fewer replicas than the table's.

use std::collections::BTreeSet;

use proptest::prelude::*;
use ringd::placement::table::{PartitionTable, TableError};
use ringd::placement::{Node, NodeId, Weight, Zone};

/// `count` nodes `n0…` with the given weights and zones.
fn nodes(weights: &[u64], zones: &[usize]) -> Vec<Node> {
    weights
        .iter()
        .zip(zones)
        .enumerate()
        .map(|(i, (&w, &z))| {
            Node::new(NodeId::new(format!("n{i}")).unwrap())
                .with_weight(Weight::new(w).unwrap())
                .with_zone(Zone::new(format!("z{z}")).unwrap())
        })
        .collect()
}

/// Zone numbers in zone-name order, as the placement numbers them.
pub(crate) fn zone_numbers(nodes: &[Node]) -> (Vec<u32>, usize) {
    let names: BTreeSet<&Zone> = nodes.iter().map(|n| n.zone.as_ref().unwrap()).collect();
    let names: Vec<&Zone> = names.into_iter().collect();
    let of = nodes
        .iter()
        .map(|n| names.binary_search(&n.zone.as_ref().unwrap()).unwrap() as u32)
        .collect();
    (of, names.len())
}

/// Whether the zone rule makes some zone too light, stated independently:
/// when a partition's `min(rf, nodes)` replicas must reach every zone, a
/// zone whose one replica per partition is more than 110 % of its
/// weighted share of all replicas.
pub(crate) fn too_light(partitions: u32, rf: usize, nodes: &[Node]) -> bool {
    let (of, zones) = zone_numbers(nodes);
    let r = rf.min(nodes.len()) as u128;
    if r < zones as u128 {
        return false;
    }
    let total: u128 = nodes.iter().map(|n| u128::from(n.weight.get())).sum();
    let p = u128::from(partitions);
    (0..zones as u32).any(|z| {
        let w: u128 = nodes
            .iter()
            .zip(&of)
            .filter(|(_, &o)| o == z)
            .map(|(n, _)| u128::from(n.weight.get()))
            .sum();
        // p > 1.1 · (w / total) · r · p, in integers.
        10 * p * total > 11 * w * r * p
    })
}

/// A table computed, or `None` when it is refused as too light for a zone,
/// which the refusal must agree with [`too_light`] about.
pub(crate) fn computed(
    partitions: u32,
    rf: usize,
    nodes: &[Node],
    zone_aware: bool,
    previous: Option<(&PartitionTable, &[Node])>,
) -> Option<PartitionTable> {
    let z = zone_numbers(nodes);
    let zones = zone_aware.then(|| (&z.0[..], z.1));
    let light = zone_aware && too_light(partitions, rf, nodes);
    match PartitionTable::compute(partitions, rf, nodes, zones, previous) {
        Err(TableError::ZoneTooLight { .. }) => {
            assert!(light, "refused as too light: {nodes:?}");
            None
        }
        other => {
            assert!(!light, "not refused though too light: {nodes:?}");
            Some(other.unwrap())
        }
    }
}

/// The zone rule, stated independently: the replicas of a partition sit
/// in min(replicas, zones) distinct zones, and no zone holds more than
/// replicas − zones + 1 of them.
fn zone_rule_holds(row: &[u32], zone_of: &[u32], zones: usize) -> bool {
    let r = row.len();
    let mut per = vec![0usize; zones];
    for &x in row {
        per[zone_of[x as usize] as usize] += 1;
    }
    let distinct = per.iter().filter(|&&c| c > 0).count();
    let max = if r <= zones { 1 } else { r - zones + 1 };
    distinct == r.min(zones) && per.iter().all(|&c| c <= max)
}

/// Each node's number of replica slots.
fn counts(t: &PartitionTable, n: usize) -> Vec<u64> {
    let mut c = vec![0u64; n];
    for &x in t.cells() {
        c[x as usize] += 1;
    }
    c
}

/// Replicas gained: for each partition, its nodes that did not hold it.
fn moved(before: &[BTreeSet<usize>], after: &[BTreeSet<usize>]) -> usize {
    before
        .iter()
        .zip(after)
        .map(|(b, a)| a.difference(b).count())
        .sum()
}

/// Partition rows as sets of node ids' positions in `all`.
fn sets(t: &PartitionTable, nodes: &[Node], all: &[Node]) -> Vec<BTreeSet<usize>> {
    (0..t.partitions() as usize)
        .map(|p| {
            t.row(p)
                .iter()
                .map(|&x| {
                    all.iter()
                        .position(|m| m.id == nodes[x as usize].id)
                        .unwrap()
                })
                .collect()
        })
        .collect()
}

/// The fewest replicas gained by any assignment of `quotas` (per node of
/// `nodes`) under the zone rule, starting from `before` (sets of
/// positions in `all`): exhaustive search with pruning.
fn least_movement(
    partitions: usize,
    replicas: usize,
    quotas: &[u64],
    zone_of: &[u32],
    zones: Option<usize>,
    before: &[BTreeSet<usize>],
    position: &[usize],
) -> Option<usize> {
    let n = quotas.len();
    // Every replica set a partition may have.
    let mut options: Vec<Vec<u32>> = Vec::new();
    let mut pick = Vec::new();
    fn choose(from: u32, n: u32, k: usize, pick: &mut Vec<u32>, out: &mut Vec<Vec<u32>>) {
        if pick.len() == k {
            out.push(pick.clone());
            return;
        }
        for x in from..n {
            pick.push(x);
            choose(x + 1, n, k, pick, out);
            pick.pop();
        }
    }
    choose(0, n as u32, replicas, &mut pick, &mut options);
    if let Some(z) = zones {
        options.retain(|o| zone_rule_holds(o, zone_of, z));
    }
    let mut best = None;
    let mut left = quotas.to_vec();
    #[allow(clippy::too_many_arguments)]
    fn search(
        p: usize,
        partitions: usize,
        cost: usize,
        options: &[Vec<u32>],
        left: &mut [u64],
        before: &[BTreeSet<usize>],
        position: &[usize],
        best: &mut Option<usize>,
    ) {
        if best.is_some_and(|b| cost >= b) {
            return;
        }
        if p == partitions {
            if left.iter().all(|&l| l == 0) {
                *best = Some(cost);
            }
            return;
        }
        // Slots left must match the quotas left.
        let slots = (partitions - p) as u64 * options[0].len() as u64;
        if left.iter().sum::<u64>() != slots {
            return;
        }
        for o in options {
            if o.iter().any(|&x| left[x as usize] == 0) {
                continue;
            }
            let gained = o
                .iter()
                .filter(|&&x| !before[p].contains(&position[x as usize]))
                .count();
            for &x in o {
                left[x as usize] -= 1;
            }
            search(
                p + 1,
                partitions,
                cost + gained,
                options,
                left,
                before,
                position,
                best,
            );
            for &x in o {
                left[x as usize] += 1;
            }
        }
    }
    search(
        0, partitions, 0, &options, &mut left, before, position, &mut best,
    );
    best
}

/// One case: a table for `first` nodes, then one for `second`, the second
/// computed from the first; checks the second against the reference.
fn check(partitions: u32, rf: usize, zone_aware: bool, first: &[Node], second: &[Node]) {
    let mut all: Vec<Node> = first.iter().chain(second).cloned().collect();
    all.sort_by(|a, b| a.id.cmp(&b.id));
    all.dedup_by(|a, b| a.id == b.id);
    let zones_second = zone_numbers(second);
    let zs = zone_aware.then(|| (&zones_second.0[..], zones_second.1));
    let Some(t1) = computed(partitions, rf, first, zone_aware, None) else {
        return;
    };
    let Some(t2) = computed(partitions, rf, second, zone_aware, Some((&t1, first))) else {
        return;
    };
    let r = rf.min(second.len());
    assert_eq!(t2.replicas(), r);
    // Distinct replicas and the zone rule in every partition.
    for p in 0..partitions as usize {
        let row = t2.row(p);
        let distinct: BTreeSet<u32> = row.iter().copied().collect();
        assert_eq!(distinct.len(), r, "partition {p}: {row:?}");
        if zone_aware {
            assert!(
                zone_rule_holds(row, &zones_second.0, zones_second.1),
                "partition {p}: {row:?}"
            );
        }
    }
    // The same table again from the same inputs.
    let again = PartitionTable::compute(partitions, rf, second, zs, Some((&t1, first))).unwrap();
    assert_eq!(again, t2);
    let quotas = counts(&t2, second.len());
    let before = sets(&t1, first, &all);
    let after = sets(&t2, second, &all);
    let position: Vec<usize> = second
        .iter()
        .map(|n| all.iter().position(|m| m.id == n.id).unwrap())
        .collect();
    let least = least_movement(
        partitions as usize,
        r,
        &quotas,
        &zones_second.0,
        zone_aware.then_some(zones_second.1),
        &before,
        &position,
    )
    .expect("the table's own quotas are feasible");
    assert_eq!(
        moved(&before, &after),
        least,
        "{partitions} partitions, rf {rf}, zones {zone_aware}: {first:?} → {second:?}"
    );
}

/// A node as generated: its weight and zone number.
type NodeSpec = (u64, usize);

/// Partitions, replication factor, zone awareness, the first and the
/// second node set.
type Case = (u32, usize, bool, Vec<NodeSpec>, Vec<NodeSpec>);

fn case() -> impl Strategy<Value = Case> {
    let node = (1u64..=4, 0usize..3);
    (
        prop::sample::select(vec![2u32, 4, 8]),
        1usize..=3,
        any::<bool>(),
        prop::collection::vec(node.clone(), 1..=5),
        prop::collection::vec(node, 1..=5),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// A second node set that shares a prefix of ids with the first: nodes
    /// added, removed, re-weighted and moved between zones at once.
    #[test]
    fn movement_is_the_least_any_assignment_of_the_quotas_needs(
        (partitions, rf, zone_aware, a, b) in case()
    ) {
        let (wa, za): (Vec<u64>, Vec<usize>) = a.into_iter().unzip();
        let (wb, zb): (Vec<u64>, Vec<usize>) = b.into_iter().unzip();
        // With 8 partitions, at most 4 nodes keep the search small.
        let cap = if partitions == 8 { 4 } else { 5 };
        let first = nodes(&wa[..wa.len().min(cap)], &za);
        let second = nodes(&wb[..wb.len().min(cap)], &zb);
        check(partitions, rf, zone_aware, &first, &second);
    }
}

#[test]
fn adding_a_node_moves_only_onto_it_and_no_more_than_its_quota() {
    let first = nodes(&[1, 1, 1, 1], &[0, 1, 2, 0]);
    let second = nodes(&[1, 1, 1, 1, 1], &[0, 1, 2, 0, 1]);
    check(4, 2, true, &first, &second);
    let t1 = PartitionTable::compute(256, 3, &first, None, None).unwrap();
    let t2 = PartitionTable::compute(256, 3, &second, None, Some((&t1, &first))).unwrap();
    // 768 slots over 5 nodes: 154, 154, 154, 153, 153.
    assert_eq!(counts(&t2, 5), [154, 154, 154, 153, 153]);
    let all = second.clone();
    let gained = moved(&sets(&t1, &first, &all), &sets(&t2, &second, &all));
    // Only the new node gains: exactly its quota.
    assert_eq!(gained, 153);
}
