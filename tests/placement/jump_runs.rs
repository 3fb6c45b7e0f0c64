//! `jump` works on runs of buckets owned by one node; the specification
//! defines it bucket by bucket. These properties rebuild random histories
//! of heavy and light nodes (holes included) and check every result against
//! a bucket-by-bucket reference written from `docs/placement-spec.md`:
//! bucket orders (5.4.3), encodings and fingerprints (9), lookups (5.4.2),
//! preference lists (6) and the jump diff model (8.5), bit for bit.

use std::collections::BTreeMap;

use proptest::prelude::*;
use ringd::placement::hash::fmix64;
use ringd::placement::jump::{jump_hash, next_order, REHASH_INCREMENT};
use ringd::placement::{
    Algorithm, Fingerprint, Node, NodeId, NodeState, Placement, PlacementError, RingConfig, Weight,
    Zone,
};

const POOL: usize = 5;

/// What one pool node is in one version of the history.
#[derive(Debug, Clone, Copy)]
enum Slot {
    Absent,
    Active(u64),
    Draining(u64),
}

/// Weights up to the maximum, or small ones that fragment the order more.
fn weight() -> impl Strategy<Value = u64> {
    prop_oneof![1u64..=1_000_000, 1u64..=40]
}

fn slot() -> impl Strategy<Value = Slot> {
    prop_oneof![
        1 => Just(Slot::Absent),
        4 => weight().prop_map(Slot::Active),
        1 => weight().prop_map(Slot::Draining),
    ]
}

/// One to three versions of a five-node pool.
fn history() -> impl Strategy<Value = Vec<[Slot; POOL]>> {
    prop::collection::vec(prop::array::uniform5(slot()), 1..=3)
}

fn node_set(version: &[Slot; POOL]) -> Vec<Node> {
    let mut out = Vec::new();
    for (i, s) in version.iter().enumerate() {
        let (w, state) = match *s {
            Slot::Absent => continue,
            Slot::Active(w) => (w, NodeState::Active),
            Slot::Draining(w) => (w, NodeState::Draining),
        };
        out.push(
            Node::new(NodeId::new(format!("node-{i}")).unwrap())
                .with_weight(Weight::new(w).unwrap())
                .with_state(state)
                .with_zone(Zone::new(["za", "zb", "zc"][i % 3]).unwrap()),
        );
    }
    out
}

fn config(zone_aware: bool) -> RingConfig {
    let mut c = RingConfig::new(Algorithm::Jump);
    c.zone_aware = zone_aware;
    c
}

/// The placements of a history, each rebuilt from the one before, with
/// their bucket orders as node indices (`None` = hole). Each order must be
/// the one section 5.4.3 derives; a step whose bucket table would pass the
/// cap must be refused exactly when that order is too long, and is skipped.
fn placements(history: &[[Slot; POOL]], zone_aware: bool) -> Vec<(Placement, Vec<Option<u32>>)> {
    let config = config(zone_aware);
    let first = Placement::build(&config, &node_set(&history[0])).unwrap();
    let mut order = first.bucket_order().unwrap();
    let mut out = vec![(first, Vec::new())];
    for version in &history[1..] {
        let nodes = node_set(version);
        let previous = &out.last().unwrap().0;
        let expected = next_order(&order, &nodes);
        match previous.rebuild(&config, &nodes) {
            Ok(p) => {
                order = p.bucket_order().unwrap();
                assert!(order == expected, "5.4.3 order");
                out.push((p, Vec::new()));
            }
            Err(PlacementError::TooManyPoints { total, .. }) => {
                assert_eq!(total, expected.len() as u64);
                assert!(total > 1 << 23);
            }
            Err(e) => panic!("unexpected {e}"),
        }
    }
    for (p, indices) in &mut out {
        let mut last: Option<(&NodeId, u32)> = None;
        let order = p.bucket_order().unwrap();
        *indices = order
            .iter()
            .map(|s| {
                let id = s.as_ref()?;
                match last {
                    Some((l, i)) if l == id => Some(i),
                    _ => {
                        let i = p.index_of(id).unwrap() as u32;
                        last = Some((id, i));
                        Some(i)
                    }
                }
            })
            .collect();
    }
    out
}

/// Section 5.4.2, bucket by bucket.
fn lookup(order: &[Option<u32>], mut h: u64) -> usize {
    loop {
        let b = jump_hash(h, order.len() as u32) as usize;
        if order[b].is_some() {
            return b;
        }
        h = fmix64(h.wrapping_add(REHASH_INCREMENT));
    }
}

/// Sections 6.1 and 6.2: walk every bucket from the owner's, wrapping.
fn preference(p: &Placement, order: &[Option<u32>], key: &[u8], r: usize) -> Vec<usize> {
    if order.is_empty() {
        return Vec::new();
    }
    let start = lookup(order, p.key_hash(key));
    let walk = (0..order.len()).filter_map(|k| order[(start + k) % order.len()]);
    let r = r.min(p.nodes().len());
    let mut zones: Vec<&str> = p
        .nodes()
        .iter()
        .map(|n| n.zone.as_ref().unwrap().as_str())
        .collect();
    let zone_of: Vec<&str> = zones.clone();
    zones.sort_unstable();
    zones.dedup();
    let spread = if p.config().zone_aware {
        r.min(zones.len())
    } else {
        0
    };
    let (mut picked, mut rest, mut used) = (Vec::new(), Vec::new(), Vec::new());
    for n in walk.map(|n| n as usize) {
        if picked.contains(&n) || rest.contains(&n) {
            continue;
        }
        if picked.len() < spread && !used.contains(&zone_of[n]) {
            used.push(zone_of[n]);
            picked.push(n);
        } else if rest.len() < r - spread {
            rest.push(n);
        }
        if picked.len() == spread && rest.len() == r - spread {
            break;
        }
    }
    picked.extend(rest);
    picked
}

/// Section 9's jump body from the bucket order.
fn body(order: &[Option<u32>]) -> Vec<u8> {
    let mut out = (order.len() as u32).to_le_bytes().to_vec();
    for s in order {
        out.extend_from_slice(&s.unwrap_or(u32::MAX).to_le_bytes());
    }
    out
}

/// Section 8.5 bucket by bucket: each flow's mass by (old id, new id),
/// accumulated in the order the model defines.
fn model(
    (from, old): &(Placement, Vec<Option<u32>>),
    (to, new): &(Placement, Vec<Option<u32>>),
) -> BTreeMap<(Option<String>, Option<String>), f64> {
    let id = |p: &Placement, i: Option<u32>| i.map(|i| p.nodes()[i as usize].id.to_string());
    let mut flows: BTreeMap<(Option<String>, Option<String>), f64> = BTreeMap::new();
    let mut flow = |a: Option<String>, b: Option<String>, mass: f64| {
        if mass > 0.0 && a != b {
            *flows.entry((a, b)).or_insert(0.0) += mass;
        }
    };
    let per_node = |t: &[Option<u32>]| {
        let mut by: BTreeMap<u32, f64> = BTreeMap::new();
        for i in t.iter().flatten() {
            *by.entry(*i).or_insert(0.0) += 1.0;
        }
        by
    };
    let (n, m) = (old.len(), new.len());
    if n == 0 || m == 0 {
        let (ob, nb) = (per_node(old), per_node(new));
        let (lo, ln) = (ob.values().sum::<f64>(), nb.values().sum::<f64>());
        for (&a, &c) in &ob {
            flow(id(from, Some(a)), None, c / lo);
        }
        for (&b, &c) in &nb {
            flow(None, id(to, Some(b)), c / ln);
        }
        return flows;
    }
    let live_old = old.iter().flatten().count() as f64;
    let live_new = new.iter().flatten().count() as f64;
    let (diag, cross, lo) = (1.0 / n.max(m) as f64, 1.0 / (n as f64 * m as f64), n.min(m));
    let (ob, nb) = if m >= n { (0..n, n..m) } else { (m..n, 0..m) };
    let count = |t: &[Option<u32>], r: std::ops::Range<usize>| {
        let mut by: BTreeMap<Option<u32>, f64> = BTreeMap::new();
        for s in &t[r] {
            *by.entry(*s).or_insert(0.0) += 1.0;
        }
        by
    };
    let (oc, nc) = (count(old, ob), count(new, nb));
    let mut q: BTreeMap<(Option<u32>, Option<u32>), f64> = BTreeMap::new();
    for i in 0..lo {
        *q.entry((old[i], new[i])).or_insert(0.0) += diag;
    }
    for (a, ca) in &oc {
        for (b, cb) in &nc {
            *q.entry((*a, *b)).or_insert(0.0) += ca * cb * cross;
        }
    }
    let z = 1.0 - q.get(&(None, None)).copied().unwrap_or(0.0);
    let (mut to_hole, mut from_hole) = (BTreeMap::new(), BTreeMap::new());
    for (&(a, b), &mass) in &q {
        match (a, b) {
            (Some(_), Some(_)) => flow(id(from, a), id(to, b), mass / z),
            (Some(a), None) => *to_hole.entry(a).or_insert(0.0) += mass,
            (None, Some(b)) => *from_hole.entry(b).or_insert(0.0) += mass,
            (None, None) => {}
        }
    }
    let (os, ns) = (per_node(old), per_node(new));
    for (&a, &mass) in &to_hole {
        for (&b, &c) in &ns {
            flow(id(from, Some(a)), id(to, Some(b)), mass / z * c / live_new);
        }
    }
    for (&b, &mass) in &from_hole {
        for (&a, &c) in &os {
            flow(id(from, Some(a)), id(to, Some(b)), mass / z * c / live_old);
        }
    }
    flows
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn preference_lists_equal_the_bucket_by_bucket_walk(
        history in history(),
        zone_aware in any::<bool>(),
        keys in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..24), 6),
        r in 1usize..=7,
    ) {
        for (p, order) in placements(&history, zone_aware) {
            for key in &keys {
                let expected = preference(&p, &order, key, r);
                prop_assert_eq!(p.preference_indices(key, r), expected.clone());
                prop_assert_eq!(p.owner_index(key), expected.first().copied());
            }
        }
    }

    #[test]
    fn encodings_and_diffs_equal_the_bucket_by_bucket_definitions(
        history in history(),
        zone_aware in any::<bool>(),
    ) {
        let ps = placements(&history, zone_aware);
        for (p, order) in &ps {
            let encoding = p.encode();
            let expected = body(order);
            prop_assert_eq!(&encoding[encoding.len() - expected.len()..], &expected[..]);
            prop_assert_eq!(p.fingerprint(), Fingerprint::of(&encoding));
        }
        for pair in ps.windows(2) {
            let diff = pair[0].0.diff(&pair[1].0);
            let expected = model(&pair[0], &pair[1]);
            let got: BTreeMap<_, _> = diff
                .transfers
                .iter()
                .map(|t| ((t.from.as_ref().map(|i| i.to_string()), t.to.as_ref().map(|i| i.to_string())), t.fraction.to_bits()))
                .collect();
            let want: BTreeMap<_, _> = expected.iter().map(|(k, v)| (k.clone(), v.to_bits())).collect();
            prop_assert_eq!(got, want);
        }
    }
}
