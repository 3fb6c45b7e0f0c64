//! Ownership and diff are exact: checked against keys actually hashed.

use std::collections::BTreeMap;

use ringd::placement::{
    Algorithm, DiffBasis, HashFunction, Node, NodeId, Placement, PlacementDiff, RingConfig, Weight,
};

/// A node, with an address for the algorithms that place by it.
fn node(id: &str, weight: u64) -> Node {
    Node::new(NodeId::new(id).unwrap())
        .with_weight(Weight::new(weight).unwrap())
        .with_address(crate::addresses::address_number(id[1..].parse().unwrap()))
}

fn cluster() -> Vec<Node> {
    (0..8).map(|i| node(&format!("n{i}"), 1 + i % 3)).collect()
}

/// Empirical from→to fractions over `count` keys.
fn empirical(a: &Placement, b: &Placement, count: u32) -> BTreeMap<(String, String), f64> {
    let mut m = BTreeMap::new();
    for i in 0..count {
        let k = format!("probe-{i}");
        let (x, y) = (a.owner(k.as_bytes()), b.owner(k.as_bytes()));
        if x != y {
            let key = (
                x.map_or("-".into(), |n| n.to_string()),
                y.map_or("-".into(), |n| n.to_string()),
            );
            *m.entry(key).or_insert(0.0) += 1.0 / f64::from(count);
        }
    }
    m
}

fn modelled(d: &PlacementDiff) -> BTreeMap<(String, String), f64> {
    d.transfers
        .iter()
        .map(|t| {
            (
                (
                    t.from.as_ref().map_or("-".into(), |n| n.to_string()),
                    t.to.as_ref().map_or("-".into(), |n| n.to_string()),
                ),
                t.fraction,
            )
        })
        .collect()
}

/// Changes exercised for every algorithm: add, remove a middle node,
/// re-weight, and several at once.
fn changes() -> Vec<(&'static str, Vec<Node>)> {
    let base = cluster();
    let mut add = base.clone();
    add.push(node("n9", 2));
    let remove: Vec<Node> = base
        .iter()
        .filter(|n| n.id.as_str() != "n3")
        .cloned()
        .collect();
    let mut reweight = base.clone();
    reweight[5].weight = Weight::new(7).unwrap();
    let mut several = remove.clone();
    several[0].weight = Weight::new(3).unwrap();
    several.push(node("n10", 1));
    vec![
        ("add", add),
        ("remove", remove),
        ("reweight", reweight),
        ("several", several),
    ]
}

#[test]
fn model_diffs_match_hashed_keys_for_jump_and_rendezvous() {
    for alg in [Algorithm::Jump, Algorithm::Rendezvous] {
        let c = RingConfig::new(alg);
        let before = Placement::build(&c, &cluster()).unwrap();
        for (name, nodes) in changes() {
            let after = before.rebuild(&c, &nodes).unwrap();
            let d = before.diff(&after);
            assert!(matches!(
                d.basis,
                DiffBasis::JumpModel | DiffBasis::RendezvousModel
            ));
            let seen = empirical(&before, &after, 200_000);
            let model = modelled(&d);
            let keys: std::collections::BTreeSet<_> = seen.keys().chain(model.keys()).collect();
            for k in keys {
                let (m, e) = (
                    model.get(k).copied().unwrap_or(0.0),
                    seen.get(k).copied().unwrap_or(0.0),
                );
                // 200k keys: a fraction near 0.1 has a standard error of 0.0007.
                assert!(
                    (m - e).abs() < 0.004,
                    "{alg} {name} {k:?}: model {m} vs keys {e}"
                );
            }
            let moved: f64 = seen.values().sum();
            assert!((d.moved_fraction - moved).abs() < 0.005, "{alg} {name}");
        }
    }
}

#[test]
fn moved_ranges_predict_exactly_which_keys_move() {
    for alg in [
        Algorithm::Ring,
        Algorithm::Ketama,
        Algorithm::Maglev,
        Algorithm::Nginx,
        Algorithm::Twemproxy,
    ] {
        let c = RingConfig::new(alg);
        let before = Placement::build(&c, &cluster()).unwrap();
        for (name, nodes) in changes() {
            let after = before.rebuild(&c, &nodes).unwrap();
            let d = before.diff(&after);
            assert!(!d.moved_ranges.is_empty());
            let total: f64 = d.transfers.iter().map(|t| t.fraction).sum();
            assert!((total - d.moved_fraction).abs() < 1e-12);
            for i in 0..20_000 {
                let k = format!("probe-{i}");
                let h = before.key_hash(k.as_bytes());
                let pos = if alg == Algorithm::Maglev {
                    h % c.table_size
                } else {
                    h
                };
                let range = d
                    .moved_ranges
                    .iter()
                    .find(|r| r.first <= pos && pos <= r.last);
                let (x, y) = (before.owner(k.as_bytes()), after.owner(k.as_bytes()));
                match range {
                    Some(r) => {
                        assert_eq!((r.from.as_ref(), r.to.as_ref()), (x, y), "{alg} {name} {k}");
                        assert_ne!(x, y);
                    }
                    None => assert_eq!(x, y, "{alg} {name} {k}: moved outside every range"),
                }
            }
            // Gains and losses balance and match the transfers.
            let gained: f64 = d.nodes.iter().map(|n| n.gained).sum();
            let lost: f64 = d.nodes.iter().map(|n| n.lost).sum();
            assert!((gained - lost).abs() < 1e-12 && (gained - d.moved_fraction).abs() < 1e-12);
        }
    }
}

#[test]
fn ownership_matches_hashed_keys() {
    for alg in Algorithm::ALL {
        let mut config = RingConfig::new(alg);
        // twemproxy's default, its 32-bit FNV-1a, spreads keys that differ
        // in their last bytes unevenly, so shares of the hash space are not
        // shares of these probes; md5 spreads them evenly.
        if alg == Algorithm::Twemproxy {
            config.hash = HashFunction::Md5;
        }
        let p = Placement::build(&config, &cluster()).unwrap();
        let o = p.ownership();
        let mut counts: BTreeMap<String, f64> = BTreeMap::new();
        let n = 200_000;
        for i in 0..n {
            let owner = p.owner(format!("probe-{i}").as_bytes()).unwrap();
            *counts.entry(owner.to_string()).or_insert(0.0) += 1.0 / f64::from(n);
        }
        for share in &o.nodes {
            let seen = counts.get(share.id.as_str()).copied().unwrap_or(0.0);
            assert!(
                (share.share - seen).abs() < 0.004,
                "{alg} {}: {} vs {seen}",
                share.id,
                share.share
            );
        }
        let ratio_max = o.nodes.iter().map(|n| n.ratio).fold(0.0, f64::max);
        assert_eq!(o.max_over_mean, ratio_max);
    }
}

#[test]
fn diff_across_algorithms_is_sampled_and_says_so() {
    let a = Placement::build(&RingConfig::new(Algorithm::Ring), &cluster()).unwrap();
    let b = Placement::build(&RingConfig::new(Algorithm::Maglev), &cluster()).unwrap();
    let d = a.diff(&b);
    assert_eq!(d.basis, DiffBasis::Sampled);
    assert!(d.moved_ranges.is_empty());
    // Two unrelated placements of the same nodes agree on about Σ share².
    assert!(
        d.moved_fraction > 0.7 && d.moved_fraction < 0.95,
        "{}",
        d.moved_fraction
    );
}

#[test]
fn diff_from_and_to_an_empty_ring() {
    for alg in Algorithm::ALL {
        let c = RingConfig::new(alg);
        let empty = Placement::build(&c, &[]).unwrap();
        let full = empty.rebuild(&c, &cluster()).unwrap();
        let d = empty.diff(&full);
        assert!(
            (d.moved_fraction - 1.0).abs() < 1e-9,
            "{alg}: {}",
            d.moved_fraction
        );
        assert!(d.transfers.iter().all(|t| t.from.is_none()));
        let back = full.diff(&empty);
        assert!(back.transfers.iter().all(|t| t.to.is_none()));
        assert_eq!(empty.owner(b"k"), None);
        assert!(empty.preference_list(b"k", 3).is_empty());
    }
}
