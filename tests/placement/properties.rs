//! Property tests of the placement core's promises.

use proptest::prelude::*;

use crate::addresses::address_number;
use ringd::placement::{
    Algorithm, Node, NodeId, Placement, PlacementDiff, RingConfig, Weight, Zone,
};

fn algorithm() -> impl Strategy<Value = Algorithm> {
    prop::sample::select(Algorithm::ALL.to_vec())
}

/// 1–12 nodes with distinct ids, weights 1–4, one of three zones and an
/// address.
fn nodes(max: usize) -> impl Strategy<Value = Vec<Node>> {
    prop::collection::btree_map("[a-z][a-z0-9]{0,7}", (1u64..=4, 0usize..3), 1..=max).prop_map(
        |m| {
            m.into_iter()
                .enumerate()
                .map(|(i, (id, (w, z)))| {
                    Node::new(NodeId::new(id.as_str()).unwrap())
                        .with_address(address_number(i))
                        .with_weight(Weight::new(w).unwrap())
                        .with_zone(Zone::new(["za", "zb", "zc"][z]).unwrap())
                })
                .collect()
        },
    )
}

fn config(algorithm: Algorithm) -> RingConfig {
    let mut c = RingConfig::new(algorithm);
    // A smaller table keeps Maglev cases fast; it is still prime.
    c.table_size = 4099;
    // The fewest partitions keep `table` cases fast.
    c.partitions = 256;
    c
}

fn keys() -> impl Iterator<Item = Vec<u8>> {
    (0..400).map(|i| format!("k{i}").into_bytes())
}

/// Every moved key goes to or from `id`, by the exact diff and by keys.
fn only_involves(before: &Placement, after: &Placement, id: &NodeId, diff: &PlacementDiff) {
    for t in &diff.transfers {
        assert!(
            t.from.as_ref() == Some(id) || t.to.as_ref() == Some(id),
            "transfer {t:?} does not involve {id}"
        );
    }
    for k in keys() {
        let (a, b) = (before.owner(&k), after.owner(&k));
        assert!(
            a == b || a == Some(id) || b == Some(id),
            "key {k:?}: {a:?} -> {b:?}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn insertion_order_never_matters(alg in algorithm(), ns in nodes(12), seed in any::<u64>()) {
        let a = Placement::build(&config(alg), &ns).unwrap();
        let mut shuffled = ns.clone();
        // A deterministic shuffle driven by the generated seed.
        let mut s = seed | 1;
        for i in (1..shuffled.len()).rev() {
            s ^= s << 13; s ^= s >> 7; s ^= s << 17;
            shuffled.swap(i, (s % (i as u64 + 1)) as usize);
        }
        let b = Placement::build(&config(alg), &shuffled).unwrap();
        prop_assert_eq!(a.fingerprint(), b.fingerprint());
        for k in keys() {
            prop_assert_eq!(a.preference_list(&k, 3), b.preference_list(&k, 3));
        }
    }

    #[test]
    fn adding_a_node_moves_keys_only_onto_it(alg in algorithm(), ns in nodes(11)) {
        // ketama and twemproxy re-cut by design: point counts follow the
        // total weight and the server count.
        prop_assume!(alg != Algorithm::Ketama && alg != Algorithm::Twemproxy);
        // maglev is only near-minimal
        prop_assume!(!alg.uses_table_size());
        // Envoy's ring size follows the smallest share, so a newcomer
        // changes every node's entry count and moves keys between old ones.
        prop_assume!(alg != Algorithm::EnvoyRingHash);
        // table moves what its quotas force, which may be between two old
        // nodes whose quotas round differently; table_properties checks it
        // against the least any assignment needs.
        prop_assume!(alg != Algorithm::Table);
        let before = Placement::build(&config(alg), &ns).unwrap();
        let newcomer = Node::new(NodeId::new("zz-new").unwrap()).with_address(address_number(999));
        let mut more = ns.clone();
        more.push(newcomer.clone());
        let after = before.rebuild(&config(alg), &more).unwrap();
        let diff = before.diff(&after);
        only_involves(&before, &after, &newcomer.id, &diff);
        for t in &diff.transfers {
            prop_assert_eq!(t.to.as_ref(), Some(&newcomer.id));
        }
        if alg == Algorithm::Ring {
            // Weight-1 newcomer among total weight W: ideal share 1/(W+1).
            let total: u32 = ns.iter().map(|n| n.weight.get()).sum();
            let ideal = 1.0 / f64::from(total + 1);
            prop_assert!(diff.moved_fraction <= 1.5 * ideal,
                "moved {} > 1.5 × ideal {}", diff.moved_fraction, ideal);
        }
    }

    #[test]
    fn removing_a_node_moves_only_its_keys(alg in algorithm(), ns in nodes(12), pick in any::<prop::sample::Index>()) {
        prop_assume!(alg != Algorithm::Ketama && !alg.uses_table_size());
        prop_assume!(alg != Algorithm::Table && alg != Algorithm::Twemproxy); // as above
        prop_assume!(alg != Algorithm::EnvoyRingHash);
        prop_assume!(ns.len() >= 2);
        let before = Placement::build(&config(alg), &ns).unwrap();
        let gone = ns[pick.index(ns.len())].id.clone();
        let rest: Vec<Node> = ns.iter().filter(|n| n.id != gone).cloned().collect();
        let after = before.rebuild(&config(alg), &rest).unwrap();
        let diff = before.diff(&after);
        only_involves(&before, &after, &gone, &diff);
        for t in &diff.transfers {
            prop_assert_eq!(t.from.as_ref(), Some(&gone));
        }
    }

    #[test]
    fn reweighting_moves_keys_only_to_or_from_that_node(
        alg in prop::sample::select(vec![Algorithm::Ring, Algorithm::Rendezvous, Algorithm::Jump, Algorithm::Haproxy]),
        ns in nodes(12), pick in any::<prop::sample::Index>(), w in 1u64..=6,
    ) {
        let before = Placement::build(&config(alg), &ns).unwrap();
        let i = pick.index(ns.len());
        let mut changed = ns.clone();
        changed[i].weight = Weight::new(w).unwrap();
        let after = before.rebuild(&config(alg), &changed).unwrap();
        only_involves(&before, &after, &ns[i].id, &before.diff(&after));
    }

    #[test]
    fn preference_lists_hold_min_r_n_distinct_nodes(
        alg in algorithm(), ns in nodes(12), r in 1usize..=8, zone_aware in any::<bool>(),
    ) {
        let mut c = config(alg);
        c.zone_aware = zone_aware;
        let p = match Placement::build(&c, &ns) {
            // A table refuses zones too light for the rule (tests of
            // `table` check when); every other build succeeds.
            Err(ringd::placement::PlacementError::ZoneTooLight { .. }) if alg == Algorithm::Table => {
                return Ok(());
            }
            built => built.unwrap(),
        };
        let zones: std::collections::BTreeSet<_> = ns.iter().map(|n| n.zone.clone()).collect();
        for k in keys().take(100) {
            let list = p.preference_list(&k, r);
            prop_assert_eq!(list.len(), r.min(ns.len()));
            let distinct: std::collections::BTreeSet<_> = list.iter().collect();
            prop_assert_eq!(distinct.len(), list.len());
            prop_assert_eq!(Some(list[0]), p.owner(&k));
            if zone_aware {
                let spread = r.min(zones.len());
                let first: std::collections::BTreeSet<_> = list[..spread]
                    .iter()
                    .map(|id| &p.nodes()[p.index_of(id).unwrap()].zone)
                    .collect();
                prop_assert_eq!(first.len(), spread);
            }
        }
    }

    #[test]
    fn ownership_units_sum_to_exactly_the_keyspace(alg in algorithm(), ns in nodes(12)) {
        let o = Placement::build(&config(alg), &ns).unwrap().ownership();
        prop_assert_eq!(o.nodes.iter().map(|n| n.units).sum::<u128>(), o.total_units);
        let expected = match alg {
            Algorithm::Ring | Algorithm::EnvoyRingHash => 1u128 << 64,
            Algorithm::Ketama | Algorithm::Nginx | Algorithm::Haproxy | Algorithm::Twemproxy => {
                1u128 << 32
            }
            Algorithm::Maglev | Algorithm::EnvoyMaglev => 4099,
            Algorithm::Table => 256,
            Algorithm::Jump | Algorithm::Rendezvous => {
                ns.iter().map(|n| u128::from(n.weight.get())).sum()
            }
        };
        prop_assert_eq!(o.total_units, expected);
    }

    #[test]
    fn incremental_rebuild_equals_a_fresh_build(ns in nodes(12), extra in nodes(4)) {
        let c = config(Algorithm::Ring);
        let before = Placement::build(&c, &ns).unwrap();
        let mut next: Vec<Node> = ns.iter().skip(1).cloned().collect();
        next.extend(extra.into_iter().filter(|e| !ns.iter().any(|n| n.id == e.id)));
        let incremental = before.rebuild(&c, &next).unwrap();
        let fresh = Placement::build(&c, &next).unwrap();
        prop_assert_eq!(incremental.fingerprint(), fresh.fingerprint());
    }
}
